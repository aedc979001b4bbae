"""Real GRPO groups (issue 43, item 2): before a step, each captured prompt is answered ``group_size - 1`` more times
by the weights being trained, the answers are scored by the slow loop's own verifier, and advantages are per prompt;
a group whose rewards are equal within ``training.group_tolerance`` is skipped, and a batch with no group left
publishes nothing. On the tiny local model (CPU) and on the Tinker fake; the verifier (a registered check of the
turns' task type, found through the ledger) scores by a fixed sequence, so the rewards do not depend on the tiny
model's text."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import cycle
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from training_support import PROMPT, FakeService, a_and_b, capture, mark_task_type  # noqa: E402

from metaclaw_plugin import Settings  # noqa: E402
from metaclaw_plugin.devtools.tinymodel import build_tiny_model  # noqa: E402
from metaclaw_plugin.learning.gate_scoring import score_gate  # noqa: E402
from metaclaw_plugin.learning.reward import Verifiers  # noqa: E402
from metaclaw_plugin.store import runtime_state  # noqa: E402
from metaclaw_plugin.training.groups import KEY  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.samples import TrainSample  # noqa: E402
from metaclaw_plugin.training.status import describe, training_status  # noqa: E402
from metaclaw_plugin.training.trainer import last_steps, skipped_steps  # noqa: E402
from metaclaw_plugin.training.weights import latest  # noqa: E402

OTHER = [{"role": "user", "content": "Which port does the service listen on?"}]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


LOCAL = {  # the tiny model on CPU; no behaviour gate, so a step's outcome is the groups' alone
    "device": "cpu",
    "learning_rate": 2e-3,
    "off_policy": "reinforce",
    "batch_size": 1,
    "max_tokens": 160,  # resampled answers of the random tiny model stay short
    "gate": {"enabled": False, "watch": False},
}


def _settings(home: Path, tiny: Path, **training: Any) -> Settings:
    return Settings(home=home, training={"base_model": str(tiny), **LOCAL, **training})


def _scores(values: list[float | None]) -> Callable[[dict[str, Any]], float | None]:
    it: Iterator[float | None] = cycle(values)
    return lambda turn: next(it)


def _trainer(settings: Settings, check: Callable[[dict[str, Any]], Any], **kw: Any) -> Any:
    checks = Verifiers()
    checks.register("ops", check)
    return score_gate(build_trainer(settings, **kw), settings, checks)


def _home(home: Path, rows: list[Any], tenant: str = "default") -> list[str]:
    ids = capture(home / "metaclaw.db", rows, tenant=tenant)
    mark_task_type(home / "metaclaw.db", ids, "ops")
    return ids


def _trained(trainer: Any) -> list[TrainSample]:
    """Records the samples of every forward-backward pass."""
    seen: list[TrainSample] = []
    real = trainer.backend.forward_backward

    def record(samples: Any, loss_fn: str, norm: float) -> float:
        seen.extend(samples)
        return float(real(samples, loss_fn, norm))

    trainer.backend.forward_backward = record
    return seen


def _lora(trainer: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in trainer.backend.model.named_parameters() if v.requires_grad}


def test_one_captured_answer_trains_in_a_group_of_resampled_answers(home: Path, tiny: Path) -> None:
    """A batch of one answer had nothing to compare with (skipped); its prompt answered three more times by the
    weights being trained, scored by the verifier, it has a group and a step."""
    (turn_id,) = _home(home, [(PROMPT, "no", 0.7)], tenant="acme")
    settings = _settings(home, tiny)
    trainer = _trainer(settings, _scores([1.0, -1.0, 0.2]))
    seen = _trained(trainer)
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.results[0].samples == 1
    captured = [s for s in seen if not s.resampled]
    resampled = [s for s in seen if s.resampled]
    assert [s.turn_id for s in captured] == [turn_id] and len(resampled) == 3
    assert sorted(s.reward for s in resampled) == [-1.0, 0.2, 1.0]
    for s in resampled:  # the captured prompt, answered by the tenant's current weights, stamped as its prompt
        assert s.prompt_ids == captured[0].prompt_ids and s.group == captured[0].group
        assert s.tenant == "acme" and s.generation == trainer.buffer.generation and s.sampled_step == 0
        assert s.logprobs is not None and len(s.logprobs) == len(s.completion_ids) == len(s.mask)
        assert s.temperature == 1.0
    advantages = [s.advantage for s in seen]
    assert abs(sum(advantages)) < 1e-6 and max(advantages) > 0 > min(advantages)  # per-prompt GRPO advantages
    (row,) = last_steps(trainer.db)
    assert row["detail"]["groups"] == {
        "size": 4,
        "off": None,
        "prompts": 1,
        "resampled": 3,
        "unscored": 0,
        "groups": 1,
        "flat": 0,
    }
    assert row["samples_used"] == 1 and row["mean_reward"] == pytest.approx(0.7)  # the live turn's
    stats = trainer.buffer.stats()
    assert stats.trained == 1 and stats.queued == stats.pending == 0
    line = describe(training_status(settings))
    assert "groups of 4 (advantage group" in line and "3 answers resampled for 1 prompts" in line


@pytest.mark.parametrize("group_size", [4, 1])
def test_equal_non_integer_rewards_publish_nothing(home: Path, tiny: Path, group_size: int) -> None:
    """Three captured answers scored 0.7, and every resampled one 0.7 too: their mean's float residue (~1e-16) is no
    signal. No forward pass, no optimiser step (Adam would move the weights), no version."""
    _home(home, [(PROMPT, "yes", 0.7)] * 3)
    published: list[Any] = []
    settings = _settings(home, tiny, batch_size=3, group_size=group_size)
    trainer = _trainer(settings, _scores([0.7]), publish=published.append)
    seen = _trained(trainer)
    before = _lora(trainer)
    report = trainer.run(lambda: True)
    assert report.steps == 0 and report.skipped_batches == 1 and report.results[0].reason == "equal rewards"
    assert seen == [] and trainer.backend.optimizer.state_dict()["state"] == {}
    assert all(torch.equal(before[k], v) for k, v in _lora(trainer).items())
    assert published == [] and latest(trainer.db) is None and last_steps(trainer.db) == []
    got = runtime_state.get(trainer.db, KEY)
    assert got is not None
    state = got.value
    assert state["groups"] == state["flat"] == 1 and state["resampled"] == 3 * (group_size - 1)
    assert trainer.buffer.stats().skipped == 3


@pytest.mark.parametrize(("tolerance", "steps"), [(1e-6, 1), (1e-3, 0)])
def test_the_group_tolerance_decides_what_is_equal(home: Path, tiny: Path, tolerance: float, steps: int) -> None:
    """Rewards 0.7 and 0.7001: a difference under the default tolerance, none within 1e-3 of the reward scale."""
    _home(home, [(PROMPT, "yes", 0.7)])
    trainer = _trainer(_settings(home, tiny, group_tolerance=tolerance), _scores([0.7001]))
    report = trainer.run(lambda: True)
    assert report.steps == steps and report.skipped_batches == 1 - steps


def test_a_group_without_variance_is_skipped_and_the_rest_trains(home: Path, tiny: Path) -> None:
    """Two prompts: one whose answers all score 0.7 is consumed as skipped and counted; the other trains."""
    _home(home, [(PROMPT, "no", 0.7), (OTHER, "8080", 0.7)])

    def check(turn: dict[str, Any]) -> float:
        return 0.7 if "port" in str(turn) else next(deploy)

    deploy = cycle([1.0, -1.0])
    trainer = _trainer(_settings(home, tiny, batch_size=2), check)
    seen = _trained(trainer)
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.results[0].samples == 1
    assert len(seen) == 4 and all(s.prompt_ids == seen[0].prompt_ids for s in seen)  # the deploy prompt's group
    detail = last_steps(trainer.db)[0]["detail"]["groups"]
    assert detail["groups"] == 2 and detail["flat"] == 1 and detail["resampled"] == 6
    assert skipped_steps(trainer.db)["reasons"] == {"a group with equal rewards": 1}


def test_answers_that_cannot_be_scored_train_as_before_and_are_counted(home: Path, tiny: Path) -> None:
    _home(home, a_and_b(1))
    trainer = _trainer(_settings(home, tiny, batch_size=4), _scores([None]))
    seen = _trained(trainer)
    report = trainer.run(lambda: True)
    assert report.steps == 1 and len(seen) == 4 and not any(s.resampled for s in seen)
    detail = last_steps(trainer.db)[0]["detail"]["groups"]
    assert detail["unscored"] == 4 and detail["resampled"] == 0 and detail["prompts"] == 0


def test_a_pause_mid_resampling_releases_the_batch(home: Path, tiny: Path) -> None:
    _home(home, a_and_b(1))
    trainer = _trainer(_settings(home, tiny, batch_size=4), _scores([1.0, -1.0]))
    seen = _trained(trainer)
    calls: list[int] = []

    def go_on() -> bool:  # the window's check, then between tokens: the user returns while the answers are drawn
        calls.append(1)
        return len(calls) <= 3

    report = trainer.run(go_on)
    assert report.paused and report.steps == 0 and seen == [] and latest(trainer.db) is None
    stats = trainer.buffer.stats()
    assert stats.queued == 4 and stats.pending == 0 and stats.skipped == 0
    assert runtime_state.get(trainer.db, KEY) is None  # nothing counted for a batch that waits


def test_each_tenant_resamples_from_its_own_weights(home: Path, tiny: Path) -> None:
    """Scope tenant: tenant a's step moves a's weights; b's prompts are then answered by b's (the initial LoRA),
    a's next ones by a's trained weights."""
    settings = _settings(home, tiny)
    trainer = _trainer(settings, _scores([1.0, -1.0]))
    initial = _lora(trainer)
    drawn: list[tuple[str | None, dict[str, Any]]] = []
    real = trainer.backend.gate_policy

    def policy() -> Any:
        drawn.append((trainer.tenant, _lora(trainer)))
        return real()

    trainer.backend.gate_policy = policy
    _home(home, [(PROMPT, "no", 0.5)], tenant="a")
    assert trainer.run(lambda: True).steps == 1
    trained_a = _lora(trainer)
    _home(home, [(PROMPT, "no", 0.5)], tenant="b")
    _home(home, [(PROMPT, "no", 0.5)], tenant="a")
    assert trainer.run(lambda: True).steps == 2
    assert [t for t, _ in drawn] == ["a", "b", "a"]

    def same(x: dict[str, Any], y: dict[str, Any]) -> bool:
        return all(torch.equal(x[k], y[k]) for k in x)

    assert same(drawn[0][1], initial) and same(drawn[1][1], initial) and same(drawn[2][1], trained_a)
    assert not same(trained_a, initial)


def test_group_size_one_turns_resampling_off_and_status_says_so(home: Path, tiny: Path) -> None:
    _home(home, a_and_b(1))
    settings = _settings(home, tiny, batch_size=4, group_size=1)
    trainer = _trainer(settings, _scores([1.0]))
    seen = _trained(trainer)
    assert trainer.run(lambda: True).steps == 1 and len(seen) == 4
    line = describe(training_status(settings))
    assert "resampling off: training.group_size is 1" in line


def _tinker(home: Path, tiny: Path, check: Callable[[dict[str, Any]], Any], **training: Any) -> tuple[Any, Any]:
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.backends import Hyper
    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    settings = Settings(
        home=home,
        training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "off_policy": "reinforce", **training},
    )
    service = FakeService(AutoTokenizer.from_pretrained(tiny))
    service.answers, service.logprob = {0: "it failed"}, {0: -1.0}
    backend = TinkerBackend("Qwen/Qwen3-8B", service=service, hyper=Hyper.from_settings(settings.training))
    return _trainer(settings, check, backend=(backend, service.tokenizer)), service


@pytest.fixture
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TINKER_API_KEY", "not-sent-anywhere")


@pytest.mark.usefixtures("_key")
def test_tinker_equal_non_integer_rewards_publish_nothing(home: Path, tiny: Path) -> None:
    pytest.importorskip("tinker")
    _home(home, [(PROMPT, "yes", 0.7)] * 3)
    trainer, service = _tinker(home, tiny, _scores([0.7]), batch_size=3, gate={"enabled": False})
    report = trainer.run(lambda: True)
    assert report.steps == 0 and report.skipped_batches == 1 and latest(trainer.db) is None
    assert len(service.seeds) == 9  # three answers per captured prompt were sampled on the service
    assert not {"forward", "forward_backward:ppo", "optim_step", "save_weights_for_sampler"} & set(service.calls)


@pytest.mark.usefixtures("_key")
def test_tinker_a_captured_answer_trains_with_its_sampled_group(home: Path, tiny: Path) -> None:
    pytest.importorskip("tinker")
    _home(home, [(PROMPT, "no", 0.7)])
    trainer, service = _tinker(home, tiny, _scores([1.0, -1.0, 0.2]), batch_size=1, gate={"enabled": False})
    report = trainer.run(lambda: True)
    assert report.steps == 1 and len(service.clients[0].sent) == 4  # the captured answer and three sampled
    assert len(set(service.seeds)) == 3  # one prompt, three draws
    assert last_steps(trainer.db)[0]["detail"]["groups"]["resampled"] == 3


def test_the_group_settings_validate_and_doctor_shows_them(home: Path) -> None:
    import json

    from click.testing import CliRunner
    from pydantic import ValidationError

    from metaclaw_plugin.cli import main

    for bad in ({"group_size": 0}, {"group_tolerance": -1.0}):
        with pytest.raises(ValidationError):
            Settings(home=home, training=bad)
    t = Settings(home=home).training
    assert (t.advantage, t.group_size, t.group_tolerance) == ("group", 4, 1e-6)
    (home / "config.yaml").write_text(json.dumps({"reward": {"enabled": False}}))
    out = CliRunner().invoke(main, ["doctor", "--json"])
    check = next(c for c in json.loads(out.stdout)["checks"] if c["check"] == "training groups")
    assert check["detail"].startswith("groups of 4 (advantage group, tolerance 1e-06)")
    assert "resampling off: reward.enabled is off" in check["detail"]
