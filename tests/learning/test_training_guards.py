"""The slow loop's guards (issue 31): a step without signal is skipped, not taken; a step that fails releases its
batch and leaves no gradient behind; groups that group. On the tiny local model (CPU, fixed seeds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from training_support import PROMPT, FakeService, a_and_b, capture  # noqa: E402

from metaclaw_plugin import Settings  # noqa: E402
from metaclaw_plugin.devtools.tinymodel import build_tiny_model  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.samples import group_key  # noqa: E402
from metaclaw_plugin.training.status import training_status  # noqa: E402
from metaclaw_plugin.training.trainer import last_steps, skipped_steps  # noqa: E402
from metaclaw_plugin.training.weights import latest  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


def _settings(home: Path, tiny: Path, **training: Any) -> Settings:
    base = {"base_model": str(tiny), "device": "cpu", "learning_rate": 2e-3, "off_policy": "reinforce"}
    return Settings(home=home, training={**base, **training})


def _lora(trainer: Any) -> dict[str, Any]:
    return {k: v.detach().clone() for k, v in trainer.backend.model.named_parameters() if v.requires_grad}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize(
    ("rows", "batch_size", "reason"),
    [
        ([(PROMPT, "yes", 1.0)] * 4, 4, "equal rewards"),
        # equal non-integer rewards: their mean's float residue (~1e-16) is no signal, though it passed `a != 0`
        ([(PROMPT, "yes", 0.7)] * 3, 3, "equal rewards"),
        ([(PROMPT, "yes", 0.1), (PROMPT, "no", 0.1), (PROMPT, "maybe", 0.1)], 3, "equal rewards"),
        ([(PROMPT, "yes", -1.0)], 1, "one sample"),
    ],
)
def test_a_batch_without_signal_is_skipped_not_taken(home: Path, tiny: Path, rows: Any, batch_size: int, reason: str):
    capture(home / "metaclaw.db", rows)
    published: list[Any] = []
    settings = _settings(home, tiny, batch_size=batch_size)
    trainer = build_trainer(settings, publish=published.append)
    before = _lora(trainer)
    report = trainer.run(lambda: True)
    assert report.steps == 0 and report.skipped_batches == 1 and trainer.step == 0
    assert report.results[0].outcome == "skipped" and report.results[0].reason == reason
    assert _same(before, _lora(trainer))  # no optimiser step: Adam's moments would have moved the weights
    assert trainer.backend.optimizer.state_dict()["state"] == {}  # type: ignore[attr-defined]
    assert published == [] and latest(trainer.db) is None and last_steps(trainer.db) == []
    assert skipped_steps(trainer.db)["reasons"] == {reason: 1}
    stats = trainer.buffer.stats()
    assert stats.skipped == len(rows) and stats.trained == 0 and stats.queued == stats.pending == 0
    status = training_status(settings)
    assert status["step"] == 0 and status["skipped"]["batches"] == 1


def test_a_skip_is_reported_with_the_next_applied_step(home: Path, tiny: Path):
    capture(home / "metaclaw.db", [(PROMPT, "yes", 1.0)] * 4 + a_and_b(1))
    trainer = build_trainer(_settings(home, tiny))
    report = trainer.run(lambda: True)
    assert report.skipped_batches == 1 and report.steps == 1
    (row,) = last_steps(trainer.db)
    assert row["step"] == 1 and row["detail"]["skipped"] == 1


def test_groups_gather_instances_of_one_request_across_sessions_and_skills():
    """Keyed by the whole prompt, no two captured turns ever shared a group; keyed by the request they do."""
    a = [{"role": "system", "content": "<skills>one</skills>"}, {"role": "user", "content": "Convert 3 km to miles"}]
    b = [
        {"role": "system", "content": "<skills>two</skills>"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": [{"type": "text", "text": "convert  12 KM to miles"}]},
    ]
    assert group_key(a) == group_key(b)
    assert group_key(a) != group_key([{"role": "user", "content": "Convert 3 km to feet"}])
    tool = [{"type": "function", "function": {"name": "convert"}}]
    assert group_key(a, tool) != group_key(a)


def test_group_advantages_train_on_real_groups(home: Path, tiny: Path):
    """Two sessions ask the same thing under different skills: with advantage: group they form one group."""
    other = [{"role": "system", "content": "Another skill block."}, PROMPT[1]]
    capture(home / "metaclaw.db", [(PROMPT, "yes", 1.0), (other, "no", -1.0)])
    trainer = build_trainer(_settings(home, tiny, batch_size=2, advantage="group"))
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.skipped_batches == 0


class Boom(RuntimeError):
    pass


def test_an_exception_mid_step_releases_the_batch_and_clears_gradients(home: Path, tiny: Path):
    capture(home / "metaclaw.db", a_and_b(1))
    trainer = build_trainer(_settings(home, tiny, micro_batch_size=1))
    backend: Any = trainer.backend
    real = backend.forward_backward
    calls: list[int] = []

    def failing(*args: Any, **kw: Any) -> float:
        calls.append(1)
        if len(calls) == 3:  # two micro-batches accumulated gradients, the third fails
            raise Boom("out of memory")
        return float(real(*args, **kw))

    backend.forward_backward = failing
    before = _lora(trainer)
    with pytest.raises(Boom):
        trainer.run(lambda: True)
    lora = [p for p in backend.model.parameters() if p.requires_grad]
    assert lora and all(p.grad is None for p in lora)
    assert _same(before, _lora(trainer)) and trainer.step == 0
    stats = trainer.buffer.stats()
    assert stats.queued == 4 and stats.pending == 0 and stats.trained == 0
    backend.forward_backward = real
    assert trainer.run(lambda: True).steps == 1  # the released batch trains next time, on clean gradients


def test_tinker_drops_staged_datums_when_a_step_fails(tmp_path: Path, tiny: Path):
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    tok = AutoTokenizer.from_pretrained(tiny)
    capture(tmp_path / "metaclaw.db", a_and_b(2))
    service = FakeService(tok)
    settings = Settings(
        home=tmp_path,
        training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "off_policy": "reinforce"},
    )
    backend = TinkerBackend("Qwen/Qwen3-8B", service=service)
    trainer = build_trainer(settings, backend=(backend, tok))
    client = backend.client
    real = client.forward
    calls: list[int] = []

    def failing(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise Boom("connection reset")
        return real(*args, **kw)

    client.forward = failing  # type: ignore[method-assign]
    with pytest.raises(Boom):
        trainer.run(lambda: True)
    assert backend._staged == []
    client.forward = real  # type: ignore[method-assign]
    assert trainer.run(lambda: True, max_steps=1).steps == 1
    assert len(client.sent) == 4  # the step sent its own batch only, not the failed step's datum again


def test_the_default_loss_clips_the_ratio(home: Path, tiny: Path):
    """A token the policy already made e times likelier than when it sampled it, with a positive advantage, gets no
    further push under the default loss (ppo's clip); the unclipped importance_sampling kept pushing it."""
    from metaclaw_plugin.training.samples import TrainSample, tokenize_turn

    trainer = build_trainer(_settings(home, tiny, kl_coef=0.0))
    backend: Any = trainer.backend
    p, c, m = tokenize_turn(trainer.tokenizer, PROMPT, {"role": "assistant", "content": "yes"})
    probe = TrainSample("x", p, c, m, None, 1.0, 0)
    with torch.no_grad():
        logp = backend.token_logprobs([probe])[0][0, : len(c)]
    sample = TrainSample("x", p, c, m, [float(x) - 1.0 for x in logp], 1.0, 0, advantage=1.0)
    assert trainer.options.loss_fn == "ppo"
    backend.forward_backward([sample], trainer.options.loss_fn, float(len(c)))
    assert all(p.grad is None or not p.grad.any() for p in backend.params)
    backend.discard()
    backend.forward_backward([sample], "importance_sampling", float(len(c)))
    assert any(p.grad is not None and p.grad.any() for p in backend.params)


def test_gradients_are_clipped_and_the_step_reports_its_norm(home: Path, tiny: Path):
    capture(home / "metaclaw.db", a_and_b(1))
    trainer = build_trainer(_settings(home, tiny, max_grad_norm=1e-3))
    backend: Any = trainer.backend
    seen: list[float] = []
    step = backend.optimizer.step

    def measured(*args: Any, **kw: Any) -> Any:
        seen.append(float(torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in backend.params]))))
        return step(*args, **kw)

    backend.optimizer.step = measured
    assert trainer.run(lambda: True).steps == 1
    (row,) = last_steps(trainer.db)
    assert seen[0] <= 1e-3 * 1.0001 < row["detail"]["grad_norm"]


