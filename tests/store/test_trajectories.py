"""The trajectory store: durability across kill -9, dedup size, isolation, bad input, redaction on disk."""

from __future__ import annotations

import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from home_files import home_files

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.privacy import Redactor
from metaclaw_plugin.skillbank.render import CLOSE, OPEN
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.types import Turn

BIG_SYSTEM = "You are a helpful assistant running inside a gateway. " * 700  # ~38 KB, like OpenClaw's


def make_turn(i: int, session: str = "s", history: list | None = None, **kw) -> Turn:
    msgs = (
        [{"role": "system", "content": BIG_SYSTEM}] + (history or []) + [{"role": "user", "content": f"question {i}"}]
    )
    return Turn(
        turn_id=f"{session}-{i}",
        session_id=session,
        tenant="default",
        kind="main",
        messages=msgs,
        response={"role": "assistant", "content": f"answer {i}"},
        **kw,
    )


def db_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("VACUUM")
    conn.close()
    return path.stat().st_size


def run_conversation(store: TrajectoryStore, turns: int) -> None:
    history: list = []
    for i in range(turns):
        t = make_turn(i, history=list(history))
        store.append_turn(t)
        history += [t.messages[-1], t.response]


def test_each_extra_turn_costs_under_2kb_on_disk(tmp_path: Path):
    sizes = {}
    for n in (10, 40):
        store = TrajectoryStore(tmp_path / f"{n}.db")
        store.open()
        run_conversation(store, n)
        store.close()
        sizes[n] = db_bytes(tmp_path / f"{n}.db")
    per_turn = (sizes[40] - sizes[10]) / 30
    assert per_turn <= 2048, per_turn
    store = TrajectoryStore(tmp_path / "40.db")
    session = store.get_session("s")
    assert len(session.turns) == 40
    last = session.turns[-1]
    assert last.messages[0]["content"] == BIG_SYSTEM and len(last.messages) == 1 + 2 * 39 + 1
    assert last.messages[-1]["content"] == "question 39" and last.response["content"] == "answer 39"


def test_injected_block_is_stored_apart_but_read_back_in_place(plugin: MetaClawPlugin):
    ctx = TurnContext("blk")
    sent = plugin.on_request(
        ctx,
        [
            {"role": "system", "content": BIG_SYSTEM},
            {"role": "user", "content": "back up the json file before editing it"},
        ],
    )
    assert ctx.injected_skills
    plugin.on_response(ctx, {"role": "assistant", "content": "ok"})
    plugin.flush()
    turn = plugin.store.get_session("blk").turns[0]
    assert turn.messages == sent and turn.injected_skills == ctx.injected_skills


def test_a_block_the_plugin_did_not_inject_is_still_redacted(plugin: MetaClawPlugin):
    """Only the block the plugin rendered itself skips redaction; text a client wraps in the same
    markers is user content like any other."""

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    forged = f"{OPEN}\nuse token {secret} for the deploy\n{CLOSE}"
    ctx = TurnContext("forged")
    plugin.on_request(
        ctx,
        [
            {"role": "system", "content": "Be brief.\n" + forged},
            {"role": "user", "content": "back up the json file before editing it"},
        ],
    )
    plugin.on_response(ctx, {"role": "assistant", "content": "ok"})
    store_only = make_turn(1, session="forged-direct")
    store_only.messages[0] = {"role": "system", "content": forged}
    plugin.store.append_turn(store_only)
    plugin.flush()
    for sid in ("forged", "forged-direct"):
        system = plugin.store.get_session(sid).turns[0].messages[0]["content"]
        assert secret not in system and "[REDACTED:github_token]" in system
    assert not any(secret.encode() in data for data in home_files(plugin.settings.home_dir).values())


