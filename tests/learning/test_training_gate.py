"""The behaviour gate and the live watch (issue 43): a step whose answers on held-back prompts score worse is
undone, not published; one that keeps them is published; a published version whose live rewards fall is rolled
back automatically. On the tiny local model (CPU, greedy answers, fixed seeds) and on the Tinker fake, scored by the
slow loop's own verifier (a registered check for the turns' task type, found through the ledger)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from click.testing import CliRunner  # noqa: E402
from training_support import PROMPT, FakeService, a_and_b, capture, mark_task_type  # noqa: E402

from metaclaw_plugin import Settings  # noqa: E402
from metaclaw_plugin.devtools.tinymodel import build_tiny_model  # noqa: E402
from metaclaw_plugin.learning.gate_scoring import score_gate  # noqa: E402
from metaclaw_plugin.learning.reward import Verifiers  # noqa: E402
from metaclaw_plugin.store import Database, steps  # noqa: E402
from metaclaw_plugin.store.policy_tokens import TokenRecord  # noqa: E402
from metaclaw_plugin.training import chat, tokens  # noqa: E402
from metaclaw_plugin.training.buffer import SampleBuffer  # noqa: E402
from metaclaw_plugin.training.gate import gate_state  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.status import describe, training_status  # noqa: E402
from metaclaw_plugin.training.trainer import last_steps, skipped_steps  # noqa: E402
from metaclaw_plugin.training.weights import latest  # noqa: E402

SLICE = 4


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


def _settings(home: Path, tiny: Path | str, **gate: Any) -> Settings:
    training = {
        "base_model": str(tiny),
        "device": "cpu",
        "learning_rate": 2e-2,
        "off_policy": "reinforce",
        "group_size": 1,  # the batches stand for a judge that got it wrong: no resampled answer corrects them
        "gate": {"size": SLICE, "min_prompts": SLICE, "temperature": 0.0, "max_new_tokens": 8, "max_kl": 50.0, **gate},
    }
    return Settings(home=home, training=training)


def _no_yes(turn: dict[str, Any]) -> bool:
    """The task's check: the deploy failed, so an answer that says yes is wrong."""
    return "yes" not in str(turn["response"]).lower()


def _slice_home(home: Path, train_rows: list[Any], tenant: str = "default") -> None:
    """``SLICE`` held-back turns of ``tenant``, then ``train_rows`` queued for training, all of the task type
    ``deploy`` (in the ledger, as the learning loop writes it)."""
    db_file = home / "metaclaw.db"
    ids = capture(db_file, [(PROMPT, "no", -1.0)] * SLICE, tenant=tenant)
    assert sum(SampleBuffer(Database(db_file)).hold_back(SLICE, keep=0) for _ in range(SLICE + 1)) == SLICE
    ids += capture(db_file, train_rows, tenant=tenant)  # the slice turns over as batches drain: these are held too
    mark_task_type(db_file, ids, "deploy")


def _trainer(settings: Settings, published: list[Any] | None = None, **kw: Any) -> Any:
    checks = Verifiers()
    checks.register("deploy", _no_yes)
    return score_gate(
        build_trainer(settings, publish=None if published is None else published.append, **kw), settings, checks
    )


def _lora(trainer: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in trainer.backend.model.named_parameters() if v.requires_grad}


