"""The paper's second trigger path: a training batch whose turns mostly failed feeds the skill evolver.

Real local trainer steps (PEFT LoRA on the tiny model) through ``metaclaw-plugin train`` and through the plugin's
own scheduler; the evolver is the scripted local server of the fast-loop tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("litellm")  # the evolver's client: without it the evolver is off, and so is this trigger

from click.testing import CliRunner
from fastloop_support import Roles, failing_session, settings_for, wait_for
from training_support import ANSWER_A, ANSWER_B, FAST_SCHEDULER, PROMPT, capture

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.devtools.tinymodel import build_tiny_model
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.learning.failed_batches import FailedBatches
from metaclaw_plugin.store import Database
from metaclaw_plugin.training.status import describe
from metaclaw_plugin.types import Sample


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


def rl_settings(home: Path, up: Upstream, base: Path, **over: Any) -> Settings:
    """A host in mode rl that trains on the tiny model as soon as a batch is ready, with the scripted judge and
    evolver; a session's failures alone (two) are too few to evolve on (``min_failures`` 3), so they are trained."""
    evolution = {"promotion": "auto", "min_failures": 3, **over.pop("evolution", {})}
    return settings_for(
        home,
        up,
        mode="rl",
        evolution=evolution,
        training={
            "base_model": str(base),
            "device": "cpu",
            "batch_size": 4,
            "max_tokens": 1024,
            "off_policy": "reinforce",
        },
        scheduler=FAST_SCHEDULER,
        injection={"max_injected_tokens": 120, "convention_tokens": 0},  # the tiny model's context is short
        **over,
    )


def _jobs(db: Database) -> list[tuple[str, str, set[str]]]:
    rows = db.query("SELECT tenant, reason, turn_ids FROM fl_evolve_queue ORDER BY id")
    return [(r["tenant"], r["reason"], set(json.loads(r["turn_ids"]))) for r in rows]


def _turns(n: int, reward: float) -> list[tuple[list[dict[str, Any]], str, float]]:
    return [(PROMPT, ANSWER_A if reward > 0 else ANSWER_B, reward)] * n


def test_train_queues_a_mostly_failed_batch_one_job_per_tenant(home: Path, tiny: Path):
    """Four real steps: all succeeded and half failed queue nothing; three of four failed queue them (less the
    one that is a shadow trial's evidence); two tenants' failures are two jobs. Each turn is queued once, and the
    setting turns the path off."""
    db_file = home / "metaclaw.db"
    capture(db_file, _turns(4, 1.0))  # drained first: every turn succeeded
    half = capture(db_file, _turns(2, -1.0) + _turns(2, 1.0))  # half failed: not "mostly"
    lost = capture(db_file, _turns(3, -1.0) + _turns(1, 0.0))  # three failed, one neither
    team_a = capture(db_file, _turns(2, -1.0), tenant="team-a")  # the fourth batch: two tenants
    team_b = capture(db_file, _turns(2, -1.0), tenant="team-b")
    db = Database(db_file)
    db.execute(  # a shadow trial's evidence is that experiment's, never support
        "INSERT INTO fl_shadow(turn_id, skill, skill_generation, arm, created_at) VALUES (?, 'x', 0, 'with', 0)",
        [lost[0]],
    )
    (home / "config.yaml").write_text(
        json.dumps(
            {
                "training": {  # a batch of two tenants' turns: one set of weights for all (scope global)
                    "base_model": str(tiny),
                    "device": "cpu",
                    "batch_size": 4,
                    "off_policy": "reinforce",
                    "scope": "global",
                },
                "evolution": {"model": "openai/evolver", "api_base": "http://127.0.0.1:9", "api_key": "x"},
            }
        )
    )
    env = {"METACLAW_HOME": str(home)}
    out = CliRunner().invoke(cli_main, ["train", "--json"], env=env)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)  # all succeeded, and two tenants' all failed: equal rewards, no signal
    assert report["steps"] == 2 and report["skipped_batches"] == 2  # skipped, yet handed to the evolver
    assert _jobs(db) == [
        ("default", "train_batch", {lost[1], lost[2]}),
        ("team-a", "train_batch", set(team_a)),
        ("team-b", "train_batch", set(team_b)),
    ]
    counters = dict(db.query("SELECT key, value FROM fl_counters"))
    assert counters["evolution_trigger_train_batch"] == 3
    support = {r["turn_id"]: r["reason"] for r in db.query("SELECT turn_id, reason FROM buffer_support")}
    assert support == {t: "train_batch" for t in [lost[1], lost[2], *team_a, *team_b]}
    assert not set(half) & set(support)

    # the same turns again (another path, another process): claimed already, so no second job
    settings = Settings.load(home / "config.yaml", home=home)
    again = [Sample(t, "s", "team-a", 0, -1.0) for t in team_a]
    assert FailedBatches(db, settings)(again) == [] and len(_jobs(db)) == 3

    status = json.loads(CliRunner().invoke(cli_main, ["status", "--json"], env=env).output)["training"]
    assert status["evolve_on_failed_batch"] is True and status["evolve_failed_share"] == 0.5
    assert "a batch with more than 50% failed turns feeds the evolver" in describe(status)  # status's training row

    # off: a failed batch trains and queues nothing
    capture(db_file, _turns(4, -1.0))
    off = {**env, "METACLAW_TRAINING__EVOLVE_ON_FAILED_BATCH": "false"}
    out = CliRunner().invoke(cli_main, ["train", "--json"], env=off)
    assert out.exit_code == 0 and json.loads(out.stdout)["skipped_batches"] == 1, out.output
    assert len(_jobs(db)) == 3
    status = json.loads(CliRunner().invoke(cli_main, ["status", "--json"], env=off).output)["training"]
    assert status["evolve_on_failed_batch"] is False and "failed batches do not feed the evolver" in describe(status)


