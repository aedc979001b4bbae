"""The slow loop on Tinker, against a fake of the service that checks what it is sent with the real SDK's types
and signatures, keeps each run's weights version and its checkpoints, and rejects what the service would (a state
it does not hold, a step without gradients, a TTL out of range): a restart never reverts a published step, a step
whose result was lost is never applied twice, the run a restart continues is said, superseded checkpoints expire,
``train rollback`` works, and groups without variance send nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tinker")

from click.testing import CliRunner
from training_support import PROMPT, FakeService, a_and_b, capture

from metaclaw_plugin import Settings
from metaclaw_plugin.cli import main as cli_main
from metaclaw_plugin.devtools.tinymodel import build_tiny_model
from metaclaw_plugin.training.backends import Hyper, StepInDoubt
from metaclaw_plugin.training.backends.tinker import TinkerBackend
from metaclaw_plugin.training.runtime import build_trainer
from metaclaw_plugin.training.status import describe, training_status
from metaclaw_plugin.training.trainer import Trainer, last_steps
from metaclaw_plugin.training.weights import latest

MODEL = "Qwen/Qwen3-8B"
OTHER = [{"role": "user", "content": "Which port does the service listen on?"}]


@pytest.fixture(scope="module")
def tok(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0))


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINKER_API_KEY", "not-sent-anywhere")  # status reads the backend as on; nothing is sent


def _settings(home: Path, **training: Any) -> Settings:
    base = {"backend": "tinker", "base_model": MODEL, "off_policy": "reinforce", "batch_size": 2}
    return Settings(home=home, training={**base, **training})


def _trainer(home: Path, service: FakeService, tok: Any, **training: Any) -> Trainer:
    settings = _settings(home, **training)
    backend = TinkerBackend(MODEL, service=service, hyper=Hyper.from_settings(settings.training))
    return build_trainer(settings, backend=(backend, tok))


def _crash_after(steps: int, trainer: Trainer) -> Any:
    """A should_continue that kills the process (an exception out of ``run``) once ``steps`` steps were applied."""

    def go_on() -> bool:
        if trainer.step >= steps:
            raise KeyboardInterrupt("killed mid-window")
        return True

    return go_on


def test_a_process_killed_mid_window_resumes_its_last_published_step(tmp_path: Path, tok: Any):
    """No window end was reached: the full state saved with each step is what the restart continues, in a run
    that says which run it continues."""
    capture(tmp_path / "metaclaw.db", a_and_b(2))  # four batches of two
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok)
    with pytest.raises(KeyboardInterrupt):
        trainer.run(_crash_after(3, trainer))
    ref = latest(trainer.db)
    assert ref is not None and ref.step == 3
    again = _trainer(tmp_path, service, tok)
    assert again.step == 3  # not 0: the published steps 1-3 are neither reverted nor published again
    run = service.clients[-1]
    assert run.loaded_from == "tinker://fake-run-0/weights/metaclaw-state-000003" and run.version == 3
    assert again.run(lambda: True).steps == 1 and latest(again.db).step == 4  # type: ignore[union-attr]
    status = training_status(_settings(tmp_path))
    assert status["run"]["id"] == "fake-run-1" and status["run"]["continues"] == "fake-run-0"
    assert status["reverted"] is None and "run fake-run-1 continuing run fake-run-0" in describe(status)
    assert service.calls.count("create_lora_training_client") == 1  # one fresh LoRA run, ever


def test_a_state_the_service_no_longer_holds_starts_a_new_run_and_says_so(tmp_path: Path, tok: Any):
    capture(tmp_path / "metaclaw.db", a_and_b(2))
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok)
    assert trainer.run(lambda: True, max_steps=3).steps == 3
    del service.checkpoints["tinker://fake-run-0/weights/metaclaw-state-000003"]  # deleted on the service
    again = _trainer(tmp_path, service, tok)
    assert "cannot resume from tinker://fake-run-0/weights/metaclaw-state-000003" in (again.resume_error or "")
    # the numbers go on after the last published step: version 1 is never published twice for other weights
    assert again.step == 3 and again.run(lambda: True).steps == 1 and latest(again.db).step == 4  # type: ignore[union-attr]
    assert service.clients[-1].version == 1 and service.calls.count("create_lora_training_client") == 2
    status = training_status(_settings(tmp_path))
    assert status["run"]["continues"] is None and "404" in status["run"]["new_because"]
    assert status["reverted"]["published"] == 3 and status["reverted"]["resumed"] == 0
    line = describe(status)
    assert "run fake-run-1 (new: cannot resume" in line and "steps 1-3 were published without a full state" in line


def test_a_step_whose_result_was_lost_is_applied_once(tmp_path: Path, tok: Any):
    """The service applied the optimiser step and the connection dropped before its result came back. The batch
    goes back to the queue; before it is retried, the trainer restores the last full state (the service's step
    is then the trainer's), so the batch is applied once in the weights that are trained on and published."""
    capture(tmp_path / "metaclaw.db", a_and_b(1))  # two batches of two
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok)
    assert trainer.run(lambda: True, max_steps=1).steps == 1
    service.clients[-1].lose_optim_result = 1
    with pytest.raises(StepInDoubt, match="outcome was lost"):
        trainer.run(lambda: True)
    assert service.clients[-1].version == 2 and trainer.step == 1  # applied there, not here
    assert trainer.buffer.stats().queued == 2  # released for the retry
    report = trainer.run(lambda: True)
    assert report.steps == 1 and trainer.step == 2
    client = service.clients[-1]
    assert client.loaded_from == "tinker://fake-run-0/weights/metaclaw-state-000001"
    assert client.version == trainer.step == 2  # step 1's state + the retried batch, once
    assert [r["step"] for r in last_steps(trainer.db, 5)] == [2, 1]