def _kl_to_base(trainer: Any) -> float:
    from metaclaw_plugin.training.losses import kl_to_reference
    from metaclaw_plugin.training.samples import TrainSample, tokenize_turn

    backend = trainer.backend
    total = 0.0
    for answer in ("yes", "no"):
        p, c, m = tokenize_turn(trainer.tokenizer, PROMPT, {"role": "assistant", "content": answer})
        s = [TrainSample("x", p, c, m, None, 0.0, 0)]
        with torch.no_grad():
            logp, _, _, mask, _ = backend.token_logprobs(s)
            ref = backend.token_logprobs(s, reference=True)[0]
        total += float((kl_to_reference(logp, ref) * mask).sum())
    return total


def test_the_kl_anchor_holds_the_policy_near_the_base(tmp_path: Path, tiny: Path):
    """The same six steps with and without the anchor: with it, the policy ends closer to the base model, and
    each step reports its KL to the base."""
    kls = {}
    for coef in (0.0, 2.0):
        home = tmp_path / f"kl-{coef}"
        home.mkdir()
        capture(home / "metaclaw.db", a_and_b(6))
        trainer = build_trainer(_settings(home, tiny, kl_coef=coef, micro_batch_size=2))
        assert trainer.run(lambda: True).steps == 6
        kls[coef] = _kl_to_base(trainer)
        details = [r["detail"] for r in last_steps(trainer.db, 6)]
        assert all((d["kl"] is None) == (coef == 0.0) for d in details)
    assert kls[2.0] < 0.7 * kls[0.0], kls


