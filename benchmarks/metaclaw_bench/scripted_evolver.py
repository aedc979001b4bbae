"""The scripted evolver of the offline benchmarks: a local stand-in for the evolver model that writes a
candidate skill from a correction's text alone, by fixed rules (never a model; its figures measure
the plugin's evolution and retrieval plumbing, not an evolver's quality)."""

from __future__ import annotations

import json
import re
from typing import Any

from metaclaw_plugin.text import strip_marks

REPLY = "Done. I completed the task in the workspace; tell me if anything should change."
EVOLVER_NOTE = (
    "The evolver is scripted (not a model): it writes each skill from the correction text in the evolver "
    "request alone; the kind comes from the scenario's annotation of the lesson when it has one, else from "
    "a fixed rule on the correction text."
)
KIND_RULE = (
    "convention when the correction states a standing rule about all work (a quantifier such as every/all/any/"
    "always/never/each/whenever/from now on, or 'our ... format/convention/records/rule', together with "
    "must/should/always/never/need to/has to); procedure otherwise"
)
_QUANT = re.compile(
    r"\b(?:every|all|any|always|never|each|whenever|from now on|anything|everything|our (?:\w+ ){0,2}"
    r"(?:format|convention|records?|rules?|standard|policy))\b",
    re.I,
)
_MODAL = re.compile(r"\b(?:must|should|always|never|need to|needs to|has to|have to|is to|are to)\b", re.I)
_LEAD = re.compile(
    r"^\s*(?:feedback on your previous answer|no|nope|wrong|incorrect|not quite|that's not right|that is not right|that's wrong|that is wrong)\b[\s,.:;!\-—]*",
    re.I,
)
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an the and or of to in on for with by at as is are be was were it its this that these those you "
        "your we our us i me my please when what which who how do does did not no nope so if then than from "
        "into also just only every all any always never each must should need needs has have had can will "
        "would there here they them their",
    )
)


# The scripted evolver -----------------------------------------------------------------------------------
def kind_by_rule(text: str) -> tuple[str, str]:
    """The kind a correction teaches, by the stated rule (:data:`KIND_RULE`), and the reason."""
    q, m = _QUANT.search(text), _MODAL.search(text)
    if q and m:
        return "convention", f"states a standing rule ({q.group(0)!r} with {m.group(0)!r})"
    return "procedure", "no standing rule about all work (no quantifier with a modal)"


