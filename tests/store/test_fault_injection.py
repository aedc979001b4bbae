"""Fault injection on the trajectory store: poison records, a full disk, the database deleted, truncated, replaced,
locked or read-only under a running store, kill -9 at random points, a read-only home.

After each fault clears: every acknowledged good turn is in the database exactly once, the home starts, and
``status`` counts what was set aside. A full disk and a read-only home use a small tmpfs where the tests may mount
one (root), and a shim on the journal's ``os`` calls everywhere."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import queue
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_trajectories import make_turn

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.cli import main
from metaclaw_plugin.privacy import Redactor
from metaclaw_plugin.store import apply, connect, journal
from metaclaw_plugin.store.journal import DEAD_LETTER, JournalWriteError, read_segment
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.types import Turn

SECRET = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"

# What the database refuses, one field at a time (the cases of issue 26 and their kin).
POISONS: dict[str, dict[str, Any]] = {
    "30-digit generation": {"skill_generation": 10**30},
    "no session id": {"session_id": None},
    "no tenant": {"tenant": None},
    "lone surrogate in the session id": {"session_id": "s-\udcff"},
    "lone surrogate in the model": {"model": "gpt-\ud800"},
    "lone surrogate in the tenant": {"tenant": "t\udfff"},
    "a dict for the user": {"user": {"a": 1, "key": SECRET}},
    "a list for the model": {"model": ["a", SECRET]},
    "no time": {"created_at": float("nan")},
}


# Helpers ----------------------------------------------------------------------------------------------------------
def stored_ids(db: Path) -> list[str]:
    """Turn ids in the file at ``db``, read by a connection of its own (not the store's)."""
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return sorted((r[0] for r in conn.execute("SELECT turn_id FROM turns")), key=repr)
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def dead_letters(home: Path) -> list[dict[str, Any]]:
    path = home / DEAD_LETTER
    return [json.loads(line) for line in path.read_text("utf-8").split("\n") if line] if path.exists() else []


def journal_only(store: TrajectoryStore) -> None:
    """The writer never sees what is appended from now on: it waits in the journal for the next start."""

    def full(item: Any) -> None:
        raise queue.Full

    store.records.queue.put_nowait = full  # type: ignore[method-assign]


def poison_turn(n: int, fields: dict[str, Any]) -> Turn:
    t = make_turn(n, session="poison")
    for k, v in fields.items():
        setattr(t, k, v)
    return t


def cli_json(*args: str) -> dict[str, Any]:
    res = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout, parse_constant=_strict)


def _strict(c: str) -> None:
    raise ValueError(f"not JSON: {c}")


def check_home_starts(home: Path, good: list[str], set_aside: int) -> None:
    """The home starts, holds each good turn once, and status and doctor count what was set aside."""
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        assert p.flush()
        assert [i for i in stored_ids(home / "metaclaw.db") if i in good] == sorted(good)
        assert len(dead_letters(home)) == set_aside
    finally:
        p.stop()
    status = cli_json("status")
    assert status["store"]["set_aside"] == set_aside
    doctor = {c["check"]: c for c in cli_json("doctor")["checks"]}
    assert doctor["set-aside records"]["ok"] == (set_aside == 0)


# Poison records ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", list(POISONS))
def test_a_refused_turn_is_set_aside_and_its_batch_neighbours_are_stored(home: Path, monkeypatch, case: str):
    monkeypatch.setattr(apply, "WRITER_LINGER", 60.0)  # the three turns make one batch (flush ends the wait)
    store = TrajectoryStore(home / "metaclaw.db", redactor=Redactor())
    store.open()
    assert store.append_turn(make_turn(1, session="good"))
    store.append_turn(poison_turn(1, POISONS[case]))
    assert store.append_turn(make_turn(2, session="good"))
    assert store.flush()
    assert stored_ids(home / "metaclaw.db") == ["good-1", "good-2"]
    assert store.set_aside == 1 and store.retrying == 0
    store.close()
    letters = dead_letters(home)
    assert len(letters) == 1 and letters[0]["record"]["turn_id"] == "poison-1" and letters[0]["reason"]
    assert SECRET not in (home / DEAD_LETTER).read_text("utf-8")  # the record is redacted
    assert (home / DEAD_LETTER).stat().st_mode & 0o077 == 0
    check_home_starts(home, ["good-1", "good-2"], set_aside=1)


