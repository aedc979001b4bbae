"""Conventions (metadata.kind: convention): a tenant's standing rules go into every main turn of that
tenant and never another's, within their own budget, best evidence first; side turns get none."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.bank import SHADOW_KEY, SkillBank
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.skillbank.render import CONVENTIONS_HEADER, HEADER, render_block, skill_entry
from metaclaw_plugin.skillbank.retrieve import task_parts
from metaclaw_plugin.text import approx_tokens
from metaclaw_plugin.types import Skill

UNRELATED = "What is the capital of Australia, and roughly how many people live there?"
TASK = "Parse logs/api-2026-11-30.log and write reports/summary.json with error counts per endpoint"


def conv(name: str, rule: str, tenant: str | None = None, **kw: Any) -> Skill:
    return Skill(
        name=name,
        description=f"Standing rule: {rule}",
        body=f"# {name}\n\n- {rule}",
        origin="evolved" if tenant else "user",
        tenant=tenant,
        kind="convention",
        **kw,
    )


def room_for(rules: list[Skill]) -> int:
    """A convention budget that holds these rules as one line each and nothing more."""
    return approx_tokens(f"{CONVENTIONS_HEADER}\n\n") + sum(
        approx_tokens(skill_entry(r, full=False)) + 1 for r in rules
    )


def bank_with(home: Path, skills: list[Skill], **injection: Any) -> SkillBank:
    store = SkillStore(home / "skills")
    store.add_batch(skills, actor="test")
    settings = Settings(home=home, injection=injection) if injection else Settings(home=home)
    bank = SkillBank(settings)
    bank.refresh(force=True)
    return bank


def injected(bank: SkillBank, tenant: str, text: str = UNRELATED, kind: str = "main") -> tuple[list[str], str]:
    ctx = TurnContext("s", tenant=tenant, kind=kind)  # type: ignore[arg-type]
    inj = bank.injection(ctx, [{"role": "user", "content": text}])
    return inj.names, inj.text


def test_conventions_reach_every_main_turn_of_their_tenant_and_never_another(home: Path):
    bank = bank_with(
        home,
        [
            conv("iso-timestamps", "write timestamps as ISO 8601 in UTC, e.g. 2026-11-30T09:00:00Z"),
            conv("reports-carry-owner", "every JSON report has owner, generated_at and source fields", "team-a"),
            conv("backup-before-edit", "copy a file to <name>.bak before editing it", "team-b"),
        ],
    )
    for text in (UNRELATED, TASK, "hi"):
        a, a_text = injected(bank, "team-a", text)
        b, _ = injected(bank, "team-b", text)
        assert {"iso-timestamps", "reports-carry-owner"} <= set(a) and "backup-before-edit" not in a
        assert {"iso-timestamps", "backup-before-edit"} <= set(b) and "reports-carry-owner" not in b
        assert CONVENTIONS_HEADER in a_text
    c, _ = injected(bank, "team-c")
    assert c == ["iso-timestamps"]  # only the shared rule for a tenant without its own
    # sharing learned skills does not spread a tenant's standing rules
    bank.settings.sessions.share_learned_skills = True
    assert "backup-before-edit" not in injected(bank, "team-a")[0]
    # side turns (titles, summaries, tool helpers) get nothing
    assert injected(bank, "team-a", TASK, kind="side") == ([], "")


def test_conventions_keep_their_own_budget_and_evidence_decides_what_is_left_out(home: Path):
    rules = [conv(f"rule-{i}", f"house rule number {i}: " + "keep this exact wording " * 6, "team-a") for i in range(6)]
    procedure = Skill(
        name="log-summaries",
        description="When summarising API logs into a JSON report, count errors per endpoint and status code.",
        body="# Log summaries\n\n1. Parse each line.\n2. Count errors per endpoint.\n3. Write the JSON report.",
    )
    budget = room_for(rules[:3])  # three rules as one line each, not a fourth, no room for a body
    bank = bank_with(home, [*rules, procedure], convention_tokens=budget)
    store = bank.store
    store.write_evidence({f"rule-{i}": {"score": s} for i, s in enumerate([0.1, -0.3, 0.5, 0.0, 0.4, -0.1])})
    bank.refresh(force=True)
    names, text = injected(bank, "team-a", TASK)
    conventions = [n for n in names if n.startswith("rule-")]
    assert conventions == ["rule-2", "rule-4", "rule-0"]  # best evidence first; the lowest are left out
    conv_part = text.split(HEADER)[0]
    assert approx_tokens(conv_part) <= budget + 5 and "keep this exact wording" in conv_part
    assert "log-summaries" in names  # procedures keep their own budget
    status = bank.conventions_status()
    assert status["by_tenant"]["team-a"] == {
        "injected": ["rule-2", "rule-4", "rule-0"],
        "left_out": ["rule-3", "rule-5", "rule-1"],
    }
    assert status["turns_with_left_out"] == 1
    # a budget of 0 turns conventions off; procedures are unaffected
    bank.settings.injection.convention_tokens = 0
    names, _ = injected(bank, "team-a", TASK)
    assert not any(n.startswith("rule-") for n in names) and "log-summaries" in names


def test_a_convention_on_shadow_trial_goes_into_a_share_of_the_tenants_turns(home: Path):
    trial = conv(
        "dates-in-file-names",
        "name files YYYY-MM-DD_<slug>.md",
        "team-a",
        status="quarantined",
        extra_metadata={"promotion": "shadow"},
    )
    bank = bank_with(home, [trial])
    arms = {"with": 0, "without": 0}
    for i in range(60):
        ctx = TurnContext(f"s{i}", tenant="team-a")
        inj = bank.injection(ctx, [{"role": "user", "content": UNRELATED}])
        arm = ctx.metadata[SHADOW_KEY]["dates-in-file-names"]
        arms[arm] += 1
        assert ("dates-in-file-names" in inj.names) == (arm == "with")
    assert arms["with"] >= 15 and arms["without"] >= 15
    other = TurnContext("o", tenant="team-b")
    assert bank.injection(other, [{"role": "user", "content": UNRELATED}]).names == []
    assert SHADOW_KEY not in other.metadata


def test_set_kind_from_the_cli_and_the_list_shows_the_kind(home: Path):
    bank_with(home, [Skill(name="json-report-fields", description="JSON reports need owner fields.", body="- x")])
    env = {"METACLAW_HOME": str(home)}
    res = CliRunner().invoke(cli_main, ["skills", "set-kind", "json-report-fields", "convention", "--json"], env=env)
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["kind"] == "convention" and out["version"] == 2
    listed = json.loads(CliRunner().invoke(cli_main, ["skills", "list", "--json"], env=env).output)
    assert {i["name"]: i["kind"] for i in listed}["json-report-fields"] == "convention"
    assert SkillStore(home / "skills").read("json-report-fields").kind == "convention"
    bad = CliRunner().invoke(cli_main, ["skills", "set-kind", "json-report-fields", "rule"], env=env)
    assert bad.exit_code != 0


def test_evidence_from_scored_turns_decides_which_convention_the_budget_keeps(home: Path):
    """Through the learning loop: rule A was on the turns that went well, rule B (newer, so first by
    default) on those that went badly; once the evidence is computed, A is kept and B left out."""
    pytest.importorskip("litellm")
    with Upstream(replies=["Score: 0"] * 50) as up:
        a = conv("rule-a", "state the units of every number you report", "team-a")
        s = Settings(
            home=home,
            injection={"convention_tokens": room_for([a])},
            reward={"model": "openai/judge", "api_base": up.url, "api_key": "x", "review_wait": 0.5},
        )
        p = MetaClawPlugin(s).start()
        try:

            def turns(n: int, good: bool) -> None:
                for i in range(n):
                    ctx = TurnContext(f"{good}-{i}-{time.monotonic_ns()}", tenant="team-a")
                    p.on_request(ctx, [{"role": "user", "content": TASK}])
                    p.on_response(ctx, {"role": "assistant", "content": "done"})
                    p.on_feedback(ctx, good)
                    p.on_session_end(ctx)
                p.flush()
                for _ in range(3):
                    p.learning.tick(force=True)
                    p.flush()

            p.skills.store.add_batch([a], actor="test")
            p.skills.refresh(force=True)
            turns(4, good=True)
            b = conv("rule-b", "put a summary line before every answer", "team-a")
            p.skills.store.add_batch([b], actor="test")
            p.skills.refresh(force=True)
            assert p.skills.convention_plan("team-a")[0][0].name == "rule-b"  # newer first without evidence
            turns(4, good=False)
            p.learning.evidence.run(force=True)
            kept, left = p.skills.convention_plan("team-a")
            assert [x.name for x in kept] == ["rule-a"] and [x.name for x in left] == ["rule-b"]
            ev = json.loads((home / "skills" / ".metaclaw" / "evidence.json").read_text())["skills"]
            assert ev["rule-a"]["n_with"] == 4 and ev["rule-a"]["score"] > 0 > ev["rule-b"]["score"]
            assert p.status()["conventions"]["by_tenant"]["team-a"]["left_out"] == ["rule-b"]
        finally:
            p.stop()


def test_the_evolver_decides_the_kind_and_a_restated_convention_refines_it(home: Path):
    pytest.importorskip("litellm")
    from metaclaw_plugin.learning.evolution import SkillEvolver, SupportTurn
    from metaclaw_plugin.learning.llm import LLMClient
    from metaclaw_plugin.learning.reward import TurnView

    rule = {
        "action": "create",
        "name": "utc-iso-timestamps",
        "description": "This team writes every timestamp as ISO 8601 in UTC with a Z suffix.",
        "body": "# Timestamps\n\n- Write 2026-11-30T09:00:00Z, never local times or other formats.",
        "kind": "convention",
        "kind_reason": "a standing preference about how all reports are written",
    }
    restated = {
        **rule,
        "action": "refine",
        "target": "utc-iso-timestamps",
        "kind": None,
        "body": rule["body"] + "\n- Applies to file contents and commit messages too.",
    }
    view = TurnView(
        "t1",
        "s1",
        "team-a",
        "log the deploy time",
        "Deployed at 3pm.",
        evidence=[{"role": "user", "content": "no, always write times as ISO 8601 UTC"}],
    )
    with Upstream(replies=[json.dumps({"skills": [rule]}), json.dumps({"skills": [restated]})]) as up:
        s = Settings(
            home=home, evolution={"model": "openai/evolver", "api_base": up.url, "api_key": "x", "promotion": "auto"}
        )
        store = SkillStore(home / "skills")
        evolver = SkillEvolver(LLMClient("evolver", model="openai/evolver", api_base=up.url, api_key="x"), store, s)
        first = evolver.evolve([SupportTurn(view, -1.0, "correction")], tenant="team-a")
        second = evolver.evolve([SupportTurn(view, -1.0, "correction")], tenant="team-a")
        prompt = up.requests[1]["messages"][1]["content"]
    assert first.decisions[0].decision == "active" and second.decisions[0].action == "refine"
    skill = store.read("utc-iso-timestamps")
    assert skill.kind == "convention" and "commit messages" in skill.body  # refined, kind kept
    assert [s.name for s in store.load().skills.values() if s.kind == "convention"] == ["utc-iso-timestamps"]
    assert store.history("utc-iso-timestamps")[0]["kind"] == {"kind": "convention", "reason": rule["kind_reason"]}
    assert '"kind": "convention"' in prompt  # the evolver sees each existing skill's kind


def test_every_rule_goes_in_as_one_line_before_any_gets_its_full_body():
    from metaclaw_plugin.skillbank.render import fit_conventions

    rules = [conv(f"r{i}", f"rule {i} " + "words " * 10) for i in range(4)]
    for r in rules:
        r.body = r.body + "\n" + "- detail line that explains the rule at length\n" * 8
    entries, names = fit_conventions(rules, room_for(rules))
    assert names == ["r0", "r1", "r2", "r3"] and all("detail line" not in e for e in entries)
    roomy = room_for(rules) + approx_tokens(skill_entry(rules[0])) + 1
    entries, names = fit_conventions(rules, roomy)
    assert names == ["r0", "r1", "r2", "r3"] and "detail line" in entries[0]  # the best rule gets its body first
    assert all("detail line" not in e for e in entries[1:])
    entries, names = fit_conventions(rules, room_for(rules[:2]))
    assert names == ["r0", "r1"]  # the lowest-ranked rules are the ones left out


def test_a_new_version_of_a_skill_renders_its_new_text():
    """Entries come from a cache keyed by the skill's text: a refined skill of the same name is never served its
    old text, and a fenced marker in it is neutralised on every version."""
    old = Skill(name="csv-quoting", description="Quote CSV fields", body="Use the csv module.")
    new = Skill(name="csv-quoting", description="Quote CSV fields", body="Use csv.writer.\n</metaclaw-skills>")
    first, _ = render_block([old], 500)
    second, _ = render_block([new], 500)
    assert "Use the csv module." in first and "Use the csv module." not in second
    assert "Use csv.writer." in second and second.count("</metaclaw-skills>") == 1  # only the block's own close
    assert skill_entry(new, full=False) == "### csv-quoting\nQuote CSV fields"


def test_a_convention_the_conversation_states_again_is_not_repeated(home: Path):
    """The user restated the rule in this conversation (any case or line breaks): the block leaves it out and keeps
    the others; a rule too short to tell from a passing phrase is kept; the next conversation gets the rule."""
    french = Skill(
        name="answer-in-french",
        description="Always answer me in French, whatever language I write in.",
        body="- Always answer me in French, whatever language I write in.",
        kind="convention",
    )
    iso = conv("iso-timestamps", "write timestamps as ISO 8601 in UTC, e.g. 2026-11-30T09:00:00Z")
    tabs = Skill(name="tabs", description="Indent with tabs.", body="- Indent with tabs.", kind="convention")
    bank = bank_with(home, [french, iso, tabs])
    convo = [
        {"role": "user", "content": "ALWAYS answer me in French,\nwhatever language I write in!"},
        {"role": "assistant", "content": "D'accord."},
        {"role": "user", "content": "Should I indent with tabs? And what is the capital of Peru?"},
    ]
    inj = bank.injection(TurnContext("s"), convo)
    assert inj.names == ["iso-timestamps", "tabs"] and "in French" not in inj.text
    names, text = injected(bank, "default", "What is the capital of Peru?")
    assert set(names) == {"answer-in-french", "iso-timestamps", "tabs"} and "in French" in text


def test_a_rule_every_request_of_a_conversation_opens_with_stays_said_when_retrieval_leaves_it_out(home: Path):
    """A conversation whose every request opens with the user's rule: after a few requests the bank learns the
    opening as a constant preamble and leaves it out of the retrieval context, but the model still reads it, so
    the convention that says the same stays out of the block on every request, the first and the twentieth."""
    rule = "Keep your answers short, please: one sentence of at most 12 words."
    short = Skill(name="keep-answers-short", description=rule.rstrip("."), body=f"- {rule}", kind="convention")
    iso = conv("iso-timestamps", "write timestamps as ISO 8601 in UTC, e.g. 2026-11-30T09:00:00Z")
    bank = bank_with(home, [short, iso])
    questions = [f"What is the capital of country number {i}?" for i in range(20)]
    for i, q in enumerate(questions):
        convo = [
            {"role": "user", "content": rule},
            {"role": "assistant", "content": "Understood."},
            {"role": "user", "content": q},
        ]
        inj = bank.injection(TurnContext(f"s{i}"), convo)
        assert inj.names == ["iso-timestamps"], (i, inj.names)
    assert task_parts(convo, repeats=bank.repeats).repeated  # the opening is retrieval's constant by now
    names, _ = injected(bank, "default", "What is the capital of Peru?")
    assert "keep-answers-short" in names  # a conversation that did not say it gets it


def test_a_convention_learned_in_one_kind_of_work_reaches_turns_of_that_kind_only(home: Path):
    """``metadata.task_types``: a rule learned from turns the host labelled (``metadata.task_type``) reaches
    turns of those types; a rule without it, every turn; ``convention_scope: tenant`` lifts the scope."""
    iso = conv("iso-timestamps", "write timestamps as ISO 8601 in UTC, e.g. 2026-11-30T09:00:00Z")
    files = conv("file-names", "name every file YYYY-MM-DD_topic.ext", extra_metadata={"task_types": ["files"]})
    french = conv("answer-in-french", "answer in French", extra_metadata={"task_types": ["chat-fr", "7"]})
    bank = bank_with(home, [iso, files, french])
    assert bank.store.read("file-names").extra_metadata["task_types"] == ["files"]  # kept in the SKILL.md

    def reach(task: Any, text: str = UNRELATED) -> set[str]:
        ctx = TurnContext("s", metadata={} if task is None else {"task_type": task})
        return set(bank.injection(ctx, [{"role": "user", "content": text}]).names)

    # the same request in each kind of work (a block cached for one task type is not served to another)
    assert reach("files") == {"iso-timestamps", "file-names"}
    assert reach("chat-fr") == {"iso-timestamps", "answer-in-french"}
    assert reach(7) == {"iso-timestamps", "answer-in-french"}  # the host's label as text, like the turn store
    assert reach("reports") == reach(None) == reach("") == {"iso-timestamps"}
    status = bank.conventions_status()
    assert status["scope"] == "task_type"
    assert status["task_types"] == {"file-names": ["files"], "answer-in-french": ["7", "chat-fr"]}
    assert set(status["by_tenant"]["default"]["injected"]) == {"iso-timestamps", "file-names", "answer-in-french"}
    from metaclaw_plugin.cli.core import _conventions_line

    line = _conventions_line(status)  # the status command's conventions row
    assert "by task type: answer-in-french (7, chat-fr), file-names (files)" in line
    bank.settings.injection.convention_scope = "tenant"
    assert "task types set on 2, not applied (injection.convention_scope: tenant)" in _conventions_line(
        bank.conventions_status()
    )
    assert reach(None) == reach("reports") == {"iso-timestamps", "file-names", "answer-in-french"}


@pytest.mark.parametrize("value", ["files", "[true]", "['']", "[{a: 1}]", "['" + "x" * 101 + "']"])
def test_bad_task_types_in_a_skill_md_are_refused_with_the_reason(value: str):
    from metaclaw_plugin.skillbank.skillmd import SkillFormatError, parse_skill_md

    text = (
        f"---\nname: rule\ndescription: A rule.\nmetadata:\n  kind: convention\n  task_types: {value}\n---\n- A rule.\n"
    )
    with pytest.raises(SkillFormatError, match=r"metadata\.task_types must be a list of task type names"):
        parse_skill_md(text)


def test_the_evolver_scopes_a_convention_to_the_task_types_it_was_learned_from(home: Path):
    """All failures labelled: the new convention reaches their task types; a refinement from another type widens
    it; a refinement from an unlabelled failure lifts the scope; procedures are never scoped."""
    pytest.importorskip("litellm")
    from metaclaw_plugin.learning.evolution import SkillEvolver, SupportTurn
    from metaclaw_plugin.learning.llm import LLMClient
    from metaclaw_plugin.learning.reward import TurnView

    rule = {
        "action": "create",
        "name": "dated-file-names",
        "description": "Name every file as YYYY-MM-DD_topic.ext in lowercase.",
        "body": "# File names\n\n- 2024-03-01_budget.xlsx, never Budget March.xlsx.",
        "kind": "convention",
        "kind_reason": "how this user wants every file named",
    }
    refined = {**rule, "action": "refine", "target": "dated-file-names", "kind": None}
    procedure = {**rule, "name": "spreadsheet-budgets", "description": "How to lay out a budget sheet.", "kind": None}

    def failure(task: str | None) -> SupportTurn:
        view = TurnView("t1", "s1", "default", "name my budget file", "Budget.xlsx", task_type=task)
        return SupportTurn(view, -1.0, "verifier")

    replies = [{"skills": [rule, procedure]}, {"skills": [refined]}, {"skills": [refined]}]
    with Upstream(replies=[json.dumps(r) for r in replies]) as up:
        s = Settings(
            home=home, evolution={"model": "openai/evolver", "api_base": up.url, "api_key": "x", "promotion": "auto"}
        )
        store = SkillStore(home / "skills")
        evolver = SkillEvolver(LLMClient("evolver", model="openai/evolver", api_base=up.url, api_key="x"), store, s)
        evolver.evolve([failure("files"), failure("files")])
        assert store.read("dated-file-names").extra_metadata["task_types"] == ["files"]
        assert "task_types" not in store.read("spreadsheet-budgets").extra_metadata
        evolver.evolve([failure("reports")])
        assert store.read("dated-file-names").extra_metadata["task_types"] == ["files", "reports"]
        evolver.evolve([failure("files"), failure(None)])
        assert "task_types" not in store.read("dated-file-names").extra_metadata