def test_a_step_whose_answers_score_worse_is_undone_not_published(home: Path, tiny: Path) -> None:
    """The batch rewards "yes" (a judge that got it wrong): after the step the model answers "yes" to the held-back
    prompts, which the task's verifier fails, where the serving weights' answers passed."""
    _slice_home(home, [(PROMPT, "yes", 1.0), (PROMPT, "no", -1.0)] * 2)
    published: list[Any] = []
    settings = _settings(home, tiny)
    trainer = _trainer(settings, published)
    before = _lora(trainer)
    report = trainer.run(lambda: True)
    assert report.held_back == 1 and report.steps == 0 and trainer.step == 0
    assert report.results[0].reason == "the gate: success fell"
    assert all(torch.equal(before[k], v) for k, v in _lora(trainer).items())
    assert trainer.backend.optimizer.state_dict()["state"] == {}
    assert published == [] and latest(trainer.db) is None and last_steps(trainer.db) == []
    assert skipped_steps(trainer.db)["reasons"] == {"the gate: success fell": 1}
    state = gate_state(trainer.db)
    assert state is not None and state["counts"] == {"applied": 0, "refused": 1, "not_applied": 0}
    last = state["last"]
    assert last["scored"] == SLICE and last["serving_mean"] == 1.0 and last["new_mean"] == -1.0
    stats = trainer.buffer.stats()
    assert stats.validation == SLICE and stats.skipped == 4 and stats.trained == 0
    line = describe(training_status(settings))
    assert "1 refused" in line and "refused by success 1" in line


def test_a_step_that_keeps_the_answers_good_is_published(home: Path, tiny: Path) -> None:
    _slice_home(home, [(PROMPT, "no", 1.0), (PROMPT, "yes", -1.0)] * 2)
    published: list[Any] = []
    trainer = _trainer(_settings(home, tiny), published)
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.held_back == 0 and len(published) == 1
    (row,) = last_steps(trainer.db)
    gate = row["detail"]["gate"]
    assert gate["applied"] and gate["publish"] and gate["scored"] == SLICE
    assert gate["serving_mean"] == gate["new_mean"] == 1.0 and gate["kl"] > 0
    assert gate_state(trainer.db)["counts"]["applied"] == 1  # type: ignore[index]


def test_a_step_past_the_kl_budget_is_undone(home: Path, tiny: Path) -> None:
    _slice_home(home, [(PROMPT, "no", 1.0), (PROMPT, "yes", -1.0)] * 2)
    trainer = _trainer(_settings(home, tiny, max_kl=1e-4))
    report = trainer.run(lambda: True)
    assert report.held_back == 1 and report.results[0].reason == "the gate: KL over its budget"
    assert gate_state(trainer.db)["last"]["kl"] > 1e-4  # type: ignore[index]


def test_without_a_scorer_the_likelihood_check_stands_in_and_status_says_so(home: Path, tiny: Path) -> None:
    """No verifier for the task and no judge: success is not compared; the held-back rewarded answers' likelihood
    decides (the "no" answers were punished: a batch rewarding "no" lowers the score)."""
    _slice_home(home, [(PROMPT, "no", 1.0), (PROMPT, "yes", -1.0)] * 2)
    db = Database(home / "metaclaw.db")
    capture(home / "metaclaw.db", [(PROMPT, "yes", 1.0)])  # a rewarded answer beside the punished ones
    assert SampleBuffer(db).hold_back(SLICE + 1, keep=0) == 1
    settings = _settings(home, tiny)
    trainer = score_gate(build_trainer(settings), settings, Verifiers())
    report = trainer.run(lambda: True)
    assert report.held_back == 1 and report.results[0].reason == "validation score fell"
    state = gate_state(trainer.db)
    assert state is not None and "no verifier is registered" in state["scoring_off"]
    assert "success not compared" in describe(training_status(settings))


def test_too_few_held_back_prompts_publish_ungated_and_count_it(home: Path, tiny: Path) -> None:
    capture(home / "metaclaw.db", a_and_b(1))
    trainer = _trainer(_settings(home, tiny))
    assert trainer.run(lambda: True).steps == 1
    state = gate_state(trainer.db)
    assert state is not None and state["counts"] == {"applied": 0, "refused": 0, "not_applied": 1}
    assert state["last"]["reason"] == f"0 held-back prompts, fewer than {SLICE}"