@pytest.mark.parametrize("case", ["30-digit generation", "no session id", "lone surrogate in the session id"])
def test_poison_left_in_the_journal_never_stops_the_home_starting(home: Path, case: str):
    store = TrajectoryStore(home / "metaclaw.db", redactor=Redactor())
    store.open()
    journal_only(store)
    store.append_turn(make_turn(1, session="good"))
    store.append_turn(poison_turn(1, POISONS[case]))
    store.append_turn(make_turn(2, session="good"))
    store.close()
    set_aside = 0 if case == "lone surrogate in the session id" else 1  # the journal holds it as U+FFFD: stored
    check_home_starts(home, ["good-1", "good-2"], set_aside=set_aside)
    assert not list((home / "journal").glob("*.jsonl"))


def test_the_sidecar_starts_on_a_home_whose_journal_holds_poison(home: Path):
    """``serve``'s app starts the plugin in its lifespan: it answered "Application startup failed" on such a home."""
    from starlette.testclient import TestClient

    from metaclaw_plugin.sidecar import create_app, load_or_create_token

    store = TrajectoryStore(home / "metaclaw.db")
    store.open()
    journal_only(store)
    store.append_turn(make_turn(1, session="good", latency_ms=float("inf")))
    store.append_turn(poison_turn(1, POISONS["30-digit generation"]))
    store.append_turn(make_turn(2, session="good"))
    store.close()
    token = load_or_create_token(home)
    app = create_app(MetaClawPlugin(Settings(home=home)), token, manage_plugin=True)
    with TestClient(app, base_url="http://127.0.0.1") as c:
        r = c.get("/v1/sessions/good", headers={"Authorization": f"Bearer {token}"})
        assert r.status_code == 200
        body = json.loads(r.text, parse_constant=_strict)
        assert [t["turn_id"] for t in body["turns"]] == ["good-1", "good-2"] and body["turns"][0]["latency_ms"] is None


def test_a_turn_without_a_session_between_two_good_ones_through_the_hooks(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    acked = []
    for sid in ("one", None, "two"):
        ctx = TurnContext(session_id=sid)  # type: ignore[arg-type]
        p.on_request(ctx, [{"role": "user", "content": f"question for {sid}"}])
        if p.on_response(ctx, {"role": "assistant", "content": "answer"}) is not None and sid:
            acked.append(ctx.request_id)
    assert p.flush()
    assert sorted(acked) == [i for i in stored_ids(home / "metaclaw.db") if i in acked] and len(acked) == 2
    p.stop()
    p = MetaClawPlugin(Settings(home=home)).start()  # and it starts again
    p.stop()


def test_non_finite_numbers_are_stored_as_null_and_reads_stay_json(home: Path):
    store = TrajectoryStore(home / "metaclaw.db")
    store.open()
    turn = make_turn(1, session="inf", latency_ms=float("inf"), usage={"tokens": float("nan"), "n": 3})
    assert store.append_turn(turn)
    store.record_reward(turn.turn_id, "judge", float("inf"))  # no meaning as a score: set aside
    store.end_session("default", "inf", {"success": True, "score": float("-inf")}, "host")
    assert store.flush()
    got = store.get_session("inf").turns[0]
    assert got.latency_ms is None and got.usage == {"tokens": None, "n": 3}
    assert store.set_aside == 1
    store.close()
    shown = cli_json("sessions", "show", "inf")  # strict JSON: no Infinity, no NaN
    assert shown["turns"][0]["latency_ms"] is None and shown["outcome"] == {"success": True, "score": None}


def test_an_old_journal_with_torn_and_unparseable_lines_replays_the_rest(home: Path):
    """Unframed lines (earlier releases) still replay; a torn line, a line that is not an object and a record
    the database refuses are set aside."""
    folder = home / "journal"
    folder.mkdir(parents=True)
    good = {
        "t": "turn", "turn_id": "old-1", "tenant": "default", "session_id": "old", "kind": "main",
        "list_hash": "", "generation": 0, "created_at": 1.0, "latency_ms": 1e999,
    }  # fmt: skip
    bad = {**good, "turn_id": "old-2", "generation": 10**30}
    later = {**good, "turn_id": "old-3", "created_at": 2.0}
    lines = [json.dumps(good), json.dumps(bad), '{"t": "turn", "turn_id": "torn', "[1, 2]", json.dumps(later)]
    (folder / "999999999-1-000001.jsonl").write_text("\n".join(lines) + "\n")
    check_home_starts(home, ["old-1", "old-3"], set_aside=3)


# A full disk ------------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root (the shim variant runs instead)")
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)], capture_output=True
    )
    if res.returncode != 0:
        pytest.skip(f"mount refused: {res.stderr.decode(errors='replace').strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def fill(folder: Path) -> Path:
    """Fill the filesystem of ``folder`` to the last byte."""
    filler = folder / "filler"
    with filler.open("wb", buffering=0) as f:
        for chunk in (1 << 20, 1 << 12, 1 << 8, 1):
            with contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * chunk)
    return filler


