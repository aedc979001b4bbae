"""The served policy on PostgreSQL (a real server, tests/support/postgres_support.py): its token records and the weights
the trainer publishes go through the home's database, not a SQLite file beside it. A policy in another process
hot-swaps through its watcher; this process's policy swaps at once through the scheduler trainer's publish
callback; the trainer finds the policy's logprobs; ``status`` reads the steps from PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_support import pg_server, pg_url  # noqa: F401  (fixtures)
from waiting import wait_for

from metaclaw_plugin import Settings
from metaclaw_plugin import serving as serving_mod
from metaclaw_plugin.store.postgres import PostgresDatabase
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.training import SampleBuffer, tokens
from metaclaw_plugin.training.status import training_status
from metaclaw_plugin.training.trainer import last_steps
from metaclaw_plugin.types import Sample, Turn, new_id

pytest.importorskip("peft")

MSGS = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Deploy the app"}]


def _settings(home: Path, url: str, base: Path, poll: float) -> Settings:
    return Settings(
        home=home,
        storage={"backend": "postgres", "url": url},
        training={"base_model": str(base), "device": "cpu", "batch_size": 2, "learning_rate": 1e-3},
        serving={"poll_interval": poll, "max_new_tokens": 8},
    )


@pytest.fixture()
def policies() -> Iterator[list[Any]]:
    made: list[Any] = []
    yield made
    for p in made:
        p.close()
    with serving_mod._shared_lock:  # this test's shared policy leaves the process's table with it
        for k in [k for k, v in serving_mod._shared.items() if v in made]:
            serving_mod._shared.pop(k)


def test_the_policy_on_postgresql_records_its_tokens_and_hot_swaps(
    tmp_path: Path,
    pg_url: str,  # noqa: F811  (the fixture)
    policy_base: Path,
    policies: list[Any],
) -> None:
    from metaclaw_plugin.scheduling.attach import scheduler_trainer

    home = tmp_path / "home"
    watched = serving_mod.from_settings(_settings(home, pg_url, policy_base, poll=0.1))  # "another process"
    policies.append(watched)
    watched.wait_ready(120)
    assert isinstance(watched.db, PostgresDatabase)
    settings = _settings(home, pg_url, policy_base, poll=3600)  # its watcher never fires within the test
    here = serving_mod.shared_policy(settings=settings)
    policies.append(here)
    here.wait_ready(120)

    gens = [watched.generate(MSGS, temperature=0.8, seed=s) for s in (1, 2)]
    db = PostgresDatabase(pg_url)
    rec = tokens.lookup(db, tokens.response_key(gens[0].content, gens[0].tool_calls), gens[0].prompt_ids)
    assert rec is not None and rec.logprobs == gens[0].logprobs and rec.temperature == 0.8

    store = TrajectoryStore(tmp_path / "spool.db", database=PostgresDatabase(pg_url))
    store.open()
    turns = [Turn(new_id(), "s-1", "default", "main", MSGS, {"role": "assistant", "content": g.content}) for g in gens]
    for t in turns:
        store.append_turn(t)
    store.flush()
    store.close()
    buffer = SampleBuffer(PostgresDatabase(pg_url))
    for t, reward in zip(turns, (1.0, -1.0)):
        assert buffer.add(Sample(t.turn_id, "s-1", "default", 0, reward))

    trainer = scheduler_trainer(settings)  # the scheduler's trainer, with its publish callback
    report = trainer.run(lambda: True)
    assert report.steps == 1, report
    (row,) = last_steps(trainer.db)
    assert row["detail"]["behaviour_logprobs"] == 2  # the trainer found the policy's own logprobs in PostgreSQL
    wait_for(lambda: here.current is not None and here.current.ref is not None, 60, "the in-process swap")
    wait_for(lambda: watched.current is not None and watched.current.ref is not None, 60, "the watcher's swap")
    assert here.current is not None and here.current.ref is not None and here.current.ref.step == 1
    assert watched.current is not None and watched.current.ref is not None and watched.current.ref.step == 1
    assert here.counters["swaps"] == 1 and watched.counters["swaps"] == 1
    status = training_status(settings)
    assert status["step"] == 1 and status["weights"]["step"] == 1
    db.close()