def test_under_scope_tenant_a_step_is_judged_on_its_own_tenants_prompts_only(home: Path, tiny: Path) -> None:
    """Tenant a's held-back prompts fail a "yes"; both tenants' batches reward "yes". a's step is refused on a's
    slice; b has no held-back prompt of its own, so its step is published ungated: a's prompts never judge b's."""
    rows = [(PROMPT, "yes", 1.0), (PROMPT, "no", -1.0)] * 2
    _slice_home(home, rows, tenant="a")
    mark_task_type(home / "metaclaw.db", capture(home / "metaclaw.db", rows, tenant="b"), "deploy")
    settings = _settings(home, tiny)
    assert settings.training.scope_in_effect()[0] == "tenant"
    trainer = _trainer(settings)
    report = trainer.run(lambda: True)
    assert [(r.outcome, r.reason) for r in report.results] == [("held_back", "the gate: success fell"), ("applied", "")]
    assert latest(trainer.db, "a") is None and latest(trainer.db, "b") is not None
    state = gate_state(trainer.db)
    assert state is not None and state["counts"] == {"applied": 0, "refused": 1, "not_applied": 1}
    assert state["last"]["reason"] == f"0 held-back prompts, fewer than {SLICE}"
    assert "held-back prompts per tenant" in describe(training_status(settings))


def test_a_tenants_slice_fills_and_turns_over_on_its_own_samples(home: Path) -> None:
    buffer = SampleBuffer(Database(home / "metaclaw.db"))
    capture(home / "metaclaw.db", [(PROMPT, "x", 1.0)] * 5, tenant="a")
    b = capture(home / "metaclaw.db", [(PROMPT, "y", 1.0)] * 3, tenant="b")
    assert buffer.hold_back_spare(2, 4, "b") == 1 and buffer.hold_back_spare(2, 4, "b") == 1
    assert {s.turn_id for s in buffer.validation("b")} == set(b[1:]) and buffer.validation("a") == []
    assert buffer.hold_back_spare(2, 4, "a") == 1  # a's own slice: b's full one takes nothing of a's
    assert buffer.hold_back_spare(2, 4, "b") == 0  # b's newest queued is older than its held ones: nothing to swap
    assert len(buffer.validation("a")) == 1 and len(buffer.validation()) == 3


def test_the_slice_fills_from_part_batches_and_then_turns_over(home: Path) -> None:
    db = Database(home / "metaclaw.db")
    buffer = SampleBuffer(db)
    capture(home / "metaclaw.db", a_and_b(2))  # 8 queued: two whole batches of 4, nothing to spare
    assert buffer.hold_back_spare(2, 4) == 0
    capture(home / "metaclaw.db", [(PROMPT, "x", 1.0)] * 3)  # a part batch waits anyway
    assert buffer.hold_back_spare(2, 4) == 1 and buffer.hold_back_spare(2, 4) == 1
    first = {s.turn_id for s in buffer.validation()}
    time.sleep(0.01)
    capture(home / "metaclaw.db", [(PROMPT, "new", 1.0)])
    assert buffer.hold_back_spare(2, 4) == 1  # full: the newest in, the oldest back to the queue
    now = {s.turn_id for s in buffer.validation()}
    assert len(now) == 2 and len(now & first) == 1 and buffer.stats().queued == 10


def test_the_gate_stops_when_the_user_returns(home: Path, tiny: Path) -> None:
    """A pause during the gate's answers after the optimiser step undoes the step and puts the batch back."""
    _slice_home(home, [(PROMPT, "no", 1.0), (PROMPT, "yes", -1.0)] * 2)
    trainer = _trainer(_settings(home, tiny))
    before = _lora(trainer)

    def go_on() -> bool:  # the user returns once the optimiser step is taken, while the gate judges it
        return bool(trainer.backend.optimizer.state_dict()["state"] == {})

    report = trainer.run(go_on)
    assert report.paused and report.steps == 0 and trainer.step == 0
    assert all(torch.equal(before[k], v) for k, v in _lora(trainer).items())
    assert trainer.buffer.stats().queued == 4 and latest(trainer.db) is None