def _clean(text: str) -> str:
    return _LEAD.sub("", " ".join(text.split())).strip()


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z`\"'(])", text) if s.strip()]


def skill_from_correction(correction: str, kind: str, kind_reason: str) -> dict[str, Any]:
    """The evolver's candidate for one correction, from its text alone: the description is its first
    sentence of at least eight words (the rule or technique it states), the name the first four content
    words of that sentence, the body every sentence of the correction as a bullet list."""
    text = _clean(correction)
    sents = _sentences(text) or [text]
    first = next((x for x in sents if len(x.split()) >= 8), text).rstrip(".")
    words = [w for w in re.findall(r"[a-z][a-z0-9]+", strip_marks(first).lower()) if w not in _STOP and len(w) > 2]
    seen: list[str] = []
    for w in words:
        if w not in seen:
            seen.append(w)
        if len(seen) == 4:
            break
    name = "-".join(seen) or "lesson"
    title = " ".join(w.capitalize() for w in seen) or "Lesson"
    body = f"# {title}\n\n" + "\n".join(f"- {x}" for x in sents)
    return {
        "action": "create",
        "name": name,
        "description": first[:300],
        "body": body,
        "category": "conventions" if kind == "convention" else "general",
        "kind": kind,
        "kind_reason": kind_reason,
    }


def unmarked_skill(correction: str, written: dict[str, str] | None) -> dict[str, Any]:
    """A lesson stored as an ordinary skill: name, description and body only (no kind, no category), as the
    scenario writes it for the lesson, else as :func:`skill_from_correction` writes it from the correction."""
    if written is None:
        cand = skill_from_correction(correction, "procedure", "")
        return {k: cand[k] for k in ("action", "name", "description", "body")}
    return {"action": "create", **{k: str(written[k]).strip() for k in ("name", "description", "body")}}


class ScriptedEvolver:
    """The evolver (and nothing else) of a local scripted server: for each evolver request, the
    correction is the first user message after a failed response (``evidence_after_response``), else
    the instruction of a failed turn; one ``create`` candidate is written from it. ``kinds`` maps a
    correction (its first words) to the scenario's annotated kind; without a match, :func:`kind_by_rule`."""

    def __init__(self, kinds: dict[str, str] | None = None, written: dict[str, dict[str, str]] | None = None):
        """``written``: for an unmarked run, the correction -> the skill as another evolver (or a person) would
        store it (``name``, ``description``, ``body``; no kind). A correction without one gets the rule-written
        skill with its kind left out. None: the kind is written (the annotation, else the rule)."""
        self.kinds = dict(kinds or {})
        self.written = written
        self.calls: list[dict[str, Any]] = []

    def correction_of(self, doc: dict[str, Any]) -> str | None:
        turns = doc.get("failed_turns") or []
        for t in turns:
            for m in t.get("evidence_after_response") or []:
                if m.get("role") == "user" and str(m.get("content") or "").strip():
                    return str(m["content"])
        for t in turns:
            if str(t.get("instruction") or "").strip():
                return str(t["instruction"])
        return None

    def __call__(self, body: dict[str, Any]) -> Any:
        system = str(body["messages"][0].get("content", ""))
        if "security reviewer" in system:
            # The model review of new skills passes them: this harness measures reach, not screening
            # (the deterministic screen still runs; tests/learning/test_screening_corpus.py covers both layers).
            return json.dumps({"verdict": "safe", "reasons": ["scripted reviewer"]})
        if "skill engineer" not in system:
            return REPLY
        user = str(body["messages"][1]["content"])
        doc = json.loads(user.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
        correction = self.correction_of(doc)
        if not correction:
            self.calls.append({"correction": None, "skills": []})
            return json.dumps({"skills": []})
        if self.written is not None:
            cand = unmarked_skill(correction, next((v for k, v in self.written.items() if _same(k, correction)), None))
            self.calls.append({"correction": correction, "skills": [cand], "kind_source": "unmarked"})
            return json.dumps({"skills": [cand]})
        annotated = next((v for k, v in self.kinds.items() if _same(k, correction)), None)
        if annotated is not None:
            kind, reason = annotated, "the scenario's annotation of the lesson"
        else:
            kind, reason = kind_by_rule(correction)
        cand = skill_from_correction(correction, kind, reason)
        self.calls.append(
            {"correction": correction, "skills": [cand], "kind_source": "annotation" if annotated else "rule"}
        )
        return json.dumps({"skills": [cand]})


def _key(text: str) -> str:
    return " ".join(_clean(text).lower().split())


def _same(a: str, b: str) -> bool:
    """The same correction, as written in the scenario and as it reached the evolver (redacted, cut)."""
    ka, kb = _key(a)[:60], _key(b)[:60]
    return bool(ka) and ka == kb


def mode_settings(mode: str) -> dict[str, Any]:
    """``keyword``, ``keyword:0.05`` (a min_score), ``embedding`` or ``hybrid``; a ``+rerank`` suffix turns the second
    ranking stage on (``retrieval.rerank: auto``), which is off otherwise."""
    base = mode.removesuffix("+rerank")
    name, _, arg = base.partition(":")
    out: dict[str, Any] = {"mode": name, "rerank": "off" if base == mode else "auto"}
    if arg:
        out["min_score" if name == "keyword" else "min_similarity"] = float(arg)
    return out


def scripted_evolution(url: str, promotion: str = "auto") -> dict[str, Any]:
    """The ``evolution`` settings that point the plugin's evolver at a scripted upstream at ``url``."""
    return {
        "model": "openai/evolver",
        "api_base": url,
        "api_key": "x",
        "promotion": promotion,
        "dedup_mode": "lexical",
        "retries": 0,
        "backoff": 0.01,
    }