def test_the_plugins_own_block_followed_by_its_memory_section_is_not_redacted_again(tmp_path: Path):
    """What the plugin renders is its skills block and, after it, the memory section; the block split out of the
    message is the first part only. It is library text and skips redaction (it had been redacted again on every
    turn that carried a memory section); a block that is not the start of what the plugin rendered still is."""

    class Counting(Redactor):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def redact(self, text: str) -> str:
            self.seen.append(text)
            return super().redact(text)

    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    ours = f"{OPEN}\nskill text naming {secret}\n{CLOSE}"  # library text is stored as it is
    rendered = ours + "\n\n<metaclaw-memory>\n- the user's standup is at 9:30\n</metaclaw-memory>"
    red = Counting()
    store = TrajectoryStore(tmp_path / "t.db", redactor=red)
    store.open()
    for i, (block, skill_block) in enumerate(((ours, rendered), (ours.replace("skill", "forged"), rendered))):
        t = make_turn(i, session=f"m{i}")
        t.messages[0] = {"role": "system", "content": "Be brief.\n" + block + rendered[len(ours) :]}
        store.append_turn(t, skill_block=skill_block)
    store.flush()
    assert not any(OPEN in s and "skill text" in s for s in red.seen)  # ours: never handed to the redactor
    assert any("forged text" in s for s in red.seen)
    assert secret in store.get_session("m0").turns[0].messages[0]["content"]
    assert secret not in store.get_session("m1").turns[0].messages[0]["content"]
    store.close()


def test_a_system_prompt_is_stored_once_whatever_memory_section_follows_the_block(tmp_path: Path):
    """The memory section changes with the request; split off with the skills block (or alone, when no skill was
    chosen), it leaves the system prompt the same message from turn to turn, and every turn reads back as sent."""
    big = "You are a coding agent. " * 1500  # ~36 KB, as an agent's system prompt
    skills = f"{OPEN}\nskill text\n{CLOSE}"
    sections = [f"<metaclaw-memory>\n- note {i}\n</metaclaw-memory>" for i in range(3)]
    injected = [skills + "\n\n" + sections[0], skills + "\n\n" + sections[1], sections[2]]
    store = TrajectoryStore(tmp_path / "t.db", redactor=Redactor())
    store.open()
    sent = []
    for i, text in enumerate(injected):
        t = make_turn(i, session=f"m{i}")
        t.messages[0] = {"role": "system", "content": big + "\n\n" + text}
        sent.append(t.messages)
        store.append_turn(t, skill_block=text)
    store.flush()
    conn = sqlite3.connect(tmp_path / "t.db")
    holding = conn.execute("SELECT COUNT(*) FROM messages WHERE length(content) > 30000").fetchone()[0]
    conn.close()
    assert holding == 1
    assert [store.get_session(f"m{i}").turns[0].messages for i in range(3)] == sent
    store.close()


def test_messages_that_differ_only_in_field_layout_are_stored_apart(tmp_path: Path):
    store = TrajectoryStore(tmp_path / "t.db")
    store.open()
    variants = [
        {"role": "user", "content": "1x"},
        {"role": "user1", "content": "x"},
        {"content": "1x", "role": "user"},
        {"role": "user", "content": "1x", "name": "a"},
        {"role": "user", "content": ["1x"]},
        {"role": "user", "content": None},
    ]
    for i, m in enumerate(variants):
        store.append_turn(
            Turn(turn_id=f"v{i}", session_id="v", tenant="default", kind="main", messages=[m], response=None)
        )
    store.flush()
    got = [t.messages[0] for t in store.get_session("v").turns]
    assert got == variants
    assert store.counts()["messages"] == len(variants) - 1  # key order alone is the same message
    store.close()