def test_superseded_checkpoints_expire_after_the_set_ttl(tmp_path: Path, tok: Any):
    capture(tmp_path / "metaclaw.db", a_and_b(1))
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok, checkpoint_ttl_hours=2)
    assert trainer.run(lambda: True).steps == 2
    ttls = {p.rsplit("/", 1)[1]: c["ttl"] for p, c in service.checkpoints.items()}
    assert ttls == {
        "metaclaw-state-000001": 7200,
        "metaclaw-step-000001": 7200,
        "metaclaw-state-000002": None,  # the latest, served and resumed from: never expires
        "metaclaw-step-000002": None,
    }
    assert trainer.expire_errors == 0


def _rollback(home: Path, service: FakeService, *args: str) -> Any:
    import tinker

    (home / "config.yaml").write_text(json.dumps({"training": {"backend": "tinker", "base_model": MODEL}}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tinker, "ServiceClient", lambda: service)
        mp.setenv("METACLAW_HOME", str(home))
        return CliRunner().invoke(cli_main, ["train", "rollback", *args, "--json"])


def test_train_rollback_on_tinker_serves_an_earlier_step_and_trains_on_from_its_state(tmp_path: Path, tok: Any):
    capture(tmp_path / "metaclaw.db", a_and_b(2))
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok)
    assert trainer.run(lambda: True, max_steps=3).steps == 3
    res = _rollback(tmp_path, service, "--to", "1")
    assert res.exit_code == 0, res.output
    done = json.loads(res.stdout)
    assert done["to"] == 1 and done["abandoned_steps"] == [2, 3]
    assert done["weights"]["path"] == "tinker://fake-run-0/sampler_weights/metaclaw-step-000001"
    # step 1's two checkpoints are kept from expiring: they are served and trained on again
    assert service.checkpoints["tinker://fake-run-0/sampler_weights/metaclaw-step-000001"]["ttl"] is None
    assert service.checkpoints["tinker://fake-run-0/weights/metaclaw-state-000001"]["ttl"] is None
    # the running trainer follows before its next step: from step 1's full state, in a run continuing it
    assert trainer.run(lambda: True).steps == 1 and trainer.step == 2
    client = service.clients[-1]
    assert client.loaded_from == "tinker://fake-run-0/weights/metaclaw-state-000001" and client.version == 2
    assert latest(trainer.db).path == "tinker://fake-run-1/sampler_weights/metaclaw-step-000002"  # type: ignore[union-attr]
    # a fresh process resumes the same way
    assert _trainer(tmp_path, service, tok).step == 2


def test_train_rollback_on_tinker_to_an_expired_step_says_so(tmp_path: Path, tok: Any):
    capture(tmp_path / "metaclaw.db", a_and_b(2))
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok)
    assert trainer.run(lambda: True, max_steps=3).steps == 3
    service.expire("tinker://fake-run-0/sampler_weights/metaclaw-step-000001")  # its TTL ran out
    res = _rollback(tmp_path, service, "--to", "1")
    assert res.exit_code != 0 and "cannot keep step 1's checkpoints" in res.output and "404" in res.output
    assert latest(trainer.db).step == 3  # type: ignore[union-attr]  # nothing changed
    res = _rollback(tmp_path, service, "--to", "7")
    assert res.exit_code != 0 and "for steps 2, 1" in res.output


