"""Support/query buffer: stale samples never reach a drained batch; support never queued; restarts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metaclaw_plugin.training import SampleBuffer, grpo_advantages
from metaclaw_plugin.types import Sample


class Gen:
    """Stands in for the skill store's generation counter (bumped by evolution elsewhere)."""

    def __init__(self) -> None:
        self.value = 0

    def __call__(self) -> int:
        return self.value


def _sample(i: int, gen: int, reward: float = 1.0) -> Sample:
    return Sample(f"t{i}", "s", "default", gen, reward, created_at=float(i))


ops = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 2), st.sampled_from([-1.0, 0.0, 1.0])),  # lag behind current gen
        st.tuples(st.just("support"), st.integers(0, 50)),
        st.tuples(st.just("evolve"), st.booleans()),  # bump; True: the buffer hears of it, False: only the store
        st.tuples(st.just("drain"), st.integers(1, 5), st.booleans()),
        st.tuples(
            st.just("ack"),
        ),
        st.tuples(
            st.just("restart"),
        ),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops)
def test_no_drained_batch_holds_a_stale_sample(tmp_path_factory: pytest.TempPathFactory, ops):
    db = tmp_path_factory.mktemp("buf") / "metaclaw.db"
    gen = Gen()
    buf = SampleBuffer(db, generation_fn=gen)
    n = 0
    support: set[str] = set()
    last_batch: list[Sample] = []
    drained: set[str] = set()
    for op in ops:
        kind = op[0]
        if kind == "turn":
            n += 1
            # a turn produced under the generation of its request, which may lag the current one
            buf.add(_sample(n, max(0, gen.value - op[1]), op[2]))
        elif kind == "support" and n:
            tid = f"t{op[1] % n + 1}"
            buf.mark_support([(tid, "s", "default", 0)])
            support.add(tid)
        elif kind == "evolve":
            gen.value += 1
            if op[1]:
                buf.on_generation(gen.value)
        elif kind == "drain":
            current = gen.value  # the generation current at the drain
            batch = buf.drain(op[1], partial=op[2])
            assert all(s.skill_generation == current for s in batch), (current, batch)
            assert not {s.turn_id for s in batch} & support
            assert not {s.turn_id for s in batch} & drained  # a sample is handed out once
            drained |= {s.turn_id for s in batch}
            last_batch = batch
        elif kind == "ack" and last_batch:
            buf.ack([s.turn_id for s in last_batch])
            last_batch = []
        elif kind == "restart":
            buf.close()
            buf = SampleBuffer(db, generation_fn=gen)
        # Whatever is pending must be of the current generation once the buffer has looked.
        if buf.generation == gen.value:
            assert all(s.skill_generation == gen.value for s in buf.pending())
    buf.close()


def test_bump_drops_pending_batch_and_older_samples_and_counts_them(tmp_path: Path):
    gen = Gen()
    buf = SampleBuffer(tmp_path / "m.db", generation_fn=gen)
    for i in range(6):
        assert buf.add(_sample(i, 0))
    batch = buf.drain(4)
    assert len(batch) == 4 and buf.is_fresh([s.turn_id for s in batch])
    gen.value = 1
    assert not buf.is_fresh([s.turn_id for s in batch])  # the trainer must not apply this batch
    st_ = buf.stats()
    assert st_.dropped_stale == 6 and st_.pending == 0 and st_.queued == 0 and st_.generation == 1
    assert not buf.add(_sample(99, 0))  # produced under the old skills: refused
    assert buf.stats().rejected_stale == 1
    assert buf.add(_sample(100, 1))
    assert buf.drain(4) == [] and [s.turn_id for s in buf.drain(4, partial=True)] == ["t100"]


def test_support_turns_are_never_queued_and_buffer_survives_restart(tmp_path: Path):
    db = tmp_path / "m.db"
    buf = SampleBuffer(db, generation_fn=lambda: 2)
    buf.add(_sample(1, 2))
    buf.add(_sample(2, 2))
    assert buf.mark_support([("t2", "s", "default", 2)]) == 1  # already queued: taken out
    assert not buf.add(_sample(2, 2))
    buf.close()
    again = SampleBuffer(db, generation_fn=lambda: 2)
    s = again.stats()
    assert (s.queued, s.support, s.generation) == (1, 1, 2)
    assert [x.turn_id for x in again.drain(1)] == ["t1"]
    again.ack(["t1"])
    assert again.stats().trained == 1


def test_a_turn_reserved_for_the_evolver_is_a_query_sample_until_a_call_reads_it(tmp_path: Path):
    """A trigger reserves failures for the evolver; a window that opens before the evolver runs (a spent budget,
    a held learning loop) still trains them, and once a call read them they are support: out of the queue and
    refused later. A second trigger cannot send a reserved turn again."""
    buf = SampleBuffer(tmp_path / "m.db", generation_fn=lambda: 0)
    for i in range(4):
        buf.add(_sample(i, 0, reward=-1.0))
    refs = [(f"t{i}", "s", "default", 0) for i in range(4)]
    with buf.db.transaction() as c:
        assert SampleBuffer.reserve_support(c, refs[:3], "review") == ["t0", "t1", "t2"]
    with buf.db.transaction() as c:
        assert SampleBuffer.reserve_support(c, refs, "train_batch") == ["t3"]  # each turn is sent once
    assert buf.sent_to_evolver("t0") and (buf.stats().queued, buf.stats().support) == (4, 0)
    batch = buf.drain(2)  # the trainer reaches t0 and t1 first
    buf.ack([x.turn_id for x in batch])
    with buf.db.transaction() as c:  # a call read t0-t2: t2 leaves the queue, t0 and t1 stay trained
        assert SampleBuffer.take_support(c, ["t0", "t1", "t2"]) == 1
    st_ = buf.stats()
    assert (st_.trained, st_.queued, st_.support) == (2, 1, 3)
    assert [x.turn_id for x in buf.drain(4, partial=True)] == ["t3"]
    assert not buf.add(_sample(2, 0)) and buf.add(_sample(9, 0))  # read: refused; a new turn is welcome


def test_grpo_advantages():
    adv = grpo_advantages([1.0, -1.0, 1.0, -1.0])
    assert adv == pytest.approx([1.0, -1.0, 1.0, -1.0], abs=1e-6)
    assert grpo_advantages([0.5, 0.5]) == [0.0, 0.0]
    assert grpo_advantages([]) == []
    a = grpo_advantages([1.0, 0.0, 0.0, 0.0])
    assert sum(a) == pytest.approx(0.0, abs=1e-9) and a[0] > 0 > a[1]