def test_a_turn_is_placed_in_its_session_by_reading_two_turns_not_the_session(tmp_path: Path, monkeypatch):
    """The judge places every turn (its next main turn, the outcome when it is the last): reading the whole session
    each time made a long session's judging quadratic."""
    store = TrajectoryStore(tmp_path / "t.db")
    store.open()
    for i in range(60):
        kind = "side" if i % 3 == 1 else "main"  # a title or summary call between the user's turns
        store.append_turn(
            Turn(
                turn_id=f"t{i}",
                session_id="long",
                tenant="default",
                kind=kind,
                messages=[{"role": "user", "content": f"question {i}"}],
                response={"role": "assistant", "content": f"answer {i}"},
            )
        )
    store.flush()
    read: list[str] = []
    real = store.queries._turn
    monkeypatch.setattr(store.queries, "_turn", lambda r: read.append(r["turn_id"]) or real(r))
    placed = store.placed_turn("t30")
    assert placed is not None and placed.turn.turn_id == "t30"
    assert placed.next_main is not None and placed.next_main.turn_id == "t32"  # t31 is a side call
    assert placed.next_main.messages[-1]["content"] == "question 32"
    assert placed.outcome is None and sorted(read) == ["t30", "t32"]
    assert store.placed_turn("t59").next_main is None and store.placed_turn("t59").outcome is None  # not ended
    store.end_session("default", "long", {"success": True}, "host")
    store.flush()
    assert store.placed_turn("t59").outcome == {"success": True}
    assert store.placed_turn("t57").outcome is None  # not the last main turn
    assert store.placed_turn("nope") is None
    store.close()


CHILD = r"""
import sys
from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
p = MetaClawPlugin(Settings(home=sys.argv[1])).start()
i = 0
while True:
    ctx = TurnContext(session_id="durable")
    msgs = p.on_request(ctx, [{"role": "user", "content": f"turn number {i}"}])
    p.on_response(ctx, {"role": "assistant", "content": f"reply {i}"})
    print(f"ack {i}", flush=True)  # the client has its response now
    i += 1
"""


def test_kill_9_loses_no_acknowledged_turn(home: Path):
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(home)], stdout=subprocess.PIPE, text=True)
    acked = -1
    assert proc.stdout is not None
    while acked < 150:
        line = proc.stdout.readline()
        assert line, "child died"
        acked = int(line.split()[1])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        p.flush()
        turns = p.store.get_session("durable").turns
        got = [t.response["content"] for t in turns]
        assert len(got) >= acked + 1
        assert got[: acked + 1] == [f"reply {i}" for i in range(acked + 1)]
        assert p.store.replayed >= 1 or len(got) == acked + 1
    finally:
        p.stop()


def test_concurrent_sessions_never_mix(plugin: MetaClawPlugin):
    def worker(n: int) -> None:
        for i in range(25):
            ctx = TurnContext(session_id=f"sess-{n}")
            plugin.on_request(ctx, [{"role": "user", "content": f"s{n} q{i}"}])
            time.sleep(0.0005)
            plugin.on_response(ctx, {"role": "assistant", "content": f"s{n} a{i}"})

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    plugin.flush()
    for n in range(6):
        turns = plugin.store.get_session(f"sess-{n}").turns
        assert [t.response["content"] for t in turns] == [f"s{n} a{i}" for i in range(25)]
        assert all(t.messages[-1]["content"] == f"s{n} q{i}" for i, t in enumerate(turns))


def appends_to_a_locked_database(db: Path) -> float:
    """50 turns appended to a store whose writer waits on a database locked by another connection (a queue of 2):
    the seconds the appends took. The store is closed after the lock is let go."""
    store = TrajectoryStore(db, queue_max=2)
    store.open()
    blocker = sqlite3.connect(db, timeout=1)
    blocker.execute("BEGIN IMMEDIATE")  # the writer thread now waits on the database
    t0 = time.perf_counter()
    for i in range(50):
        store.append_turn(make_turn(i, session="q"))
    elapsed = time.perf_counter() - t0
    assert store.dropped > 0  # the full queue dropped to the journal
    blocker.rollback()
    blocker.close()
    store.close()
    return elapsed