def test_disk_full_on_a_real_filesystem_acknowledges_only_durable_turns(tmp_path: Path, monkeypatch):
    with tmpfs(tmp_path / "mnt", "16m") as home:
        monkeypatch.setenv("METACLAW_HOME", str(home))
        p = MetaClawPlugin(Settings(home=home)).start()
        acked: list[str] = []
        refused = 0

        def turn(i: int) -> None:
            nonlocal refused
            ctx = TurnContext(session_id="full")
            p.on_request(ctx, [{"role": "user", "content": f"question {i} " + "x" * (i * 37 % 3000)}])
            if p.on_response(ctx, {"role": "assistant", "content": f"answer {i}"}) is None:
                refused += 1
            else:
                acked.append(ctx.request_id)

        for i in range(5):
            turn(i)
        assert p.flush()
        filler = fill(home)
        for i in range(5, 60):
            turn(i)
        filler.unlink()  # the fault clears
        for i in range(60, 65):
            turn(i)
        assert p.flush()
        assert [i for i in stored_ids(home / "metaclaw.db") if i in acked] == sorted(acked)
        assert refused > 0 and p.status()["store"]["journal_errors"] == refused
        p.stop()
        for seg in (home / "journal").glob("*.jsonl"):
            assert not read_segment(seg).bad  # no torn record, none glued to the next
        p = MetaClawPlugin(Settings(home=home)).start()
        try:
            assert p.flush()
            ids = stored_ids(home / "metaclaw.db")
            assert len(ids) == len(set(ids)) and set(acked) <= set(ids)
        finally:
            p.stop()