def test_one_learning_rate_means_one_adam_on_both_backends(tmp_path: Path, tiny: Path):
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    knobs = {"learning_rate": 3e-4, "adam_beta1": 0.8, "adam_beta2": 0.9, "weight_decay": 0.01, "max_grad_norm": 0.5}
    local = build_trainer(_settings(tmp_path, tiny, **knobs))
    group = local.backend.optimizer.param_groups[0]  # type: ignore[attr-defined]
    tok = AutoTokenizer.from_pretrained(tiny)
    remote_home = tmp_path / "tinker"
    remote_home.mkdir()
    capture(remote_home / "metaclaw.db", a_and_b(1))
    service = FakeService(tok)
    settings = Settings(
        home=remote_home,
        training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "off_policy": "reinforce", **knobs},
    )
    remote = TinkerBackend("Qwen/Qwen3-8B", hyper=_hyper(settings), service=service)
    trainer = build_trainer(settings, backend=(remote, tok))
    assert trainer.run(lambda: True).steps == 1
    (adam,) = service.clients[0].adam
    assert (adam.learning_rate, adam.beta1, adam.beta2, adam.eps, adam.weight_decay) == (
        group["lr"],
        *group["betas"],
        group["eps"],
        group["weight_decay"],
    )
    assert adam.grad_clip_norm == 0.5


def _hyper(settings: Settings) -> Any:
    from metaclaw_plugin.training.backends import Hyper

    return Hyper.from_settings(settings.training)


def test_every_adapter_knob_is_settable(tmp_path: Path, tiny: Path):
    knobs = {
        "lora_rank": 4,
        "lora_alpha": 16,
        "lora_dropout": 0.1,
        "target_modules": ["q_proj", "v_proj"],
        "dtype": "bfloat16",
        "gradient_checkpointing": True,
        "seed": 7,
        "clip_low": 0.9,
        "clip_high": 1.1,
    }
    trainer = build_trainer(_settings(tmp_path, tiny, **knobs))
    backend: Any = trainer.backend
    cfg = backend.model.peft_config["default"]
    assert (cfg.r, cfg.lora_alpha, cfg.lora_dropout, set(cfg.target_modules)) == (4, 16, 0.1, {"q_proj", "v_proj"})
    names = {n.split(".lora_")[0].rsplit(".", 1)[-1] for n, p in backend.model.named_parameters() if p.requires_grad}
    assert names == {"q_proj", "v_proj"}
    assert backend.model.get_base_model().dtype == torch.bfloat16
    assert backend.model.get_base_model().is_gradient_checkpointing
    assert (backend.hyper.clip_low, backend.hyper.clip_high, backend.hyper.seed) == (0.9, 1.1, 7)
    capture(tmp_path / "metaclaw.db", a_and_b(1))
    assert trainer.run(lambda: True).steps == 1  # and it trains


def test_answers_sampled_by_stale_weights_are_dropped(home: Path, tiny: Path):
    from metaclaw_plugin.store import Database
    from metaclaw_plugin.training import tokens
    from metaclaw_plugin.training.samples import tokenize_turn

    capture(home / "metaclaw.db", a_and_b(1))
    # steps behind the trainer's counter: one set for every tenant (scope tenant counts the tenant's own steps)
    trainer = build_trainer(_settings(home, tiny, max_staleness=2, off_policy="drop", scope="global"))
    db = Database(home / "metaclaw.db")
    for i, answer in enumerate(("yes", "no")):
        p, c, _ = tokenize_turn(trainer.tokenizer, PROMPT, {"role": "assistant", "content": answer})
        tokens.record(db, tokens.response_key(answer), tokens.TokenRecord(p, c, [-1.0] * len(c), step=1 + 2 * i))
    trainer.step = 5  # "yes" was sampled by step 1 (4 behind), "no" by step 3 (2 behind)
    samples, unusable = trainer.build(trainer.buffer.drain(4))
    assert {s.reward for s in samples} == {-1.0} and len(unusable) == 2