# Tinker ------------------------------------------------------------------------------------------------------
def _tinker(home: Path, tiny: Path, answers: dict[int, str]) -> tuple[Any, FakeService, list[Any]]:
    from metaclaw_plugin.training.backends.tinker import TinkerBackend
    from metaclaw_plugin.training.runtime import Hyper

    settings = Settings(
        home=home,
        training={
            "backend": "tinker",
            "base_model": "Qwen/Qwen3-8B",
            "off_policy": "reinforce",
            "gate": {"size": SLICE, "min_prompts": SLICE},
        },
    )
    from transformers import AutoTokenizer

    service = FakeService(AutoTokenizer.from_pretrained(tiny))
    service.answers, service.logprob = answers, {0: -1.0, 1: -1.02, 2: -1.02}
    backend = TinkerBackend("Qwen/Qwen3-8B", service=service, hyper=Hyper.from_settings(settings.training))
    published: list[Any] = []
    return _trainer(settings, published, backend=(backend, service.tokenizer)), service, published


def test_tinker_a_worse_step_is_undone_on_the_service(home: Path, tiny: Path) -> None:
    _slice_home(home, [(PROMPT, "yes", 1.0), (PROMPT, "no", -1.0)] * 2)
    trainer, service, published = _tinker(home, tiny, {0: "no, it failed", 1: "yes"})
    report = trainer.run(lambda: True)
    assert report.held_back == 1 and report.results[0].reason == "the gate: success fell"
    assert published == [] and latest(trainer.db) is None and trainer.step == 0
    assert "optim_step" in service.calls and "save_weights_for_sampler" not in service.calls
    # undone: the run that took the step is dropped; the next use opens a new one from the base
    assert trainer.backend.client.version == 0 and len(service.clients) == 2


def test_tinker_a_step_that_keeps_the_answers_is_published(home: Path, tiny: Path) -> None:
    _slice_home(home, [(PROMPT, "no", 1.0), (PROMPT, "yes", -1.0)] * 2)
    trainer, _, published = _tinker(home, tiny, {0: "no, it failed", 1: "no, it failed"})
    report = trainer.run(lambda: True)
    assert report.steps == 1 and len(published) == 1
    gate = last_steps(trainer.db)[0]["detail"]["gate"]
    # every token 0.02 nats less likely under the new weights: k3 = expm1(-0.02) + 0.02 per token
    assert gate["applied"] and gate["diff"] == 0.0 and gate["kl"] == pytest.approx(math.expm1(-0.02) + 0.02)


# The live watch ------------------------------------------------------------------------------------------------
def _served(home: Path, tokenizer: Any, step: int, answers: list[tuple[str, float]], tenant: str = "default") -> None:
    """Turns the served policy answered with step ``step``'s weights (its token records name the step)."""
    db = Database(home / "metaclaw.db")
    prompt = chat.prompt_ids(tokenizer, PROMPT)
    for text, _ in answers:
        ids = tokenizer.encode(text, add_special_tokens=False)
        rec = TokenRecord(prompt, ids, [-0.5] * len(ids), weights=f"step-{step}", step=step)
        tokens.record(db, tokens.response_key(text), rec)
    capture(home / "metaclaw.db", [(PROMPT, text, r) for text, r in answers], tenant=tenant)