def test_full_queue_drops_to_the_journal_and_replays(tmp_path: Path):
    db = tmp_path / "t.db"
    appends_to_a_locked_database(db)
    reopened = TrajectoryStore(db)
    reopened.open()
    reopened.flush()
    assert len(reopened.get_session("q").turns) == 50
    reopened.close()
    assert not list((tmp_path / "journal").glob("*.jsonl"))


@pytest.mark.perf
def test_a_locked_database_never_holds_the_host(tmp_path: Path):
    assert appends_to_a_locked_database(tmp_path / "t.db") < 2.0  # the host never waited on the lock


def test_replayed_journal_gives_the_same_messages_and_hashes(tmp_path: Path):
    """Message records go into the journal as raw canonical JSON (not JSON in a string): replay must
    store the very text, under the very hash, that the writer thread would have; lines written in the
    older form (the text as a string) still replay."""
    db = tmp_path / "t.db"
    tricky = [
        {"role": "system", "content": 'quotes " and \\ and \n lines, é, 😀, \u2028 and tabs\t'},
        {"role": "user", "content": [{"type": "text", "text": "part"}, {"type": "image_url", "n": 1.5e-7}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "f", "arguments": '{"a": [1, 2.0, -0.0]}'}}
            ],
        },
    ]
    turn = Turn(
        turn_id="r1",
        session_id="replay",
        tenant="default",
        kind="main",
        messages=tricky,
        response={"role": "assistant", "content": "done", "n": 12345678901234567890},
    )
    live = TrajectoryStore(tmp_path / "live.db")
    live.open()
    live.append_turn(turn)
    live.close()
    store = TrajectoryStore(db)
    store.open()

    def full(item):
        raise queue.Full

    store.records.queue.put_nowait = full  # type: ignore[method-assign]  # the writer never sees it: journal only
    assert store.append_turn(turn) is False and store.dropped == 1
    store.close()
    # An older line: the message's text as a JSON string.
    old = {"t": "msg", "h": "0123456789abcdef01234567", "c": '{"content":"old form","role":"user"}'}
    (tmp_path / "journal" / "999999999-1-000001.jsonl").write_text(json.dumps(old) + "\n")
    reopened = TrajectoryStore(db)
    reopened.open()
    reopened.flush()
    got = reopened.get_session("replay").turns[0]
    assert got.messages == tricky and got.response == turn.response
    rows, live_rows = ({}, {})
    for path, out in ((db, rows), (tmp_path / "live.db", live_rows)):
        conn = sqlite3.connect(path)
        out.update(conn.execute("SELECT hash, content FROM messages").fetchall())
        conn.close()
    assert live_rows and live_rows.items() <= rows.items()  # every message the live path stored, byte for byte
    assert rows["0123456789abcdef01234567"] == old["c"]
    reopened.close()