def test_a_failed_training_batch_becomes_a_skill_each_turn_reaching_the_evolver_once(home: Path, tiny: Path):
    """The plugin in mode rl: failed sessions whose failures are too few to evolve on their own (min_failures 3)
    become query samples; the scheduler trains them; the batch's failed turns go to the scripted evolver, which
    writes a skill. Later the success-rate window fires over the same turns and sends only the new ones."""
    roles = Roles()
    with Upstream(script=roles) as up:
        window = {"batch_turns": 6, "success_rate_threshold": 0.5}
        p = MetaClawPlugin(rl_settings(home, up, tiny, evolution=window)).start()
        try:
            first = failing_session(p, "tb-1") + failing_session(p, "tb-2")
            wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
            db = p.learning.db
            assert _jobs(db) == [("default", "train_batch", set(first))]
            consumed = "SELECT COUNT(*) AS n FROM buffer_samples WHERE state IN ('trained', 'skipped')"
            assert db.query(consumed)[0]["n"] == 4  # trained, or skipped when every reward was the same
            skill = p.skills.skills["detect-csv-delimiter"]
            assert skill.origin == "evolved" and set(skill.source_sessions) == {"tb-1", "tb-2"}

            later = failing_session(p, "tb-3")  # the window's sixth turn: only these two are sent
            wait_for(p, lambda: len(_jobs(db)) == 2 and roles.evolver_calls == 2)
            assert _jobs(db)[1] == ("default", "low_success_rate", set(later))
            wait_for(p, lambda: {r["state"] for r in db.query("SELECT state FROM fl_evolve_queue")} == {"done"})
            # the evolver was asked twice, about the four trained turns and then the two new ones: none twice
            sent = [_failed_turns(b) for b in up.requests if "skill engineer" in b["messages"][0]["content"]]
            assert [len(x) for x in sent] == [4, 2]
            c = p.learning.status()["counters"]
            assert c["evolution_trigger_train_batch"] == 1 and c["evolution_trigger_low_success_rate"] == 1
        finally:
            p.stop()


def _failed_turns(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The failed turns an evolver request carries."""
    doc = json.loads(body["messages"][1]["content"].split("```json\n", 1)[1].rsplit("\n```", 1)[0])
    return list(doc["failed_turns"])
