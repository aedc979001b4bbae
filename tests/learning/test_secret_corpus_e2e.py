"""Every secret of the corpus (tests/support/secret_corpus.py) through failed sessions with a recording local
judge/evolver: none reaches an outbound judge/evolver payload or any file under METACLAW_HOME (journal,
database, skills, logs). The corpus runs in a few sessions, not one per secret, to stay fast."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")

from fastloop_support import TASK, Roles, settings_for, wait_for
from home_files import home_files
from secret_corpus import build, leaked

from metaclaw_plugin import MetaClawPlugin, TurnContext
from metaclaw_plugin.devtools.upstream import Upstream

SESSIONS = 3


def _session(p: MetaClawPlugin, sid: str, texts: list[str]) -> None:
    half = len(texts) // 2
    first = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": f"{TASK}. Config:\n" + "\n".join(texts[:half])},
    ]
    c1 = TurnContext(sid, host="test")
    p.on_request(c1, first)
    p.on_response(c1, {"role": "assistant", "content": "I split each line on ',' and summed column 3."})
    second = first + [
        {"role": "assistant", "content": "I split each line on ',' and summed column 3."},
        {"role": "user", "content": "no, that's wrong: the file uses ';'. Also:\n" + "\n".join(texts[half:])},
    ]
    c2 = TurnContext(sid, host="test")
    p.on_request(c2, second)
    p.on_response(c2, {"role": "assistant", "content": "Still splitting on ','. Tool output:\n" + texts[0]})
    p.on_session_end(c2, {"success": False, "feedback": "wrong again; " + texts[-1]})


def test_no_corpus_secret_leaves_the_process_or_reaches_disk(home: Path):
    cases = build()
    roles = Roles()
    with Upstream(script=roles) as up:
        p = MetaClawPlugin(settings_for(home, up, evolution={"promotion": "auto"})).start()
        try:
            for i in range(SESSIONS):
                chunk = [c.text for c in cases[i::SESSIONS]]
                before = roles.evolver_calls
                _session(p, f"corpus-{i}", chunk)
                wait_for(p, lambda b=before: roles.evolver_calls > b)  # type: ignore[misc]
            p.flush()
            # while the process lives: the journal's segments and SQLite's WAL hold what was written last
            live = {path: data.decode("utf-8", "replace") for path, data in home_files(home).items()}
        finally:
            p.stop()
    outbound = [
        json.dumps(b)
        for b in up.requests
        if any(
            k in str(b["messages"][0].get("content", ""))
            for k in ("skill engineer", "strict reviewer", "security reviewer")
        )
    ]
    evolver = [b for b in outbound if "skill engineer" in b]
    assert len(evolver) >= SESSIONS and all("[REDACTED:" in b for b in evolver)  # the texts were sent, redacted
    after = {path: data.decode("utf-8", "replace") for path, data in home_files(home).items()}
    files = {**{Path(f"{k}@live"): v for k, v in live.items()}, **after}
    assert any(path.suffix in (".db", ".jsonl", ".log") or "journal" in str(path) for path in after)
    assert any(str(path).endswith("-wal@live") for path in files)  # the WAL was read while it held the pages
    leaks = []
    for case in cases:
        for s in case.secrets:
            # JSON payloads escape newlines and non-ASCII text: look for the escaped form too
            forms = {s, json.dumps(s)[1:-1]}
            for body in outbound:
                if any(leaked(f, body) for f in forms):
                    leaks.append((case.kind, "judge/evolver payload"))
            for path, data in files.items():
                if any(leaked(f, data) for f in forms):
                    leaks.append((case.kind, str(path).removeprefix(str(home))))
    assert not leaks, sorted(set(leaks))