class _Shim:
    """The journal module's ``os``, failing as a full disk does: ``short`` (part of the data, then ENOSPC),
    ``abandoned`` (the same, and the torn part cannot be cut back off either) or ``fsync`` (the data is written but
    cannot be synced)."""

    def __init__(self, mode: str):
        self.armed = False
        self.mode = mode
        self.fsyncs = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(os, name)

    def write(self, fd: int, data: bytes) -> int:
        if not self.armed or self.mode == "fsync":
            return os.write(fd, data)
        if len(data) > 1:
            return os.write(fd, data[: len(data) // 2])  # a short write; the next call fails
        raise OSError(errno.ENOSPC, "No space left on device")

    def fsync(self, fd: int) -> None:
        if self.armed and self.mode == "fsync":
            raise OSError(errno.EIO, "Input/output error")
        self.fsyncs += 1
        os.fsync(fd)

    def ftruncate(self, fd: int, size: int) -> None:
        if self.mode == "abandoned":
            raise OSError(errno.ENOSPC, "No space left on device")
        os.ftruncate(fd, size)


@pytest.mark.parametrize("mode", ["short", "abandoned", "fsync"])
def test_disk_full_shim_never_glues_a_torn_write_to_the_next_record(home: Path, monkeypatch, mode: str):
    shim = _Shim(mode)
    monkeypatch.setattr(journal, "os", shim)
    store = TrajectoryStore(home / "metaclaw.db", journal_fsync=mode == "fsync")
    store.open()
    journal_only(store)  # everything replays from the journal: what it holds is what counts
    store.append_turn(make_turn(1, session="d"))
    shim.armed = True
    for i in (2, 3):
        with pytest.raises(JournalWriteError):
            store.append_turn(make_turn(i, session="d"))
    shim.armed = False
    store.append_turn(make_turn(4, session="d"))
    assert store.journal_errors == 2 and (shim.fsyncs >= 2) == (mode == "fsync")  # fsync only when configured
    store.close()
    check_home_starts(home, ["d-1", "d-4"], set_aside=1 if mode == "abandoned" else 0)  # the torn tail, if left
    assert not {"d-2", "d-3"} & set(stored_ids(home / "metaclaw.db"))


def test_a_read_only_home_still_starts_and_acknowledges_nothing_it_cannot_keep(tmp_path: Path, monkeypatch):
    with tmpfs(tmp_path / "mnt", "16m") as home:
        monkeypatch.setenv("METACLAW_HOME", str(home))
        p = MetaClawPlugin(Settings(home=home)).start()
        ctx = TurnContext(session_id="ro")
        p.on_request(ctx, [{"role": "user", "content": "before"}])
        first = p.on_response(ctx, {"role": "assistant", "content": "one"})
        p.stop()
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
        p = MetaClawPlugin(Settings(home=home)).start()  # starts on a read-only home
        ctx = TurnContext(session_id="ro")
        p.on_request(ctx, [{"role": "user", "content": "while read-only"}])
        assert p.on_response(ctx, {"role": "assistant", "content": "two"}) is None  # not durable: not acknowledged
        assert p.status()["store"]["journal_errors"] >= 1
        subprocess.run(["mount", "-o", "remount,rw", str(home)], check=True)
        ctx = TurnContext(session_id="ro")
        p.on_request(ctx, [{"role": "user", "content": "after"}])
        third = p.on_response(ctx, {"role": "assistant", "content": "three"})
        assert first is not None and third is not None and p.flush()
        assert {first.turn_id, third.turn_id} <= set(stored_ids(home / "metaclaw.db"))
        p.stop()


# The database under a running store ------------------------------------------------------------------------------
def _lose(db: Path, how: str) -> None:
    if how == "deleted":
        db.unlink()
    elif how == "deleted with its wal":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    elif how == "truncated":
        os.truncate(db, 0)
    elif how == "replaced":
        other = db.with_name("other.db")
        connect(other).close()
        other.replace(db)


@pytest.mark.parametrize("how", ["deleted", "deleted with its wal", "truncated", "replaced"])
def test_a_database_file_lost_under_a_running_store_is_created_again(home: Path, how: str):
    db = home / "metaclaw.db"
    store = TrajectoryStore(db)
    store.open()
    for i in range(3):
        store.append_turn(make_turn(i, session="lost"))
    store.append_turn(poison_turn(1, POISONS["no session id"]))
    assert store.flush() and store.set_aside == 1
    _lose(db, how)
    for i in range(3, 6):
        store.append_turn(make_turn(i, session="lost"))
    assert store.flush()
    want = [f"lost-{i}" for i in range(6)]
    assert stored_ids(db) == want  # the file at the path, read by another connection
    assert store.db_recreated == 1 and [t.turn_id for t in store.get_session("lost").turns] == want
    assert store.set_aside == 1  # replayed again into the new file, the poison is not set aside twice
    store.close()
    check_home_starts(home, want, set_aside=1)


def test_a_database_replaced_by_junk_before_start_is_moved_aside(home: Path):
    db = home / "metaclaw.db"
    store = TrajectoryStore(db)
    store.open()
    journal_only(store)
    store.append_turn(make_turn(1, session="junk"))
    store.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    db.write_bytes(os.urandom(8192))
    check_home_starts(home, ["junk-1"], set_aside=0)
    assert list(home.glob("metaclaw.db.lost-*"))  # kept for a look, never deleted


def test_a_locked_database_is_retried_while_the_store_runs(home: Path, monkeypatch):
    def short_wait(path: Any, **kw: Any) -> sqlite3.Connection:
        conn = connect(path, **kw)
        conn.execute("PRAGMA busy_timeout=50")
        return conn

    monkeypatch.setattr(apply, "connect", short_wait)
    db = home / "metaclaw.db"
    store = TrajectoryStore(db)
    store.open()
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    for i in range(4):
        store.append_turn(make_turn(i, session="locked"))
    assert not store.flush(1.0) and store.write_errors >= 1  # the writer met the lock and keeps the batch
    blocker.execute("ROLLBACK")
    blocker.close()
    assert store.flush()
    assert stored_ids(db) == [f"locked-{i}" for i in range(4)] and store.retrying == 0
    store.close()


def test_turns_a_full_queue_left_in_the_journal_go_in_while_the_store_runs(home: Path):
    db = home / "metaclaw.db"
    store = TrajectoryStore(db, queue_max=2)
    store.open()
    blocker = sqlite3.connect(db, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the writer waits on the lock; the queue overflows
    for i in range(30):
        store.append_turn(make_turn(i, session="overflow"))
    assert store.dropped > 0
    blocker.execute("ROLLBACK")
    blocker.close()
    assert store.flush(60)  # the writer may be in a retry backoff from the lock: a loaded CI needs the margin
    assert stored_ids(db) == sorted(f"overflow-{i}" for i in range(30))  # no restart needed
    store.close()
    assert not list((home / "journal").glob("*.jsonl"))


# kill -9 at random points ------------------------------------------------------------------------------------------
CHILD = r"""
import sys
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.types import Turn
db, tag = sys.argv[1], sys.argv[2]
store = TrajectoryStore(db)
store.open()
i = 0
print("up", store.set_aside, flush=True)
while True:
    poison = i % 5 == 3
    t = Turn(turn_id=f"{tag}-{i}", session_id=None if poison else f"k{i % 3}", tenant="default", kind="main",
             messages=[{"role": "user", "content": f"q {tag} {i} " + "z" * (i * 97 % 20000)}],
             response={"role": "assistant", "content": f"a {i}"},
             skill_generation=10**30 if i % 7 == 5 else 0)
    store.append_turn(t)
    if not poison and i % 7 != 5:
        print("ack", t.turn_id, flush=True)
    i += 1
"""


def test_kill_9_at_random_points_loses_no_acknowledged_turn(home: Path):
    rng = random.Random(26)
    db = home / "metaclaw.db"
    acked: list[str] = []
    for round_ in range(4):
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(db), f"r{round_}"], stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("up")  # it started, replaying what the last one left
        for _ in range(rng.randint(1, 200)):
            line = proc.stdout.readline()
            assert line.startswith("ack"), "child died"
            acked.append(line.split()[1])
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    store = TrajectoryStore(db)
    store.open()
    assert store.flush()
    store.close()
    ids = stored_ids(db)
    assert len(ids) == len(set(ids)) and set(acked) <= set(ids)
    numbers = [int(i.split("-")[1]) for i in ids]
    assert not [n for n in numbers if n % 5 == 3 or n % 7 == 5]  # the poison is never stored


# Generated poison -------------------------------------------------------------------------------------------------
_text = st.text(st.characters(exclude_categories=()), max_size=40)  # lone surrogates included
_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    _text,
    st.binary(max_size=20),
    st.integers(0, 300_000).map(lambda n: "y" * n),  # every size
    st.builds(object),
)


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=3) | st.dictionaries(_text | st.integers(), inner, max_size=3)


