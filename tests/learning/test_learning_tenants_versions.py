"""Tenants stay apart in learning (dedup, refinement, names, shared skills), and versions: a refinement
of an active skill waits (trial or review) while the old version serves, every version is kept,
history shows diffs, rollback restores any version, and a trial is labelled as one."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.learning.evolution import SkillEvolver, SupportTurn
from metaclaw_plugin.learning.llm import LLMClient
from metaclaw_plugin.learning.reward import TurnView
from metaclaw_plugin.skillbank.bank import SHADOW_KEY, SkillBank, bundled_skills_dir
from metaclaw_plugin.skillbank.files import SkillStore

pytest.importorskip("litellm")

CSV = {
    "action": "create",
    "name": "kafka-consumer-offsets",
    "description": "When a Kafka consumer replays or skips messages, check its committed offsets and offset reset policy.",
    "body": "# Kafka consumer offsets\n\n1. Describe the consumer group's committed offsets.\n"
    "2. Check auto.offset.reset before restarting the consumer.",
}
CSV_BETTER = {
    **CSV,
    "action": "refine",
    "target": "kafka-consumer-offsets",
    "body": CSV["body"] + "\n3. Tell the user which partition lag and reset policy you found.",
}
QUERY = "the kafka consumer replays old messages after restart, check its offsets"


def support(tenant: str) -> list[SupportTurn]:
    v = TurnView(
        f"t-{tenant}",
        f"s-{tenant}",
        tenant,
        "split this csv export",
        "I split it on commas.",
        evidence=[{"role": "user", "content": "no, it uses semicolons"}],
    )
    return [SupportTurn(v, -1.0, "correction")]


class Lib:
    def __init__(self, home: Path, up: Upstream, **evo: Any):
        self.home = home
        self.store = SkillStore(home / "skills")
        self.store.seed_from(bundled_skills_dir())
        self.settings = Settings(
            home=home,
            evolution={"model": "openai/evolver", "api_base": up.url, "api_key": "x", "shadow_fraction": 0.5, **evo},
        )
        self.evolver = SkillEvolver(
            LLMClient("evolver", model="openai/evolver", api_base=up.url, api_key="x", timeout=20),
            self.store,
            self.settings,
        )
        self.bank = SkillBank(self.settings)

    def evolve(self, tenant: str) -> Any:
        rep = self.evolver.evolve(support(tenant), tenant=tenant)
        self.bank.refresh(force=True)
        return rep

    def injected(self, tenant: str, query: str = QUERY, request_id: str | None = None) -> dict[str, str]:
        """Name -> body of what this tenant's request gets."""
        ctx = TurnContext("s", tenant=tenant, **({"request_id": request_id} if request_id else {}))
        inj = self.bank.injection(ctx, [{"role": "user", "content": query}])
        return {n: self.bank.skills[n].body if n in self.bank.skills else "" for n in inj.names} | {"_text": inj.text}


def test_one_tenants_lesson_never_changes_what_another_is_injected(home: Path):
    with Upstream(
        replies=[
            json.dumps({"skills": [CSV]}),
            json.dumps({"skills": [CSV_BETTER]}),
            json.dumps({"skills": [{**CSV, "body": CSV["body"] + "\n3. TEAM-B-ONLY"}]}),
        ]
    ) as up:
        lib = Lib(home, up, promotion="auto")
        lib.evolve("team-a")
        a_skill = lib.bank.skills["kafka-consumer-offsets"]
        assert a_skill.tenant == "team-a" and a_skill.status == "active"
        a_before = lib.injected("team-a")
        b_before = lib.injected("team-b")
        assert "kafka-consumer-offsets" in a_before and "kafka-consumer-offsets" not in b_before
        # team-b's evolver asks to refine team-a's skill by name, then proposes the same name again
        rep1 = lib.evolve("team-b")
        rep2 = lib.evolve("team-b")
    assert lib.bank.skills["kafka-consumer-offsets"].body == a_skill.body  # team-a's skill untouched
    b_names = {d.name for d in rep1.decisions + rep2.decisions}
    assert "kafka-consumer-offsets" not in b_names and "kafka-consumer-offsets-team-b" in b_names
    assert lib.bank.skills["kafka-consumer-offsets-team-b"].tenant == "team-b"
    assert lib.injected("team-a") == a_before  # nothing team-b did reaches team-a
    b_after = lib.injected("team-b")
    assert "kafka-consumer-offsets-team-b" in b_after and "TEAM-B-ONLY" not in lib.injected("team-a")["_text"]
    assert "TEAM-B-ONLY" in b_after["_text"]  # team-b's second lesson refined its own skill