def test_a_sessions_repeated_messages_are_matched_not_keyed_again(tmp_path: Path, monkeypatch):
    """A session's next turn repeats its last turn's messages; the store matches them by comparison instead
    of keying each again. What it stores must be exactly what keying every message stores: edits in the
    middle, values that compare equal in Python but differ in JSON (1 / 1.0 / True, 0.0 / -0.0), tool calls,
    side turns and other sessions included."""
    from metaclaw_plugin.store import records

    sysmsg = {"role": "system", "content": "sys " * 500 + OPEN + "\nskill text\n" + CLOSE}
    tool = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    base = [sysmsg, {"role": "user", "content": "hi"}, tool, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]

    def turns() -> list[Turn]:
        steps = [
            base,
            base + [{"role": "user", "content": "more"}],
            base[:1] + [{"role": "user", "content": "hi, edited"}] + base[2:],  # history edited
            [dict(m) for m in base] + [{"role": "user", "content": "x", "n": 1}],
            base + [{"role": "user", "content": "x", "n": True}],
            base + [{"role": "user", "content": "x", "n": 1.0}],
            base + [{"role": "user", "content": "x", "n": 0.0}],
            base + [{"role": "user", "content": "x", "n": -0.0}],
            [{**sysmsg, "content": sysmsg["content"].replace("skill text", "other skill")}] + base[1:],
        ]
        out = []
        for i, msgs in enumerate(steps):
            for session, kind in (("a", "main"), ("a", "side"), ("b", "main")):
                out.append(
                    Turn(
                        turn_id=f"{session}-{kind}-{i}",
                        session_id=session,
                        tenant="default",
                        kind=kind,
                        messages=msgs,
                        response={"role": "assistant", "content": f"r{i}"},
                    )
                )
        return out

    def stored(db: Path, keep: int) -> tuple:
        monkeypatch.setattr(records, "PREFIX_SESSIONS", keep)
        store = TrajectoryStore(db)
        store.open()
        for t in turns():
            store.append_turn(t, skill_block=OPEN + "\nskill text\n" + CLOSE)
        reused = len(store.records._prefixes)
        store.close()
        conn = sqlite3.connect(db)
        rows = tuple(sorted(conn.execute(f"SELECT * FROM {t}").fetchall()) for t in ("messages", "msg_lists"))
        hashes = conn.execute(
            "SELECT turn_id, list_hash, block_hash, response_hash FROM turns ORDER BY turn_id"
        ).fetchall()
        conn.close()
        return rows, hashes, reused

    matched = stored(tmp_path / "matched.db", 1024)
    # A host that edits its message dicts in place between turns: the edit is stored, not the old text.
    monkeypatch.setattr(records, "PREFIX_SESSIONS", 1024)
    store = TrajectoryStore(tmp_path / "edited.db")
    store.open()
    history = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one", "meta": {"n": [1]}}]
    for i in range(3):
        store.append_turn(
            Turn(turn_id=f"e{i}", session_id="e", tenant="default", kind="main", messages=history, response=None)
        )
        history[0]["content"] = f"first, edited {i}"
        history[1]["meta"]["n"].append(i)
    store.flush()
    got = [t.messages for t in store.get_session("e").turns]
    assert [m[0]["content"] for m in got] == ["first", "first, edited 0", "first, edited 1"]
    assert [m[1]["meta"]["n"] for m in got] == [[1], [1, 0], [1, 0, 1]]
    store.close()
    keyed = stored(tmp_path / "keyed.db", 0)
    assert matched[2] == 3 and keyed[2] == 0  # the comparison really ran (three sessions' prefixes kept)
    assert matched[:2] == keyed[:2]
    n_values = [json.loads(c).get("n") for _, c in matched[0][0] if '"n"' in c]
    assert sorted(map(repr, n_values)) == sorted(map(repr, [1, True, 1.0, 0.0, -0.0]))


def test_bad_text_and_huge_messages_are_stored_safely(tmp_path: Path):
    store = TrajectoryStore(tmp_path / "t.db", max_message_bytes=10_000)
    store.open()
    turn = Turn(
        turn_id="x1",
        session_id="bad",
        tenant="default",
        kind="main",
        messages=[
            {"role": "user", "content": "broken \udcff surrogate"},
            {"role": "user", "content": "y" * 5_000_000},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
            },
            "not even a dict",
        ],
        response=None,
        error="upstream 500",
    )
    assert store.append_turn(turn)
    store.flush()
    got = store.get_session("bad").turns[0]
    assert "surrogate" in got.messages[0]["content"]
    assert len(got.messages[1]["content"]) < 11_000 and got.messages[1]["content"].endswith("[truncated]")
    assert got.messages[2]["content"] is None and got.error == "upstream 500"
    store.close()