def test_a_group_without_variance_sends_nothing_and_is_counted(tmp_path: Path, tok: Any):
    """Per-group advantages: one request answered well and badly trains; another answered 0.7 and 0.7 (equal,
    non-integer: its mean's float residue is no signal) is skipped, its samples consumed, the group counted."""
    rows = [(PROMPT, "yes", 1.0), (PROMPT, "no", -1.0), (OTHER, "8080", 0.7), (OTHER, "8080.", 0.7)]
    capture(tmp_path / "metaclaw.db", rows)
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok, batch_size=4, advantage="group")
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.results[0].samples == 2
    assert len(service.clients[0].sent) == 2  # only the group with two different rewards went to the service
    status = training_status(_settings(tmp_path))
    assert status["skipped"]["groups"] == 1 and status["skipped"]["batches"] == 0
    assert status["skipped"]["reasons"] == {"a group with equal rewards": 1} and status["skipped"]["samples"] == 2
    assert "0 batches and 1 groups skipped without signal" in describe(status)


def test_equal_non_integer_rewards_publish_nothing_on_tinker(tmp_path: Path, tok: Any):
    capture(tmp_path / "metaclaw.db", [(PROMPT, "yes", 0.7)] * 3)
    service = FakeService(tok)
    trainer = _trainer(tmp_path, service, tok, batch_size=3)
    report = trainer.run(lambda: True)
    assert report.steps == 0 and report.skipped_batches == 1 and latest(trainer.db) is None
    assert service.calls == []  # no run opened, no forward, no step
    assert training_status(_settings(tmp_path))["skipped"]["reasons"] == {"equal rewards": 1}


def _sent_advantages(service: FakeService) -> list[list[float]]:
    return [d.loss_fn_inputs["advantages"].tolist() for d in service.clients[0].sent]


def test_the_kl_anchor_is_folded_into_the_advantages_from_the_base_models_logprobs(tmp_path: Path, tok: Any):
    """The service's losses have no reference term: each trained token's advantage loses kl_coef times its
    behaviour logprob minus the base model's (scored by a sampling client of the base model), and the step's
    metrics carry that difference's mean. kl_coef 0 sends the advantages as they were and asks the base nothing."""
    sent = {}
    for coef in (0.0, 0.5):
        home = tmp_path / f"kl-{coef}"
        home.mkdir()
        capture(home / "metaclaw.db", a_and_b(1)[:2])  # one batch: "yes" rewarded, "no" punished
        service = FakeService(tok)
        trainer = _trainer(home, service, tok, kl_coef=coef)
        assert trainer.run(lambda: True).steps == 1
        sent[coef] = _sent_advantages(service)
        steps = last_steps(trainer.db, 1)
        if coef:
            assert [s.base_model for s in service.samplers] == [MODEL]  # one client, of the base model
            assert service.calls.count("compute_logprobs") == 2
            # the samples had no behaviour logprobs: the fake's forward gives -1.0, its base -2.0 -> a KL of 1.0
            assert steps[0]["detail"]["kl"] == pytest.approx(1.0) and "kl_error" not in steps[0]["detail"]
        else:
            assert service.samplers == [] and steps[0]["detail"]["kl"] is None
    norm = sum(1 for a in sent[0.0][0] if a) + sum(1 for a in sent[0.0][1] if a)  # the batch's trained tokens
    for plain, anchored in zip(sent[0.0], sent[0.5]):
        trained = [i for i, a in enumerate(plain) if a]
        assert trained and [i for i, a in enumerate(anchored) if a] == trained
        for i in trained:  # A_t - 0.5 * (-1.0 - -2.0), divided by the same norm
            assert anchored[i] == pytest.approx(plain[i] - 0.5 * 1.0 / norm, abs=1e-6)


def test_a_failed_base_call_trains_without_the_anchor_and_the_step_says_why(tmp_path: Path, tok: Any):
    capture(tmp_path / "metaclaw.db", a_and_b(1)[:2])
    service = FakeService(tok)
    real = service.create_sampling_client

    def failing(**kwargs: Any) -> Any:
        client = real(**kwargs)
        client.result().fail = True
        return client

    service.create_sampling_client = failing  # type: ignore[method-assign]
    trainer = _trainer(tmp_path, service, tok, kl_coef=0.5)
    assert trainer.run(lambda: True).steps == 1  # fails open: the step is applied and published
    (step,) = last_steps(trainer.db, 1)
    assert step["detail"]["kl"] is None and "503" in step["detail"]["kl_error"]
    assert latest(trainer.db) is not None