def test_a_lesson_about_a_shared_skill_becomes_a_tenant_variant(home: Path):
    refine_builtin = {
        "action": "refine",
        "target": "csv-quoting",
        "name": "csv-quoting",
        "description": "When reading or writing CSV, handle quoted fields and this team's ';' delimiter.",
        "body": "# CSV for team-b\n\n1. Our exports use ';' and double quotes.\n2. Use the csv module.",
    }
    with Upstream(replies=[json.dumps({"skills": [refine_builtin]})]) as up:
        lib = Lib(home, up, promotion="auto")
        builtin = lib.store.read("csv-quoting")
        rep = lib.evolve("team-b")
    (d,) = rep.decisions
    assert d.action == "variant" and d.name == "csv-quoting-team-b" and d.decision == "active"
    assert lib.store.read("csv-quoting") == builtin  # the shared skill is never rewritten
    variant = lib.bank.skills["csv-quoting-team-b"]
    assert variant.tenant == "team-b" and variant.extra_metadata["variant_of"] == "csv-quoting"
    # the variant keeps what the shared skill says, then the tenant's lesson
    assert variant.body.startswith(builtin.body) and variant.body.endswith(refine_builtin["body"])
    q = "write the csv export with quoted fields"
    b, a = lib.injected("team-b", q), lib.injected("team-a", q)
    assert "csv-quoting-team-b" in b and "csv-quoting" not in b  # the variant replaces it for team-b
    assert "csv-quoting" in a and "csv-quoting-team-b" not in a


def test_refining_an_active_skill_keeps_it_serving_until_the_new_version_wins(home: Path):
    with Upstream(replies=[json.dumps({"skills": [CSV]}), json.dumps({"skills": [CSV_BETTER]})]) as up:
        lib = Lib(home, up, promotion="auto")
        lib.evolve("team-a")
        lib.settings.evolution.promotion = "shadow"
        rep = lib.evolve("team-a")
    (d,) = rep.decisions
    assert d.action == "refine" and d.decision == "trial"
    served = lib.bank.skills["kafka-consumer-offsets"]
    assert served.status == "active" and served.body == CSV["body"]  # the old version still serves
    pending = lib.bank.pending["kafka-consumer-offsets"]
    assert pending.body == CSV_BETTER["body"] and pending.extra_metadata["pending"] == "trial"
    # the trial compares new against old: every matching turn gets one of the two versions
    arms: dict[str, int] = {"with": 0, "without": 0}
    for i in range(40):
        ctx = TurnContext(f"s{i}", tenant="team-a")
        inj = lib.bank.injection(ctx, [{"role": "user", "content": QUERY}])
        arm = ctx.metadata[SHADOW_KEY]["kafka-consumer-offsets"]
        arms[arm] += 1
        assert "kafka-consumer-offsets" in inj.names
        assert ("which partition lag and reset policy" in inj.text) == (arm == "with")
    assert arms["with"] >= 8 and arms["without"] >= 8
    versions = lib.store.versions("kafka-consumer-offsets")
    assert [(v["version"], v["state"]) for v in versions] == [(1, "served"), (2, "trial")]
    # the new version wins: it is served, the old one is kept as superseded
    lib.store.promote_pending("kafka-consumer-offsets", actor="shadow-trial", reason="won")
    lib.bank.refresh(force=True)
    assert lib.bank.skills["kafka-consumer-offsets"].body == CSV_BETTER["body"]
    assert not lib.bank.pending
    assert [(v["version"], v["state"]) for v in lib.store.versions("kafka-consumer-offsets")] == [
        (1, "superseded"),
        (2, "served"),
    ]


