"""The served policy on Tinker's sampling client (backend ``tinker``), against a fake of the client's methods kept
in tests/ (the service cannot be reached here): valid SDK requests, Tinker's logprobs recorded, and a hot swap to
each published sampler path."""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_support import FakeSamplingService

from metaclaw_plugin.serving import ServedPolicy
from metaclaw_plugin.store import Database
from metaclaw_plugin.training import tokens
from metaclaw_plugin.training.weights import WeightsRef, store_latest

BASE = "Qwen/Qwen3-8B"
MSGS = [{"role": "user", "content": "Deploy the app"}]


@pytest.fixture()
def service(policy_base: Path) -> FakeSamplingService:
    from transformers import AutoTokenizer

    return FakeSamplingService(AutoTokenizer.from_pretrained(policy_base))


def test_samples_through_tinker_and_swaps_to_published_sampler_weights(
    service: FakeSamplingService, tmp_path: Path
) -> None:
    db = Database(tmp_path / "m.db")
    p = ServedPolicy(BASE, backend="tinker", service=service, db=db, poll_interval=None)
    try:
        p.wait_ready(30)
        assert service.created == [{"model_path": None, "base_model": BASE}]
        g = p.generate(MSGS, max_tokens=40, temperature=0.7, seed=3)
        assert g.content == f"answer from base {BASE}" and g.finish_reason == "stop" and g.weights == "base"
        assert g.logprobs == [-0.25] * len(g.response_ids)
        weights, prompt, params = service.requests[-1]
        assert weights == f"base {BASE}" and prompt == p.prompt_ids(MSGS) == g.prompt_ids
        assert (params.max_tokens, params.temperature, params.seed) == (40, 0.7, 3)
        assert service.tokenizer.eos_token_id in params.stop
        rec = tokens.lookup(db, tokens.response_key(g.content))
        assert rec is not None and rec.logprobs == g.logprobs

        ref = WeightsRef(1, "tinker", BASE, "tinker://run-1/sampler_weights/000001")
        assert p.swap(ref).result(30).ref == ref
        after = p.generate(MSGS, seed=3)
        assert after.content == f"answer from {ref.path}" and after.weights == ref.path and after.step == 1
        for bad in (WeightsRef(2, "local", BASE, str(tmp_path)), WeightsRef(2, "tinker", "other", "tinker://x")):
            with pytest.raises(ValueError):
                p.swap(bad).result(30)
        assert p.current.ref == ref and p.counters["swap_errors"] == 2
    finally:
        p.close()
    # a policy started after a publication serves it from the first request
    store_latest(db, ref)
    q = ServedPolicy(BASE, backend="tinker", service=service, db=db, poll_interval=None)
    try:
        assert q.wait_ready(30).ref == ref
    finally:
        q.close()


def test_settings_pick_the_tinker_policy_and_say_when_it_cannot_run(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from metaclaw_plugin import Settings
    from metaclaw_plugin.serving import describe, from_settings, policy_status

    monkeypatch.delenv("TINKER_API_KEY", raising=False)
    s = Settings(home=home, training={"base_model": BASE})  # not a local model: the tinker backend
    assert s.training.backend == "tinker"
    assert "TINKER_API_KEY is not set" in describe(policy_status(s))
    monkeypatch.setenv("TINKER_API_KEY", "tml-test")
    st = policy_status(s)
    assert st["servable"] and "Tinker's sampling client" in describe(st)
    p = from_settings(s)
    assert p.backend == "tinker" and p.base_model == BASE
    # per-tenant weights are not built on tinker: one set for every tenant, and status says so
    assert p.scope == "global" and s.training.scope == "tenant"
    from metaclaw_plugin.training.status import describe as training_line
    from metaclaw_plugin.training.status import training_status

    assert "training.scope tenant is not built on the tinker backend" in training_line(training_status(s))
    p.close()