def test_a_new_trainer_resumes_with_the_weights_its_acknowledged_samples_made(home: Path, tiny: Path):
    """Three steps with a full state every two: step 3's samples are acknowledged, so a trainer started after a
    crash resumes at step 3 with step 3's weights (not step 2's state, which had lost them)."""
    from safetensors.torch import load_file

    capture(home / "metaclaw.db", a_and_b(3))
    settings = _settings(home, tiny, checkpoint_every=2, scope="global")  # per tenant: test_tenant_weights.py
    first = build_trainer(settings)
    assert first.run(lambda: True).steps == 3 and first.buffer.stats().trained == 12
    again = build_trainer(settings)
    ref = latest(again.db)
    assert ref is not None and ref.step == 3 and again.step == 3 and again.resumed_from == ref.path
    on_disk = load_file(str(Path(ref.path) / "adapter_model.safetensors"))
    mine = again.backend.lora_weights()  # type: ignore[attr-defined]
    assert mine.keys() == on_disk.keys() and all(torch.equal(mine[k], on_disk[k]) for k in mine)


def _validation_home(home: Path, train_rows: list[Any]) -> None:
    """A validation set of two rewarded turns (A good, B bad), then ``train_rows`` queued for training."""
    from metaclaw_plugin.store import Database
    from metaclaw_plugin.training.buffer import SampleBuffer

    capture(home / "metaclaw.db", [(PROMPT, "yes", 1.0), (PROMPT, "no", -1.0)])
    buffer = SampleBuffer(Database(home / "metaclaw.db"))
    assert buffer.hold_back(2, keep=0) == 1 and buffer.hold_back(2, keep=0) == 1 and buffer.hold_back(2, keep=0) == 0
    capture(home / "metaclaw.db", train_rows)


def test_a_step_that_lowers_the_validation_score_is_held_back(home: Path, tiny: Path):
    """The user rewarded A and punished B; a batch rewarding the opposite would make B likelier: the step is
    undone (weights and optimiser state), not published, and counted."""
    _validation_home(home, [(PROMPT, "yes", -1.0), (PROMPT, "no", 1.0)] * 2)
    published: list[Any] = []
    trainer = build_trainer(_settings(home, tiny, validation_size=2), publish=published.append)
    before = _lora(trainer)
    report = trainer.run(lambda: True)
    assert report.held_back == 1 and report.steps == 0 and trainer.step == 0
    assert report.results[0].reason == "validation score fell"
    assert _same(before, _lora(trainer)) and trainer.backend.optimizer.state_dict()["state"] == {}  # type: ignore[attr-defined]
    assert published == [] and latest(trainer.db) is None and last_steps(trainer.db) == []
    assert skipped_steps(trainer.db)["reasons"] == {"validation score fell": 1}
    stats = trainer.buffer.stats()
    assert stats.validation == 2 and stats.skipped == 4 and stats.trained == 0


def test_a_step_that_raises_the_validation_score_is_published(home: Path, tiny: Path):
    _validation_home(home, [(PROMPT, "yes", 1.0), (PROMPT, "no", -1.0)] * 2)
    trainer = build_trainer(_settings(home, tiny, validation_size=2))
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.held_back == 0
    (row,) = last_steps(trainer.db)
    v = row["detail"]["validation"]
    assert v["n"] == 2 and v["after"] > v["before"]


def test_the_validation_set_is_drawn_from_the_queue_one_per_batch(home: Path, tiny: Path):
    capture(home / "metaclaw.db", a_and_b(2))
    # the behaviour gate's slice also fills from part batches (test_training_gate.py): off, to pin this rule alone
    trainer = build_trainer(_settings(home, tiny, validation_size=1, gate={"enabled": False}))
    report = trainer.run(lambda: True)
    stats = trainer.buffer.stats()
    assert stats.validation == 1 and report.steps == 1 and stats.trained == 4 and stats.queued == 3


def test_equal_non_integer_rewards_have_exactly_zero_advantages():
    """Float residue of the mean (0.7 * 3 / 3 != 0.7) is not a signal, per batch and per group."""
    from metaclaw_plugin.training.advantages import group_advantages, grpo_advantages

    assert grpo_advantages([0.7, 0.7, 0.7]) == [0.0, 0.0, 0.0]
    assert group_advantages([0.1, 0.1, 0.3, 0.6], ["a", "a", "b", "b"])[:2] == [0.0, 0.0]
    assert grpo_advantages([0.7, 0.7, 0.9])[2] > 0.5  # a real difference still counts