def test_secrets_never_reach_disk(home: Path):
    secret = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"
    p = MetaClawPlugin(Settings(home=home)).start()
    ctx = TurnContext("sec")
    p.on_request(ctx, [{"role": "user", "content": f"my key is {secret} and password=Hunter2Hunter2"}])
    p.on_response(ctx, {"role": "assistant", "content": f"noted {secret}"}, error=f"bad key {secret}")
    p.on_session_end(ctx, {"success": False, "feedback": f"use {secret}"})
    p.flush()
    mid_run = list(home_files(home).values())
    p.stop()
    blobs = mid_run + list(home_files(home).values())
    assert not any(secret.encode() in b or b"Hunter2Hunter2" in b for b in blobs)
    s = TrajectoryStore(home / "metaclaw.db").get_session("sec")
    assert "[REDACTED:openai_key]" in s.turns[0].messages[-1]["content"]


def test_files_are_private_and_retention_prunes(home: Path):
    store = TrajectoryStore(home / "m.db", redactor=Redactor())
    store.open()
    store.append_turn(make_turn(1, session="old", created_at=time.time() - 40 * 86400))
    store.append_turn(make_turn(2, session="new"))
    store.flush()
    assert (home / "m.db").stat().st_mode & 0o077 == 0
    assert all(f.stat().st_mode & 0o077 == 0 for f in (home / "journal").glob("*"))
    assert store.prune(30) == 1
    assert store.get_session("old") is None and store.get_session("new") is not None
    assert len(store.get_session("new").turns[0].messages) == 2
    # What the prune deleted is written again when it comes back: the store's memory of what is already
    # stored (by message, by list, by session) must not point a new turn at deleted rows.
    gone = [{"role": "user", "content": "asked only in an old session"}, {"role": "assistant", "content": "once"}]
    for i in (3, 4):
        store.append_turn(make_turn(i, session="back", history=list(gone), created_at=time.time() - 40 * 86400))
    store.flush()
    assert store.prune(30) == 1 and store.get_session("back") is None
    store.append_turn(make_turn(5, session="back", history=list(gone)))  # the same session comes back
    store.append_turn(make_turn(6, session="other", history=list(gone)))  # another one with the same messages
    store.flush()
    for sid in ("back", "other"):
        assert store.get_session(sid).turns[-1].messages[1:3] == gone, sid
    store.close()


def test_records_apply_in_order_within_one_batch(tmp_path: Path):
    """The writer applies a batch of journal records in a few multi-row statements; the result must be
    what applying them one by one gives: sequence numbers continue, a repeated turn counts once, an
    end closes the session and a later turn reopens it."""
    from metaclaw_plugin.store import connect
    from metaclaw_plugin.store.apply import _apply_all

    db = tmp_path / "t.db"
    conn = connect(db)

    def turn(tid: str, sid: str, at: float) -> dict:
        return {
            "t": "turn",
            "turn_id": tid,
            "tenant": "default",
            "session_id": sid,
            "kind": "main",
            "host": "h",
            "list_hash": "",
            "generation": 0,
            "created_at": at,
            "response_hash": f"m-{tid}",
        }

    def end(sid: str, at: float) -> dict:
        return {"t": "end", "tenant": "default", "session_id": sid, "outcome": None, "reason": "host", "at": at}

    first = [
        {"t": "msg", "h": "m-a1", "c": '{"content":"one","role":"assistant"}'},
        turn("a1", "a", 1.0),
        turn("b1", "b", 1.5),
    ]
    second = [
        turn("a2", "a", 2.0),
        turn("a2", "a", 2.0),
        end("a", 3.0),
        turn("b2", "b", 3.5),
        end("b", 4.0),
        turn("a3", "a", 5.0),
        {"t": "reward", "turn_id": "a3", "source": "explicit", "score": 1.0, "at": 5.1},
        turn("a1", "a", 1.0),
    ]
    for batch in (first, second, second):  # the second batch twice: a journal replayed again
        conn.execute("BEGIN IMMEDIATE")
        _apply_all(conn, batch)
        conn.execute("COMMIT")
    conn.close()
    store = TrajectoryStore(db)
    a, b = store.get_session("a"), store.get_session("b")
    assert [(t.turn_id, t.seq) for t in a.turns] == [("a1", 1), ("a2", 2), ("a3", 3)]
    assert [(t.turn_id, t.seq) for t in b.turns] == [("b1", 1), ("b2", 2)]
    assert a.turns[0].response == {"content": "one", "role": "assistant"}
    assert a.ended_at is None  # reopened by a3
    assert b.ended_at == 4.0
    rows = {r["session_id"]: r for r in store.list_sessions()}
    assert rows["a"]["turns"] == 3 and rows["b"]["turns"] == 2 and rows["a"]["end_reason"] is None
    assert [r["score"] for r in store.rewards("a3")] == [1.0]