def test_a_losing_version_is_discarded_and_the_old_one_serves_on(home: Path):
    with Upstream(replies=[json.dumps({"skills": [CSV]}), json.dumps({"skills": [CSV_BETTER]})]) as up:
        lib = Lib(home, up, promotion="auto")
        lib.evolve("team-a")
        lib.settings.evolution.promotion = "review"
        (d,) = lib.evolve("team-a").decisions
    assert d.decision == "review" and lib.bank.skills["kafka-consumer-offsets"].body == CSV["body"]
    assert lib.store.discard_pending("kafka-consumer-offsets", actor="test") == 2
    lib.bank.refresh(force=True)
    assert not lib.bank.pending and lib.bank.skills["kafka-consumer-offsets"].body == CSV["body"]
    assert lib.store.versions("kafka-consumer-offsets")[-1]["state"] == "rejected"
    assert lib.store.read_version("kafka-consumer-offsets", 2).body == CSV_BETTER["body"]  # kept on disk


def run_cli(home: Path, *args: str) -> Any:
    res = CliRunner().invoke(cli_main, [*args, "--json"], env={"METACLAW_HOME": str(home)}, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_history_shows_versions_with_diffs_and_rollback_restores_one(home: Path):
    with Upstream(replies=[json.dumps({"skills": [CSV]}), json.dumps({"skills": [CSV_BETTER]})]) as up:
        lib = Lib(home, up, promotion="auto")
        lib.evolve("team-a")
        lib.evolve("team-a")  # auto: the refinement is served at once, v1 superseded
    hist = run_cli(home, "skills", "history", "kafka-consumer-offsets")
    assert [(v["version"], v["state"]) for v in hist["versions"]] == [(1, "superseded"), (2, "served")]
    assert "+3. Tell the user which partition lag and reset policy you found." in hist["versions"][1]["diff"]
    out = run_cli(home, "skills", "rollback", "kafka-consumer-offsets")
    assert out["version"] == 3 and out["status"] == "active"
    assert lib.store.read("kafka-consumer-offsets").body == CSV["body"]
    assert lib.store.generation == out["generation"]
    out = run_cli(home, "skills", "rollback", "kafka-consumer-offsets", "--to", "2")
    assert out["version"] == 4 and lib.store.read("kafka-consumer-offsets").body == CSV_BETTER["body"]
    states = [v["state"] for v in run_cli(home, "skills", "history", "kafka-consumer-offsets")["versions"]]
    assert states == ["superseded", "superseded", "superseded", "served"]
    res = CliRunner().invoke(
        cli_main, ["skills", "rollback", "kafka-consumer-offsets", "--to", "9"], env={"METACLAW_HOME": str(home)}
    )
    assert res.exit_code != 0 and "no version 9" in res.output


def test_a_skill_written_before_versions_is_adopted_as_version_one(home: Path):
    store = SkillStore(home / "skills")
    store.seed_from(bundled_skills_dir())
    assert store.versions("csv-quoting") == [{"version": 1, "state": "served", "adopted": True}]
    old = store.read("csv-quoting")
    with pytest.raises(ValueError, match="served now"):  # v1 is the one served: nothing earlier to restore
        store.rollback("csv-quoting", 1, actor="test")
    store.add_batch([replace(old, body=old.body + "\nextra line")], actor="test")
    assert [(v["version"], v["state"]) for v in store.versions("csv-quoting")] == [(1, "superseded"), (2, "served")]
    assert store.read_version("csv-quoting", 1).body == old.body
    restored = store.rollback("csv-quoting", actor="test")
    assert restored.body == old.body and restored.status == "active"


def test_a_skill_on_trial_is_labelled_trial_with_its_evidence(home: Path):
    with Upstream(replies=[json.dumps({"skills": [CSV]})]) as up:
        lib = Lib(home, up, promotion="shadow")
        lib.evolve("team-a")
    items = {i["name"]: i for i in run_cli(home, "skills", "list")}
    item = items["kafka-consumer-offsets"]
    assert item["status"] == "quarantined" and item["label"] == "trial"
    assert item["trial"]["arm_share"] == 0.5 and item["trial"]["n_with"] == 0 and item["trial"]["p_better"] == 0.5
    assert {i["name"] for i in run_cli(home, "skills", "list", "--status", "trial")} == {"kafka-consumer-offsets"}
    assert "kafka-consumer-offsets" not in {
        i["name"] for i in run_cli(home, "skills", "list", "--status", "quarantined")
    }


def test_a_new_version_wins_its_trial_against_the_old_one_in_the_running_loop(home: Path):
    """Through the plugin and the learning loop: the refinement goes on trial, turns are split between
    the versions and scored, and the evidence promotes the new version."""
    replies = iter([json.dumps({"skills": [CSV]}), json.dumps({"skills": [CSV_BETTER]})])

    def script(body: dict) -> str:
        system = body["messages"][0]["content"]
        if "skill engineer" in system:
            return next(replies)
        if "security reviewer" in system:
            return json.dumps({"verdict": "safe", "reasons": []})
        return "Score: -1" if "strict reviewer" in system else "host reply"

    with Upstream(script=script) as up:
        common = {"api_base": up.url, "api_key": "x", "backoff": 0.01, "retries": 0}
        s = Settings(
            home=home,
            evolution={
                "model": "openai/evolver",
                "promotion": "auto",
                "shadow_min_samples": 4,
                "shadow_confidence": 0.9,
                **common,
            },
            reward={"model": "openai/judge", "review_wait": 1.0, **common},
        )
        p = MetaClawPlugin(s).start()
        try:

            def fail_once(sid: str) -> None:
                ctx = TurnContext(sid, tenant="team-a")
                p.on_request(ctx, [{"role": "user", "content": QUERY}])
                p.on_response(ctx, {"role": "assistant", "content": "split on commas"})
                p.on_session_end(ctx, {"success": False})

            def wait(cond: Any) -> None:
                def settled() -> Any:
                    if cond():
                        return True
                    p.flush(5)
                    p.learning.tick(force=True)
                    return False

                wait_for(settled, 60, lambda: p.learning.status())

            fail_once("f1")
            wait(lambda: "kafka-consumer-offsets" in p.skills.skills)
            p.settings.evolution.promotion = "shadow"
            fail_once("f2")
            wait(lambda: "kafka-consumer-offsets" in p.skills.pending)
            assert p.skills.skills["kafka-consumer-offsets"].body == CSV["body"]
            for i in range(30):
                ctx = TurnContext(f"trial-{i}", tenant="team-a")
                out = p.on_request(ctx, [{"role": "user", "content": f"{QUERY} (batch {i})"}])
                newer = "partition lag" in out[0]["content"]
                p.on_response(ctx, {"role": "assistant", "content": "done"})
                p.on_feedback(ctx, newer)  # the new version helps, the old one does not
                p.on_session_end(ctx)
            wait(lambda: "kafka-consumer-offsets" not in p.skills.pending)
            assert p.skills.skills["kafka-consumer-offsets"].body == CSV_BETTER["body"]
            last = p.skills.store.history("kafka-consumer-offsets")[-1]
            assert last["event"] == "promote" and last["actor"] == "shadow-trial" and "P(better)" in last["reason"]
        finally:
            p.stop()