_value = st.recursive(_scalar, _nested, max_leaves=8)
_FIELDS = [
    "turn_id", "session_id", "tenant", "kind", "messages", "response", "tool_calls", "model", "usage", "latency_ms",
    "injected_skills", "skill_generation", "error", "host", "user", "created_at", "tools",
]  # fmt: skip


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(
    plan=st.lists(
        st.one_of(st.just(None), st.dictionaries(st.sampled_from(_FIELDS), _value, min_size=1, max_size=3)),
        min_size=2,
        max_size=8,
    )
)
@example(plan=[{"response": "ab"}, None])  # refused after its messages were keyed: the next turn must carry them
def test_generated_poison_never_costs_a_good_turn_or_the_start(tmp_path: Path, plan: list[dict[str, Any] | None]):
    home = tmp_path / uuid.uuid4().hex
    db = home / "metaclaw.db"
    store = TrajectoryStore(db, redactor=Redactor())
    store.open()
    good: list[str] = []
    sent: dict[str, Turn] = {}
    try:
        for n, fields in enumerate(plan):
            if fields is None:
                t = make_turn(n, session=f"g{n % 2}")
                assert store.append_turn(t)
                good.append(t.turn_id)
                sent[t.turn_id] = t
                continue
            t = poison_turn(n, {"turn_id": f"poison-{n}", **fields})
            with contextlib.suppress(Exception):  # refusing a turn at the door is allowed; breaking the store is not
                store.append_turn(t)
        assert store.flush()
        assert [i for i in stored_ids(db) if i in good] == sorted(good)
    finally:
        store.close()
    assert len(dead_letters(home)) == store.set_aside
    again = TrajectoryStore(db)
    again.open()  # the journal left behind replays without raising
    assert again.flush()
    again.close()
    assert [i for i in stored_ids(db) if i in good] == sorted(good)
    reader = TrajectoryStore(db)
    for tid in good:  # whole: no message a poison turn's failed append left half-remembered
        t = reader.get_turn(tid)
        assert t is not None and (t.messages, t.response) == (sent[tid].messages, sent[tid].response)
    reader.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(garbage=st.lists(st.binary(max_size=300), min_size=1, max_size=4), cut=st.integers(0, 400))