def test_tools_are_stored_once_redacted_in_their_order_and_read_back_with_the_turn(tmp_path: Path):
    """A request's tool definitions travel with its turn: stored once per distinct list (a session repeats them
    on every turn: the journal gets them once), redacted, with their keys in the order sent (a chat template
    writes them out so), the same after a journal replay, and collected with the sessions that used them."""
    secret = "sk-proj-" + "Ab3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z"

    def tools(order: str = "sent") -> list[dict]:
        fn = {"name": "deploy", "description": f"Deploys with key {secret}", "parameters": {"type": "object"}}
        if order != "sent":
            fn = dict(reversed(fn.items()))
        return [{"type": "function", "function": fn}, {"type": "function", "function": {"name": "status"}}]

    db = tmp_path / "t.db"
    store = TrajectoryStore(db, redactor=Redactor())
    store.open()
    for i in range(3):
        for session in ("a", "b"):
            store.append_turn(make_turn(i, session=session, tools=tools()))  # equal lists, new objects each time
    store.append_turn(make_turn(9, session="a", tools=tools("reversed")))  # the same keys in another order
    store.append_turn(make_turn(10, session="a"))  # no tools
    journal = b"".join(f.read_bytes() for f in (tmp_path / "journal").glob("*.jsonl"))
    assert journal.count(b"REDACTED") == 2 and secret.encode() not in journal  # two distinct lists, once each

    def full(item):
        raise queue.Full

    put = store.records.queue.put_nowait
    store.records.queue.put_nowait = full  # type: ignore[method-assign]  # journal only: the next start replays it
    assert store.append_turn(make_turn(11, session="c", tools=tools("reversed"))) is False
    store.records.queue.put_nowait = put  # type: ignore[method-assign]
    store.close()
    store = TrajectoryStore(db, redactor=Redactor())
    store.open()
    store.flush()
    got = {t.turn_id: t.tools for s in ("a", "b", "c") for t in store.get_session(s).turns}
    sent, other = got["a-0"], got["a-9"]
    assert sent is not None and other is not None and got["a-10"] is None
    assert all(got[f"{s}-{i}"] == sent for s in ("a", "b") for i in range(3)) and got["c-11"] == other
    assert "[REDACTED:openai_key]" in sent[0]["function"]["description"]
    assert list(sent[0]["function"]) == ["name", "description", "parameters"]
    assert list(other[0]["function"]) == ["parameters", "description", "name"]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE content LIKE '[%'").fetchone()[0] == 2
    conn.close()
    store.append_turn(
        make_turn(
            12,
            session="old",
            tools=[{"type": "function", "function": {"name": "x"}}],
            created_at=time.time() - 40 * 86400,
        )
    )
    store.flush()
    assert store.prune(30) == 1
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM messages WHERE content LIKE '[%'").fetchone()[0] == 2  # x's is gone
    conn.close()
    store.append_turn(make_turn(13, session="new", tools=[{"type": "function", "function": {"name": "x"}}]))
    store.flush()
    assert store.get_session("new").turns[0].tools == [{"type": "function", "function": {"name": "x"}}]
    store.close()
