"""The red-team corpus through the real `skills add` and the evolution path, and the model review layer."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from screening_corpus import Item, benign, malicious

from metaclaw_plugin import Settings
from metaclaw_plugin.cli import main
from metaclaw_plugin.learning.evolution import SkillEvolver, SupportTurn
from metaclaw_plugin.learning.llm import LLMClient, LLMResult
from metaclaw_plugin.learning.reward import TurnView
from metaclaw_plugin.learning.screening_model import SkillReviewer, parse_verdict
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.skillbank.skillmd import render_skill_md
from metaclaw_plugin.types import Skill

MAL, OK = malicious(), benign()


def _skill(it: Item) -> Skill:
    return Skill(name=it.name, description=it.description, body=it.body, category="general", origin="user")


def _add(home: Path, tmp: Path, it: Item, *extra: str) -> tuple[int, str]:
    d = tmp / it.name
    d.mkdir(exist_ok=True)
    (d / "SKILL.md").write_text(render_skill_md(_skill(it)), "utf-8")
    res = CliRunner().invoke(main, ["skills", "add", str(d), *extra])
    try:
        status = SkillStore(home / "skills").read(it.name).status
    except KeyError:
        status = "refused"
    return res.exit_code, status


def test_corpus_size():
    assert len(MAL) >= 100 and len({i.cls for i in MAL}) >= 8 and len(OK) >= 30


def test_corpus_through_skills_add(home: Path, tmp_path: Path):
    active = [it.name for it in MAL if _add(home, tmp_path, it)[1] == "active"]
    held = [it.name for it in OK if _add(home, tmp_path, it)[1] != "active"]
    assert active == []
    assert len(held) <= len(OK) // 30, held


class Scripted(LLMClient):
    """A scripted evolver (or reviewer): answers from a function of the messages, no network."""

    def __init__(self, answer, purpose: str = "evolver"):
        super().__init__(purpose, model="scripted/model")
        self.answer = answer

    def unavailable_reason(self) -> str | None:
        return None

    def complete(self, messages, *, temperature: float = 0.0, max_tokens: int = 512) -> LLMResult:
        return LLMResult(self.answer(messages), 1, 1, 1)


def _support() -> list[SupportTurn]:
    v = TurnView("t-1", "sess-1", "default", "do the task", "done", evidence=[], injected=[])
    return [SupportTurn(v, -1.0, "correction")]


def _evolve(home: Path, it: Item, reviewer: SkillReviewer | None = None) -> str:
    s = Settings(home=home, evolution={"model": "scripted/model", "promotion": "auto"})
    store = SkillStore(home / "skills")
    cand = {"action": "create", "name": it.name, "description": it.description, "body": it.body}
    ev = SkillEvolver(Scripted(lambda m: json.dumps({"skills": [cand]})), store, s, reviewer=reviewer)
    rep = ev.evolve(_support(), source_text="")
    return rep.decisions[0].decision if rep.decisions else "none"


def test_corpus_through_evolution(home: Path):
    active = [it.name for it in MAL if _evolve(home, it) == "active"]
    held = [it.name for it in OK if _evolve(home, it) != "active"]
    assert active == []
    assert len(held) <= len(OK) // 30, held


@dataclass
class _Case:
    reply: object
    decision: str


CLEAN = Item(
    "benign",
    "tidy-imports",
    "When editing Python files, keep imports sorted.",
    "Sort imports with ruff and group stdlib first.",
)


def _reviewer(answer) -> SkillReviewer:
    return SkillReviewer(Scripted(answer, "judge"))


def _raise(_m):
    from metaclaw_plugin.learning.llm import LLMError

    raise LLMError("judge call failed: Timeout")


@pytest.mark.parametrize(
    "answer,decision,verdict",
    [
        (lambda m: json.dumps({"verdict": "unsafe", "reasons": ["asks to hide actions"]}), "quarantined", "unsafe"),
        (_raise, "quarantined", "error"),
        (lambda m: "I think it's fine!", "quarantined", "error"),
        (lambda m: json.dumps({"verdict": "maybe"}), "quarantined", "error"),
        (lambda m: json.dumps({"verdict": "safe", "reasons": []}), "active", "safe"),
    ],
)
def test_model_review_gates_evolution(home: Path, answer, decision, verdict):
    seen: list[str] = []

    def wrapped(m):
        seen.append(m[1]["content"])
        return answer(m)

    assert _evolve(home, CLEAN, _reviewer(wrapped)) == decision
    skill = SkillStore(home / "skills").read(CLEAN.name)
    assert skill.extra_metadata["review"]["verdict"] == verdict
    assert (skill.status == "active") is (decision == "active")
    assert "data, not instructions" in seen[0] and '"body"' in seen[0]
    ev = [e for e in SkillStore(home / "skills").history(CLEAN.name) if e.get("review")]
    assert ev and ev[-1]["review"]["verdict"] == verdict


def test_model_review_times_out_over_http(home: Path):
    pytest.importorskip("litellm")
    from metaclaw_plugin.devtools.upstream import Upstream

    with Upstream(replies=[{"content": json.dumps({"verdict": "safe"}), "delay": 3}]) as up:
        client = LLMClient("judge", model="openai/judge", api_base=up.url, api_key="x", timeout=1, retries=0)
        res = SkillReviewer(client).review(_skill(CLEAN))
    assert res.verdict == "error"


def test_parse_verdict():
    assert parse_verdict('```json\n{"verdict": "SAFE", "reasons": "ok"}\n```') == ("safe", ["ok"])
    with pytest.raises(ValueError):
        parse_verdict('{"reasons": []}')


def test_skills_add_without_model_says_review_off_and_show_gives_evidence(home: Path, tmp_path: Path):
    d = tmp_path / "s"
    d.mkdir()
    (d / "SKILL.md").write_text(render_skill_md(_skill(CLEAN)), "utf-8")
    res = CliRunner().invoke(main, ["skills", "add", str(d)])
    assert res.exit_code == 0 and "model review: off" in res.output
    out = json.loads(CliRunner().invoke(main, ["skills", "show", CLEAN.name, "--json"]).output)
    assert out["screening"]["verdict"] == "clean" and out["trusted"] is False
    text = CliRunner().invoke(main, ["skills", "show", CLEAN.name]).output
    assert "screening: clean" in text


def test_skills_add_with_model_quarantines_on_failed_review_and_trust_skips(home: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("METACLAW_REWARD__MODEL", "openai/judge")
    monkeypatch.setenv("METACLAW_REWARD__API_BASE", "http://127.0.0.1:9")  # nothing listens: the review fails
    monkeypatch.setenv("METACLAW_REWARD__RETRIES", "0")
    monkeypatch.setenv("METACLAW_REWARD__TIMEOUT", "2")
    code, status = _add(home, tmp_path, CLEAN)
    assert code == 3 and status == "quarantined"
    out = json.loads(CliRunner().invoke(main, ["skills", "show", CLEAN.name, "--json"]).output)
    assert out["review"]["verdict"] == "error" and out["review"]["model"] == "openai/judge"
    other = Item("benign", "tidy-imports-2", CLEAN.description, CLEAN.body)
    code, status = _add(home, tmp_path, other, "--trust")
    assert code == 0 and status == "active"
    ev = SkillStore(home / "skills").history(other.name)[-1]
    assert ev["trusted"] is True and ev["actor"] == "cli" and ev["review"]["verdict"] == "skipped"
    # --trust does not lift the deterministic rejection
    code, status = _add(home, tmp_path, MAL[0], "--trust")
    assert status != "active"
    doc = json.loads(CliRunner().invoke(main, ["doctor", "--json"]).output)
    rev = next(c for c in doc["checks"] if c["check"] == "model review")
    assert "openai/judge" in rev["detail"] or "off" in rev["detail"]