def test_generated_journal_damage_never_stops_the_replay(tmp_path: Path, garbage: list[bytes], cut: int):
    """Garbage between the frames of a real segment and a torn tail: the whole frames replay, the rest is set
    aside."""
    home = tmp_path / uuid.uuid4().hex
    store = TrajectoryStore(home / "metaclaw.db")
    store.open()
    journal_only(store)
    for i in range(3):
        store.append_turn(make_turn(i, session="j", history=[{"role": "user", "content": f"h{i}"}]))
    store.close()
    (seg,) = list((home / "journal").glob("*.jsonl"))
    frames = [b"#" + f for f in seg.read_bytes().split(b"\n#") if f]
    frames[0] = frames[0][1:]
    damaged = b""
    for i, f in enumerate(frames):
        damaged += f + (b"\n" if not f.endswith(b"\n") else b"") + (garbage[i] if i < len(garbage) else b"")
    tail = b"#999 00000000\n" + b'{"t":"turn"' * 40
    damaged += b"\n" + tail[: max(1, cut)]
    seg.unlink()
    (home / "journal" / "999999999-1-000001.jsonl").write_bytes(damaged)
    again = TrajectoryStore(home / "metaclaw.db")
    again.open()
    assert again.flush()
    again.close()
    ids = stored_ids(home / "metaclaw.db")
    assert set(ids) <= {"j-0", "j-1", "j-2"}
    # a frame is read whole unless garbage just before it ran into its header
    assert set(ids) >= {f"j-{i}" for i in range(3) if i == 0 or i > len(garbage) or not garbage[i - 1]}


# Depth ------------------------------------------------------------------------------------------------------------
def _nested(depth: int, leaf: Any, key: str | None = "a") -> Any:
    v = leaf
    for _ in range(depth):
        v = {key: v} if key is not None else [v]
    return v


@pytest.mark.parametrize("depth", [65, 500, 900, 5000])
@pytest.mark.parametrize("where", ["message dict", "content parts", "response", "tool calls"])
def test_no_nesting_depth_makes_a_turn_disappear(home: Path, depth: int, where: str) -> None:
    """A turn is recorded whatever its shape: structure past 64 levels is flattened to its text, which is redacted
    like any text; the turn is counted as an input problem, not an error."""
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        inner = f"deep text {where} {depth}; my password is {SECRET}"
        msg: dict[str, Any] = {"role": "user", "content": "back up the file first"}
        resp: dict[str, Any] = {"role": "assistant", "content": "done"}
        if where == "message dict":
            msg["x"] = _nested(depth, inner)
        elif where == "content parts":
            msg["content"] = [{"type": "text", "text": "back up the file first"}, _nested(depth, inner, None)]
        elif where == "response":
            resp["extra"] = _nested(depth, inner)
        else:
            resp["tool_calls"] = [{"id": "c1", "type": "function", "function": _nested(depth, inner)}]
        ctx = TurnContext("deep-" + uuid.uuid4().hex[:8], host="test")
        p.on_request(ctx, [msg])
        turn = p.on_response(ctx, resp)
        assert turn is not None and p.errors == {}
        assert any("flattened" in k for k in p.input_problems)
        s = p.read_session(ctx.session_id)
        assert s is not None and len(s.turns) == 1
        stored = json.dumps([s.turns[0].messages, s.turns[0].response, s.turns[0].tool_calls])
        assert f"deep text {where} {depth}" in stored and SECRET not in stored
    finally:
        p.stop()