def test_a_version_whose_live_rewards_fall_is_rolled_back(home: Path, tiny: Path) -> None:
    settings = _settings(home, tiny, enabled=False, watch_min_turns=6)
    settings.training.scope = "global"
    capture(home / "metaclaw.db", a_and_b(1))
    trainer = build_trainer(settings)
    assert trainer.run(lambda: True).steps == 1  # step 1
    good = [(f"done {i}", 1.0 if i % 3 else 0.0) for i in range(6)]
    _served(home, trainer.tokenizer, 1, good)
    capture(home / "metaclaw.db", a_and_b(1))
    assert trainer.run(lambda: True, max_steps=1).steps == 1 and latest(trainer.db).step == 2  # type: ignore[union-attr]
    # the runs below train nothing (the window shuts at once): the watch runs first, a rollback is followed
    _served(home, trainer.tokenizer, 2, [(f"broken {i}", -1.0) for i in range(5)])
    trainer.run(lambda: False)
    assert latest(trainer.db).step == 2, "5 turns are fewer than watch_min_turns: no verdict yet"  # type: ignore[union-attr]
    _served(home, trainer.tokenizer, 2, [("broken 5", -1.0)])
    trainer.run(lambda: False)
    assert latest(trainer.db).step == 1 and trainer.step == 1  # type: ignore[union-attr]
    state = gate_state(trainer.db)
    assert state is not None and state["rollbacks"] == 1
    assert state["last_rollback"]["from"] == 2 and state["last_rollback"]["to"] == 1
    assert "1 automatic rollbacks" in describe(training_status(settings))


def test_under_scope_tenant_the_watch_rolls_back_only_the_tenant_whose_rewards_fell(home: Path, tiny: Path) -> None:
    """Tenants a and b each publish two versions (a: steps 1, 3; b: 2, 4). a's live rewards fall on step 3 while
    b's hold on step 4: a goes back to step 1, b keeps step 4, and a's next turn trains on from step 1."""
    settings = _settings(home, tiny, enabled=False, watch_min_turns=6)
    db_file = home / "metaclaw.db"
    for tenant in ("a", "b"):
        capture(db_file, a_and_b(1), tenant=tenant)
    trainer = build_trainer(settings)
    assert trainer.run(lambda: True).steps == 2  # a: step 1, b: step 2
    good = [1.0 if i % 3 else 0.0 for i in range(6)]
    _served(home, trainer.tokenizer, 1, [(f"a done {i}", r) for i, r in enumerate(good)], tenant="a")
    _served(home, trainer.tokenizer, 2, [(f"b done {i}", r) for i, r in enumerate(good)], tenant="b")
    for tenant in ("a", "b"):
        capture(db_file, a_and_b(1), tenant=tenant)
    assert trainer.run(lambda: True, max_steps=2).steps == 2  # a: step 3, b: step 4
    _served(home, trainer.tokenizer, 3, [(f"a broken {i}", -1.0) for i in range(6)], tenant="a")
    _served(home, trainer.tokenizer, 4, [(f"b fine {i}", r) for i, r in enumerate(good)], tenant="b")
    trainer.run(lambda: False)  # trains nothing: the watch runs first
    assert latest(trainer.db, "a").step == 1 and latest(trainer.db, "b").step == 4  # type: ignore[union-attr]
    assert sorted(steps.weights(trainer.db, "a")) == [1] and sorted(steps.weights(trainer.db, "b")) == [2, 4]
    state = gate_state(trainer.db)
    assert state is not None and state["rollbacks"] == 1
    assert state["last_rollback"]["tenant"] == "a" and state["last_rollback"]["from"] == 3
    assert trainer.tenants is not None
    trainer.tenants.activate("a")
    assert trainer.tenants.step == 1
    assert "live watch on per tenant, 1 automatic rollbacks (last of tenant a" in describe(training_status(settings))


def test_the_gate_settings_validate_and_doctor_shows_the_gate(home: Path) -> None:
    from pydantic import ValidationError

    from metaclaw_plugin.cli import main

    with pytest.raises(ValidationError):
        Settings(home=home, training={"gate": {"min_prompts": 9, "size": 8}})
    with pytest.raises(ValidationError):
        Settings(home=home, training={"gate": {"max_kl": 0}})
    assert Settings(home=home).training.gate.enabled and Settings(home=home).training.gate.watch
    (home / "config.yaml").write_text(json.dumps({"training": {"gate": {"enabled": False}}}))
    out = CliRunner().invoke(main, ["doctor", "--json"])
    check = next(c for c in json.loads(out.stdout)["checks"] if c["check"] == "training gate")
    assert "behaviour gate off (training.gate.enabled)" in check["detail"] and "live watch on" in check["detail"]
