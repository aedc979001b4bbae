"""One definition each, pinned: the text of a message, the token estimate, percentile, free port, process groups."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import wait_for

from metaclaw_plugin.infra.procs import free_port, pid_alive, spawn_group, stop_process
from metaclaw_plugin.infra.stats import percentile
from metaclaw_plugin.text import approx_message_tokens, approx_tokens, content_text, message_text


class _Obj:
    def __init__(self, content: object) -> None:
        self.content = content


def test_message_text_is_one_joining_rule() -> None:
    parts = [
        {"type": "text", "text": "first"},
        {"type": "image_url", "image_url": {"url": "data:..."}},
        "bare",
        {"type": "input_text", "text": "second"},
        {"type": "text", "text": None},
        7,
    ]
    assert content_text("as is\n") == "as is\n"
    assert content_text(parts) == "first\nbare\nsecond"  # the text parts, joined by a newline, nothing else
    assert content_text([{"type": "image_url", "image_url": {}}]) == "" and content_text([]) == ""
    assert content_text(None) == "" and content_text(42) == "" and content_text({"text": "x"}) == ""
    call = {"id": "c", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    assert message_text({"role": "assistant", "content": None, "tool_calls": [call]}) == ""  # tool calls are not text
    assert message_text({"role": "user", "content": parts}) == "first\nbare\nsecond"
    assert message_text(_Obj(parts)) == "first\nbare\nsecond"  # a LangChain / LiteLLM message object
    assert message_text(None) == "" and message_text({"role": "user"}) == ""


def test_token_estimate_is_four_characters_rounded_up() -> None:
    assert [approx_tokens("x" * n) for n in (0, 1, 4, 5, 8, 9)] == [0, 1, 1, 2, 2, 3]
    msgs = [{"role": "user", "content": "x" * 9}, {"role": "assistant", "content": None}]
    assert approx_message_tokens(msgs) == 3 + 4 + 0 + 4  # the text, plus four a message for the framing
    assert approx_message_tokens([]) == 0


def test_percentile_interpolates_linearly() -> None:
    assert percentile([], 50) is None
    assert percentile([7.0], 99) == 7.0
    assert percentile([4, 1, 3, 2], 0) == 1.0 and percentile([4, 1, 3, 2], 100) == 4.0
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile(list(range(101)), 99) == 99.0
    assert percentile([10, 20], 25) == pytest.approx(12.5)


def test_free_port_can_be_bound() -> None:
    port = free_port()
    assert 0 < port < 65536
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))  # nothing holds it


def test_spawned_group_is_stopped_whole(tmp_path: Path) -> None:
    """stop_process stops the child and what it spawned (its own process group), after SIGTERM is ignored too."""
    pid_file = tmp_path / "grandchild.pid"
    script = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(g.pid))\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = spawn_group([sys.executable, "-c", script], log_path=tmp_path / "log", stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    grandchild = int(pid_file.read_text())
    assert pid_alive(grandchild)
    stop_process(proc, timeout=0.5)
    assert proc.returncode is not None
    stop_process(proc)  # stopping a stopped process is a no-op
    stop_process(None)
    # the grandchild was killed with the group (it may linger as a zombie for a moment until init reaps it)
    wait_for(lambda: not _running(grandchild), 10, "the grandchild to go with its group")


def _running(pid: int) -> bool:
    """Alive and not a zombie (Linux /proc)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def test_wait_for_ignores_stops_and_says_why() -> None:
    calls = [0]

    def flaky() -> str:
        calls[0] += 1
        if calls[0] < 3:
            raise OSError("not yet")
        return "ready"

    assert wait_for(flaky, 5, "flaky", 0.001, ignore=OSError) == "ready" and calls[0] == 3
    with pytest.raises(AssertionError, match="stopped waiting for the port: it died"):
        wait_for(lambda: False, 5, "the port", stop=lambda: "it died")

    def never() -> bool:
        raise OSError("refused")

    with pytest.raises(AssertionError, match=r"timed out after 0.05s waiting for state 7 \(OSError\('refused'\)\)"):
        wait_for(never, 0.05, lambda: "state 7", 0.01, ignore=OSError)


def test_memo_drops_the_oldest_entry_when_full() -> None:
    from metaclaw_plugin.infra.memo import Memo

    m: Memo[str, int] = Memo(2)
    assert m.put("a", 1) == 1 and m.put("b", 2) == 2 and m.put("a", 3) == 3  # a key already there evicts nothing
    m.put("c", 4)
    assert m == {"b": 2, "c": 4}  # "a" was the oldest: out first, the rest kept (no clear-all cliff)