def test_a_cycle_inside_a_message_is_recorded_too(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        loop: dict[str, Any] = {"text": "round and round"}
        loop["self"] = loop
        ctx = TurnContext("cycle-" + uuid.uuid4().hex[:8], host="test")
        p.on_request(ctx, [{"role": "user", "content": "hello", "meta": loop}])
        assert p.on_response(ctx, {"role": "assistant", "content": "hi"}) is not None
        s = p.read_session(ctx.session_id)
        assert s is not None and len(s.turns) == 1 and "round and round" in json.dumps(s.turns[0].messages)
    finally:
        p.stop()


@pytest.mark.parametrize("offset", [-30, -12, -1])
def test_a_secret_across_the_dead_letter_cut_is_not_written_raw(home: Path, offset: int) -> None:
    """The dead-letter file keeps the first 64 KiB of a piece it cannot read: redacted first, then cut, so a token
    that straddles the cut is a placeholder, not its first half."""
    dead = journal.DeadLetter(home / "metaclaw.db", Redactor())
    start = journal.DEAD_RAW_MAX + offset  # where the token begins: its first characters fall before the cut
    text = ("lorem ipsum " * (start // 12 + 1))[: start - len("token: ")] + "token: " + SECRET + " and more text"
    dead.put("torn frame", where="test", raw=text.encode())
    (letter,) = dead_letters(home)
    kept = letter["raw"]
    assert len(kept) <= journal.DEAD_RAW_MAX
    assert SECRET[:8] not in kept, kept[-60:]


def test_the_dead_letter_cut_falls_between_characters(home: Path) -> None:
    dead = journal.DeadLetter(home / "metaclaw.db", Redactor())
    dead.put("torn frame", where="test", raw=("é" * journal.DEAD_RAW_MAX).encode())  # two bytes each
    (letter,) = dead_letters(home)
    assert letter["raw"] == "é" * journal.DEAD_RAW_MAX  # whole characters, no U+FFFD from half of one


_FLOOD_HOST = r"""
import contextlib, json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr)  # the host logs to its stderr
from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
home = sys.argv[1]
p = MetaClawPlugin(Settings(home=home)).start()
ctx = TurnContext("warm")
p.on_request(ctx, [{"role": "user", "content": "warm up"}])
p.on_response(ctx, {"role": "assistant", "content": "ok"})
p.flush()
with open(home + "/filler", "wb", buffering=0) as f:  # the disk fills up
    for chunk in (1 << 20, 1 << 12, 1 << 8, 1):
        with contextlib.suppress(OSError):
            while True:
                f.write(b"\0" * chunk)
print("---full---", file=sys.stderr, flush=True)
refused = 0
for i in range(400):
    ctx = TurnContext(f"s{i % 7}")
    p.on_request(ctx, [{"role": "user", "content": f"question {i} " + "x" * 500}])
    refused += p.on_response(ctx, {"role": "assistant", "content": f"answer {i}"}) is None
    logging.getLogger("metaclaw_plugin.memory").warning("a background fault that repeats")
status = p.status()
print(json.dumps({"refused": refused, "logging": status["logging"], "journal_errors": status["store"]["journal_errors"]}))
"""


def test_a_full_disk_does_not_flood_the_hosts_stderr(tmp_path: Path) -> None:
    """400 turns on a full disk, each refused by the journal and failing its log write: the host's stderr gets a few
    lines, not a traceback each; what was held back is counted in status."""
    with tmpfs(tmp_path / "mnt", "8m") as home:
        r = subprocess.run([sys.executable, "-c", _FLOOD_HOST, str(home)], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    after = r.stderr.split("---full---", 1)[1]
    lines = [line for line in after.splitlines() if line.strip()]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["refused"] >= 350 and out["journal_errors"] >= out["refused"]  # a freed byte lets a few through
    assert "--- Logging error ---" not in after
    records = [line for line in lines if re.match(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):|metaclaw: ", line)]
    assert len(records) <= 10, "\n".join(records)  # each kind of fault once, not once per turn
    assert len(lines) <= 80, "\n".join(lines[:100])  # with the first one's traceback
    assert out["logging"]["log_records_held_back"] >= 700  # the turns' failures and the repeated warning
    assert out["logging"]["log_file_errors"] >= 1
