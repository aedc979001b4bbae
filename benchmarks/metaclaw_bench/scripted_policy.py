"""The ``scripted`` offline policy: a deterministic stand-in for a model, for benchmarks whose rounds
carry no reference solution (the public MetaClaw-Bench layout).

It is not a model and its scores are not a model's: it exists so that an offline run exercises every
part of the harness (tools, checkers, both scorers, feedback, skills) with outcomes that are sometimes
right and sometimes wrong, and that change when guidance reaches it. Its rules:

- *Guidance* is what a learning agent could have been told: the injected skill block
  (``<metaclaw-skills>``) and the feedback messages of the day. Nothing else (not the checker, not
  the answer key).
- ``file_check``: the question's first path that exists in the workspace is the input, its first that
  does not is the output. The input's records (``key=value`` lines or a CSV table) are written to the
  output as JSON: a list of records, with each key renamed to the question's word that extends it
  (``temp`` -> ``temperature``); or, when the question names ``avg_<x>``/``mean_<x>``/``total_<x>``/
  ``min_<x>``/``max_<x>`` fields, one object of those aggregates. Numbers are bare, unless the guidance
  shows value/unit objects (``"unit": "..."``): then each number becomes ``{"value", "unit"}`` with the
  guidance's units in order of appearance.
- ``multi_choice``: the options that share a word (four letters or more) with the guidance; with no
  such option, the first option alone. Answered as ``\\bbox{...}``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

SKILL_BLOCK = re.compile(r"<metaclaw-skills>(.*?)</metaclaw-skills>", re.S)
FEEDBACK_PREFIX = "Feedback on your previous answer:"
PATH = re.compile(r"(?<![\w/])([\w.-]+(?:/[\w.-]+)*\.(?:json|csv|txt|md|yaml|yml|tsv|log))\b")
UNIT = re.compile(r'"unit"\s*:\s*"([^"]+)"')
AGG = re.compile(r"\b(avg|mean|total|sum|min|max)_([a-z][a-z0-9_]*)\b")
WORD = re.compile(r"[a-z][a-z0-9]{3,}")
STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "into",
        "your",
        "have",
        "been",
        "were",
        "they",
        "them",
        "then",
        "than",
        "what",
        "when",
        "which",
        "also",
        "each",
    ]
)


def guidance(texts: list[tuple[str, str]]) -> str:
    """The guidance in a conversation given as (role, text) pairs: skill blocks and feedback messages."""
    out = []
    for role, text in texts:
        if role == "system":
            out += SKILL_BLOCK.findall(text)
        elif role == "user" and text.startswith(FEEDBACK_PREFIX):
            out.append(text[len(FEEDBACK_PREFIX) :])
    return "\n".join(out)


def choose_options(options: dict[str, str], guide: str) -> list[str]:
    words = {w for w in WORD.findall(guide.lower()) if w not in STOP}
    picked = [k for k, v in options.items() if words & set(WORD.findall(v.lower()))]
    return picked or [next(iter(options))]


def paths_in(question: str, workspace: Path) -> tuple[str | None, str | None]:
    """(input, output): the first mentioned path that exists, the first that does not."""
    found = list(dict.fromkeys(PATH.findall(question)))
    inp = next((p for p in found if (workspace / p).is_file()), None)
    out = next((p for p in found if not (workspace / p).exists()), None)
    return inp, out


def _number(s: str) -> Any:
    try:
        f = float(s)
    except ValueError:
        return s
    return int(f) if f.is_integer() and "." not in s else f


def records(text: str) -> list[dict[str, Any]]:
    """``key=value`` lines, or a CSV table with a header."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if lines and all("=" in ln for ln in lines):
        return [{k: _number(v) for k, v in (pair.split("=", 1) for pair in ln.split() if "=" in pair)} for ln in lines]
    rows = list(csv.DictReader(io.StringIO(text)))
    return [{k.strip(): _number(str(v).strip()) for k, v in r.items() if k} for r in rows]


def _rename(key: str, words: list[str]) -> str:
    if key in words:
        return key
    longer = [w for w in words if w.startswith(key) and w != key]
    return max(longer, key=len) if longer else key


def build_output(question: str, source_text: str, guide: str) -> Any:
    recs = records(source_text)
    words = re.findall(r"[a-z][a-z0-9_]*", question.lower())
    units = list(dict.fromkeys(UNIT.findall(guide)))
    aggs = list(dict.fromkeys(AGG.findall(question.lower())))
    if aggs:
        data: Any = {}
        for fn, col in aggs:
            key = next((k for k in (recs[0] if recs else {}) if k.startswith(col) or col.startswith(k)), None)
            vals = [r[key] for r in recs if key is not None and isinstance(r.get(key), (int, float))]
            if not vals:
                continue
            agg = {
                "avg": sum(vals) / len(vals),
                "mean": sum(vals) / len(vals),
                "total": sum(vals),
                "sum": sum(vals),
                "min": min(vals),
                "max": max(vals),
            }[fn]
            data[f"{fn}_{col}"] = round(agg, 3)
        return _with_units(data, units)
    return [_with_units({_rename(k, words): v for k, v in r.items()}, units) for r in recs]


def _with_units(obj: dict[str, Any], units: list[str]) -> dict[str, Any]:
    if not units:
        return obj
    out: dict[str, Any] = {}
    i = 0
    for k, v in obj.items():
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out[k] = {"value": v, "unit": units[i % len(units)]}
            i += 1
        else:
            out[k] = v
    return out


def output_text(question: str, source_text: str, guide: str) -> str:
    return json.dumps(build_output(question, source_text, guide), indent=2) + "\n"
