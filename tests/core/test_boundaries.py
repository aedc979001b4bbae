"""One bad turn must never break the home (issue 26, the boundary half): whatever the Python hooks or the sidecar
are given, no exception reaches the host, no good turn beside it is lost, the home starts again, and no secret given
in an id or in metadata (model, session, tenant, user, run id, usage, the end's reason) is stored or shown raw.

Everything runs for real: a MetaClawPlugin on a temp home, the sidecar's app under Starlette's TestClient, the
``metaclaw-plugin sessions`` CLI as a subprocess. Secrets come from tests/support/secret_corpus.py (built at run time).
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import secret_corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.types import TurnContext

CORPUS = {c.kind: c.secrets[0] for c in secret_corpus.build()}
# One distinct secret per field, so a leak names its field.
PLANTED = {
    "model": CORPUS["openai_project"],
    "session_id": CORPUS["github_pat_classic"],
    "tenant": CORPUS["aws_access_key_id"],
    "user": CORPUS["slack_bot"],
    "run_id": CORPUS["stripe_live"],
    "usage": CORPUS["huggingface"],
    "reason": CORPUS["gitlab_pat"],
    "usage_key": CORPUS["npm_token"],
    "header": CORPUS["anthropic"],
}
MSGS = [{"role": "user", "content": "copy zebra.json before editing it"}]
REPLY = {"role": "assistant", "content": "done"}


def session_path(sid: str) -> str:
    """The URL of a session: every byte quoted, and a "." or ".." id spelled %2E so that the client does not
    read it as a dot segment (``/v1/sessions/./end`` is ``/v1/sessions/end``)."""
    seg = quote(sid, safe="")
    return "/v1/sessions/" + (seg.replace(".", "%2E") if seg in (".", "..") else seg)


def leaks(home: Path, secrets: dict[str, str]) -> list[str]:
    """Every (file, field) under ``home`` holding a piece of a planted secret: the database, its WAL, the journal,
    the logs, anything else."""
    found = []
    for path in sorted(home.rglob("*")):
        if not path.is_file():
            continue
        data = path.read_bytes()
        for field, secret in secrets.items():
            if any(p.encode() in data for p in secret_corpus.pieces(secret)):
                found.append(f"{path.relative_to(home)}: {field}")
    return found


def text_leaks(text: str, secrets: dict[str, str]) -> list[str]:
    return [field for field, secret in secrets.items() if secret_corpus.leaked(secret, text)]


CONTENT = ("messages", "response", "tools", "tool_calls")  # the host's own JSON, kept as sent (NaN and all)


def restarts(home: Path) -> MetaClawPlugin:
    """The home starts again (on main, a poisoned journal made start() raise), every stored session reads back,
    and what this boundary bounds (ids, numbers, usage, outcome) is finite; the host's message content is kept as
    sent, and the outputs (the API, ``--json``) write a non-finite number in it as null."""
    p = MetaClawPlugin(Settings(home=home)).start()
    for row in p.store.list_sessions(1000):
        s = p.store.get_session(row["session_id"], tenant=row["tenant"])
        assert s is not None
        d = asdict(s)
        _strict({k: v for k, v in d.items() if k != "turns"})
        for t in d["turns"]:
            _strict({k: v for k, v in t.items() if k not in CONTENT})
        json.dumps(finite_json(d), allow_nan=False)
    return p


def finite_json(v: Any) -> Any:
    """What the outputs write (non-finite numbers as null); here, not imported, so this file runs on old code too."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: finite_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite_json(x) for x in v]
    return v


def _strict(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        raise AssertionError(f"stored a non-finite number: {v}")
    if isinstance(v, dict):
        return {k: _strict(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_strict(x) for x in v]
    return v


def good_turn(p: MetaClawPlugin, sid: str) -> None:
    ctx = TurnContext(sid)
    p.on_request(ctx, MSGS)
    assert p.on_response(ctx, REPLY) is not None


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


# ------------------------------------------------------------------------------------------------
# The Python hooks: each poison between two good turns
# ------------------------------------------------------------------------------------------------
def _ctx(**kw: Any) -> TurnContext:
    ctx = TurnContext("poison")
    for k, v in kw.items():
        setattr(ctx, k, v)
    return ctx


POISONS = {
    "no session id": lambda p: p.on_response(_ctx(session_id=None), REPLY, messages=MSGS),
    "blank session id": lambda p: p.on_response(_ctx(session_id="  "), REPLY, messages=MSGS),
    "session id a dict": lambda p: p.on_response(_ctx(session_id={"a": 1}), REPLY, messages=MSGS),
    "user a dict": lambda p: p.on_response(_ctx(user={"a": 1}), REPLY, messages=MSGS),
    "tenant a list": lambda p: p.on_response(_ctx(tenant=["t"]), REPLY, messages=MSGS),
    "model bytes": lambda p: p.on_response(_ctx(model=b"gpt"), REPLY, messages=MSGS),
    "request id none": lambda p: p.on_response(_ctx(request_id=None), REPLY, messages=MSGS),
    "30-digit generation": lambda p: p.on_response(_ctx(skill_generation=10**30), REPLY, messages=MSGS),
    "negative generation": lambda p: p.on_response(_ctx(skill_generation=-1), REPLY, messages=MSGS),
    "generation a string": lambda p: p.on_response(_ctx(skill_generation="7"), REPLY, messages=MSGS),
    "kind bogus": lambda p: p.on_response(_ctx(kind="bogus"), REPLY, messages=MSGS),
    "latency inf": lambda p: p.on_response(_ctx(), REPLY, messages=MSGS, latency_ms=float("inf")),
    "latency nan": lambda p: p.on_response(_ctx(), REPLY, messages=MSGS, latency_ms=float("nan")),
    "latency huge int": lambda p: p.on_response(_ctx(), REPLY, messages=MSGS, latency_ms=10**400),
    "usage inf and huge": lambda p: p.on_response(
        _ctx(), REPLY, messages=MSGS, usage={"a": float("inf"), "b": 10**40, "c": {"d": float("nan")}}
    ),
    "usage a list": lambda p: p.on_response(_ctx(), REPLY, messages=MSGS, usage=[1, 2]),
    "surrogates and NUL in ids": lambda p: p.on_response(
        _ctx(session_id="s\ud800x", tenant="t\x00", model="m\udfff", user="u\ud83d"), REPLY, messages=MSGS
    ),
    "error an exception": lambda p: p.on_response(_ctx(), None, messages=MSGS, error=ValueError("boom")),
    "tool_calls a string": lambda p: p.on_response(
        _ctx(), {"role": "assistant", "content": "x", "tool_calls": "exec"}, messages=MSGS
    ),
    "end with no session": lambda p: p.on_session_end(_ctx(session_id=None), {"x": float("inf")}, reason=None),  # type: ignore[arg-type]
    "end outcome inf": lambda p: p.on_session_end(_ctx(), {"score": float("inf"), "n": 10**30}, reason=7),  # type: ignore[arg-type]
    "feedback huge score": lambda p: p.on_feedback(_ctx(), 10**400, text={"t": 1}),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("poison", list(POISONS))
def test_a_poison_turn_never_breaks_the_home(home: Path, poison: str) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        good_turn(p, "before")
        POISONS[poison](p)
        good_turn(p, "after")
        assert p.flush()
        assert p.store.write_errors == 0, "a poison record failed its batch"
        for sid in ("before", "after"):
            s = p.store.get_session(sid)
            assert s is not None and len(s.turns) == 1, f"the good turn {sid!r} beside the poison was lost"
        problems = p.status()["input_problems"]
        if poison != "error an exception":  # an exception is a fine error to pass: it is written as text
            assert problems and all(isinstance(n, int) and n > 0 for n in problems.values())
        for row in p.store.list_sessions(1000):
            assert row["session_id"] and row["tenant"]
    finally:
        p.stop()
    q = restarts(home)
    try:
        assert q.store.get_session("after") is not None
    finally:
        q.stop()


def test_a_turn_without_session_id_is_kept_as_a_session_of_its_own(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        ctx = TurnContext(None)  # type: ignore[arg-type]
        p.on_request(ctx, MSGS)
        turn = p.on_response(ctx, REPLY)
        assert turn is not None and turn.session_id and turn.messages[-1] == MSGS[-1]  # the request was found
        p.flush()
        s = p.store.get_session(turn.session_id)
        assert s is not None and [t.turn_id for t in s.turns] == [turn.turn_id]
        assert p.status()["input_problems"] == {"session_id: missing or not text; the turn is a session of its own": 2}
    finally:
        p.stop()


def test_numbers_are_stored_bounded_and_finite(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        p.on_response(_ctx(skill_generation=10**30), REPLY, messages=MSGS, latency_ms=1e300, usage={"n": 10**40})
        p.flush()
        (t,) = p.store.get_session("poison").turns
        assert t.skill_generation == p.skills.generation  # out of range: the current one
        assert t.latency_ms == 30 * 86_400_000.0  # clamped to a month
        assert t.usage == {"n": 2**63 - 1}
    finally:
        p.stop()


# ------------------------------------------------------------------------------------------------
# Secrets in ids and metadata
# ------------------------------------------------------------------------------------------------
def test_secrets_in_ids_and_metadata_never_reach_disk_or_output(home: Path) -> None:
    s = PLANTED
    secret_sid = f"chat-{s['session_id']}"
    p = MetaClawPlugin(Settings(home=home)).start()
    try:
        for i in range(2):  # two turns of the same secret-bearing session: they still join
            ctx = TurnContext(secret_sid, tenant=s["tenant"], user=f"alice {s['user']}", model=f"openai/{s['model']}")
            ctx.request_id = f"{s['run_id']}-{i}"
            p.on_request(ctx, MSGS)
            p.on_response(ctx, REPLY, usage={"note": s["usage"], s["usage_key"]: 1, "prompt_tokens": 3})
        p.on_feedback(TurnContext(secret_sid, tenant=s["tenant"]), 1)
        p.flush()
        rows = p.store.list_sessions(10)
        assert len(rows) == 1 and rows[0]["turns"] == 2  # joined
        assert rows[0]["session_id"].startswith("redacted-") and rows[0]["tenant"].startswith("redacted-")
        got = p.read_session(secret_sid, tenant=s["tenant"])  # found by the id the host knows
        assert got is not None and len(got.turns) == 2
        assert got.turns[0].usage is not None and got.turns[0].usage["prompt_tokens"] == 3
        p.on_session_end(TurnContext(secret_sid, tenant=s["tenant"]), {"ok": True}, reason=f"closed {s['reason']}")
        p.flush()
        assert not leaks(home, s), "while running (the WAL and the journal are live)"
    finally:
        p.stop()
    assert not leaks(home, s), "after stop"
    key = home / "ids.key"
    assert key.stat().st_mode & 0o777 == 0o600

    cli = [sys.executable, "-m", "metaclaw_plugin"]
    env = {**os.environ, "METACLAW_HOME": str(home)}
    out = subprocess.run([*cli, "sessions", "list", "--json"], capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout)[0]["end_reason"].startswith("closed [REDACTED")
    shown = subprocess.run(
        [*cli, "sessions", "show", secret_sid, "--tenant", s["tenant"], "--json"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert len(json.loads(shown.stdout)["turns"]) == 2
    assert not text_leaks(out.stdout + shown.stdout, s)
    assert not leaks(home, s), "after the CLI read it"


# ------------------------------------------------------------------------------------------------
# The sidecar
# ------------------------------------------------------------------------------------------------
class Api:
    def __init__(self, tc: TestClient, token: str) -> None:
        self.tc = tc
        self.h = {"Authorization": f"Bearer {token}"}

    def get(self, path: str, **kw: Any) -> Any:
        return self.tc.get(path, headers=self.h, **kw)

    def post(self, path: str, body: Any = None, raw: bytes | None = None) -> Any:
        if raw is not None:
            return self.tc.post(path, headers={**self.h, "Content-Type": "application/json"}, content=raw)
        return self.tc.post(path, headers=self.h, json=body)


@pytest.fixture()
def plugin(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    yield p
    p.stop()


@pytest.fixture()
def api(plugin: MetaClawPlugin, home: Path):
    with TestClient(create_app(plugin, load_or_create_token(home)), base_url="http://127.0.0.1") as c:
        yield Api(c, load_or_create_token(home))


def sidecar_turn(api: Api, sid: str, run: str, **extra: Any) -> tuple[int, int]:
    a = api.post("/v1/turns/input", {"session_id": sid, "run_id": run, "messages": MSGS, **extra})
    b = api.post("/v1/turns/output", {"session_id": sid, "run_id": run, "response": REPLY, **extra})
    return a.status_code, b.status_code


def _raw_turn(field: str, raw_value: str, where: str) -> bytes:
    """A turns/<where> body whose ``field`` is ``raw_value``, written as raw JSON (escapes and all)."""
    body: dict[str, Any] = {"session_id": "bad", "run_id": "bad-run"}
    body.update({"messages": MSGS} if where == "input" else {"response": REPLY})
    text = json.dumps({k: v for k, v in body.items() if k != field})
    return (text[:-1] + f', "{field}": {raw_value}}}').encode()


SIDECAR_POISONS = {
    "30-digit skill_generation": ("input", "skill_generation", "1" * 30, 422),
    "latency_ms 1e999": ("output", "latency_ms", "1e999", 400),
    "latency_ms NaN": ("output", "latency_ms", "NaN", 400),
    "usage Infinity": ("output", "usage", '{"prompt_tokens": Infinity}', 400),
    "usage 1e999": ("output", "usage", '{"prompt_tokens": 1e999}', 400),
    "lone surrogate in session_id": ("output", "session_id", '"s\\ud800"', 400),
    "lone surrogate in model": ("output", "model", '"m\\udfff"', 400),
    "lone surrogate in tenant": ("input", "tenant", '"t\\ud83d"', 400),
    "NUL in run_id": ("output", "run_id", '"r\\u0000"', 400),
    "blank session_id": ("input", "session_id", '"   "', 400),
    "a 5000-digit integer": ("output", "usage", '{"n": ' + "9" * 5000 + "}", 400),
    "deeply nested usage": ("output", "usage", '{"a": ' + "[" * 5000 + "]" * 5000 + "}", 400),
    "nested just past the bound": ("output", "usage", '{"a": ' + "[" * 64 + "]" * 64 + "}", 400),
}


@pytest.mark.parametrize("poison", list(SIDECAR_POISONS))
def test_sidecar_refuses_a_poison_body_and_keeps_its_neighbours(
    api: Api, plugin: MetaClawPlugin, home: Path, poison: str
) -> None:
    where, field, raw, status = SIDECAR_POISONS[poison]
    assert sidecar_turn(api, "before", "r-before") == (200, 200)
    r = api.post(f"/v1/turns/{where}", raw=_raw_turn(field, raw, where))
    assert r.status_code == status, r.text
    assert field in r.json()["error"] or "JSON" in r.json()["error"] or "nests deeper" in r.json()["error"]
    assert sidecar_turn(api, "after", "r-after") == (200, 200)
    plugin.flush()
    assert plugin.store.write_errors == 0
    assert {x["session_id"] for x in api.get("/v1/sessions").json()["sessions"]} == {"before", "after"}
    for sid in ("before", "after"):
        assert api.get(f"/v1/sessions/{sid}").status_code == 200
    assert api.get("/health").status_code == 200
    plugin.stop()
    restarts(home).stop()


def test_sidecar_reads_a_stored_non_finite_value_as_json(api: Api, plugin: MetaClawPlugin) -> None:
    """A turn stored with latency inf (by a version before this one) reads back as null, not a 500."""
    ctx = TurnContext("old")
    plugin.on_response(ctx, REPLY, messages=MSGS)
    plugin.flush()
    import sqlite3

    with sqlite3.connect(plugin.settings.db_file) as db:
        db.execute("UPDATE turns SET latency_ms = ? WHERE session_id = 'old'", (float("inf"),))
    r = api.get("/v1/sessions/old")
    assert r.status_code == 200 and r.json()["turns"][0]["latency_ms"] is None


@pytest.mark.parametrize("sid", ["team/alpha/7", "a/end", "x?y#50%", "sp ace/é"])
def test_session_ids_with_slashes_can_be_read_and_ended(api: Api, plugin: MetaClawPlugin, sid: str) -> None:
    assert sidecar_turn(api, sid, "run-" + str(abs(hash(sid)))) == (200, 200)
    path = session_path(sid)
    r = api.get(path)
    assert r.status_code == 200 and r.json()["session_id"] == sid
    r = api.post(path + "/end", {"reason": "done"})
    assert r.status_code == 200 and r.json()["session_id"] == sid
    plugin.flush()
    s = plugin.store.get_session(sid)
    assert s is not None and s.ended_at is not None
    assert [x["session_id"] for x in api.get("/v1/sessions").json()["sessions"]] == [sid]


def test_ending_an_unknown_session_creates_nothing(api: Api, plugin: MetaClawPlugin) -> None:
    r = api.post("/v1/sessions/never-seen/end", {"reason": "x"})
    assert r.status_code == 404 and "never-seen" in r.json()["error"]
    plugin.flush()
    assert api.get("/v1/sessions").json()["sessions"] == []
    assert plugin.store.get_session("never-seen") is None


def test_secrets_in_sidecar_ids_never_reach_disk_or_output(api: Api, plugin: MetaClawPlugin, home: Path) -> None:
    s = PLANTED
    sid = f"oc-{s['session_id']}"
    ids = {"tenant": s["tenant"], "user": s["user"], "model": f"x/{s['model']}"}
    for i in range(2):
        extra = {**ids}
        a = api.post("/v1/turns/input", {"session_id": sid, "run_id": f"{s['run_id']}{i}", "messages": MSGS, **extra})
        b = api.post(
            "/v1/turns/output",
            {
                "session_id": sid,
                "run_id": f"{s['run_id']}{i}",
                "response": REPLY,
                "usage": {"note": s["usage"], s["usage_key"]: 2},
                **extra,
            },
        )
        assert a.status_code == b.status_code == 200
    listed = api.get("/v1/sessions").text
    shown = api.get(session_path(sid), params={"tenant": s["tenant"]})
    assert shown.status_code == 200 and len(shown.json()["turns"]) == 2
    end = api.post(session_path(sid) + "/end", {"tenant": s["tenant"], "reason": s["reason"]})
    assert end.status_code == 200
    plugin.flush()
    assert not text_leaks(listed + shown.text + api.get("/v1/sessions").text, s)
    assert not leaks(home, s)


def test_a_big_body_is_recorded_off_the_event_loop(api: Api, plugin: MetaClawPlugin) -> None:
    """While a large turns/output is redacted, /health still answers (the redaction is held until it has)."""
    held = threading.Event()
    entered = threading.Event()
    redact_obj = plugin.store.redactor.redact_obj  # type: ignore[union-attr]

    def slow(obj: Any) -> Any:
        if isinstance(obj, dict) and len(str(obj.get("content", ""))) > 100_000:
            entered.set()
            held.wait(60)
        return redact_obj(obj)

    plugin.store.redactor.redact_obj = slow  # type: ignore[method-assign,union-attr]
    big = {"role": "assistant", "content": " ".join(f"tok{i}=v{i}" for i in range(40_000))}
    result: dict[str, Any] = {}
    t = threading.Thread(
        target=lambda: result.update(
            r=api.post("/v1/turns/output", {"session_id": "big", "run_id": "big-1", "response": big})
        )
    )
    t.start()
    try:
        wait_for(entered.is_set, 30, "the big body's redaction to start")
        health: dict[str, Any] = {}
        h = threading.Thread(target=lambda: health.update(r=api.get("/health")))
        h.start()
        h.join(15)
        assert "r" in health and health["r"].status_code == 200, "/health waited for the big body's redaction"
    finally:
        held.set()
        t.join(60)
    assert result["r"].status_code == 200 and result["r"].json()["ok"] is True


# ------------------------------------------------------------------------------------------------
# Anything, in every field (hypothesis)
# ------------------------------------------------------------------------------------------------
ID_SECRETS = {k: PLANTED[k] for k in ("session_id", "model", "usage")}
SECRET_VALUES = list(ID_SECRETS.values())
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=10**18, max_value=10**60),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xDFFF), max_size=12),  # NUL, lone surrogates
    st.sampled_from(SECRET_VALUES),
    st.sampled_from(SECRET_VALUES).map(lambda s: f"id {s} x"),
    st.binary(max_size=8),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=8,
)
_messages = st.one_of(
    _values,
    st.lists(st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "tool"]), "content": _scalars})),
)


def test_hooks_take_any_value_in_any_field(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        ctx = TurnContext("fixed")
        for field in ("session_id", "tenant", "user", "kind", "host", "model", "request_id", "skill_generation"):
            if data.draw(st.booleans(), label=f"set {field}"):
                setattr(ctx, field, data.draw(_values, label=field))
        good_turn(p, "neighbour")
        p.on_request(ctx, data.draw(_messages, label="messages"), tools=data.draw(_values, label="tools"))
        try:  # the capture-only path (the sidecar's turns/input); it raises by contract, adapters wrap it
            p.inflight.put(
                ctx.request_id,
                p.prepare_turn(
                    ctx, data.draw(_messages), inject=False, injected_skills=data.draw(_values, label="injected")
                ),
            )
        except Exception:
            pass
        p.on_response(
            ctx,
            data.draw(_values, label="response"),
            usage=data.draw(_values, label="usage"),
            error=data.draw(_values, label="error"),
            latency_ms=data.draw(_values, label="latency_ms"),
        )
        p.on_feedback(ctx, data.draw(_values, label="score"), data.draw(_values, label="text"))
        p.on_session_end(ctx, data.draw(_values, label="outcome"), reason=data.draw(_values, label="reason"))
        good_turn(p, "neighbour2")
        assert p.flush()
        assert p.store.write_errors == 0

    try:
        one()  # no hook raised: an exception here is one that escaped to the host
        assert p.store.get_session("neighbour") is not None and p.store.get_session("neighbour2") is not None
        assert not leaks(home, ID_SECRETS)
    finally:
        p.stop()
    restarts(home).stop()
    # Messages, tool definitions, response and errors are the store's redaction (keys of JSON objects are kept
    # there, as privacy.Redactor documents); the ids and metadata are this boundary's: none may hold a secret.
    assert not leaks(home, ID_SECRETS)


_ids = st.one_of(
    st.text(min_size=1, max_size=300),
    st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xDFFF), min_size=1, max_size=12),
    st.sampled_from(SECRET_VALUES),
    st.sampled_from(SECRET_VALUES).map(lambda s: f"chat/{s}"),
)
_numbers = st.one_of(st.integers(), st.integers(min_value=10**18, max_value=10**60), st.floats())
# Each field: values of its own type that may still break the home (huge, non-finite, malformed, secret), and
# now and then anything at all.
_fields = {
    "session_id": _ids,
    "run_id": _ids,
    "tenant": _ids,
    "user": _ids,
    "model": _ids,
    "kind": st.sampled_from(["main", "side", "other"]),
    "skill_generation": _numbers,
    "latency_ms": _numbers,
    "usage": st.dictionaries(st.one_of(st.text(max_size=8), _ids), _values, max_size=4),
    "error": st.one_of(_ids, st.text()),
    "injected_skills": st.lists(_ids, max_size=3),
    "tools": st.lists(st.dictionaries(st.text(max_size=8), _values, max_size=3), max_size=2),
}
_input_only = ("messages", "injected_skills", "skill_generation", "tools")
_output_only = ("response", "usage", "error", "latency_ms")


def test_sidecar_takes_any_body(home: Path) -> None:
    p = MetaClawPlugin(Settings(home=home)).start()
    with TestClient(create_app(p, load_or_create_token(home)), base_url="http://127.0.0.1") as c:
        api = Api(c, load_or_create_token(home))
        runs = itertools.count()

        @settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(data=st.data())
        def one(data: st.DataObject) -> None:
            body: dict[str, Any] = {"session_id": "fuzz", "run_id": "fuzz-run", "messages": MSGS, "response": REPLY}
            for k in data.draw(st.sets(st.sampled_from(sorted(_fields)), min_size=1, max_size=3), label="fields"):
                anything = data.draw(st.integers(0, 9), label="anything") == 0
                body[k] = data.draw(_values if anything else _fields[k], label=k)
            if isinstance(body["run_id"], str):  # a run id is a turn's id: one per example, or it is stored once
                body["run_id"] += f"-{next(runs)}"
            ok = []
            for where, drop in (("input", _output_only), ("output", _input_only)):
                b = {k: v for k, v in body.items() if k not in drop}
                raw = json.dumps(b, default=repr).encode("utf-8", "surrogatepass")  # lone surrogates as they come
                r = api.post(f"/v1/turns/{where}", raw=raw)
                assert r.status_code in (200, 400, 422), r.text
                ok.append(r.status_code == 200)
            sid = body["session_id"]
            if isinstance(sid, str) and all(ok):
                path = session_path(sid)
                params = {"tenant": body["tenant"]} if isinstance(body.get("tenant"), str) else {}
                assert api.get(path, params=params).status_code == 200
                tenant = json.dumps({"tenant": body.get("tenant", "default")}, default=repr)  # any value, bytes too
                end = api.post(path + "/end", raw=tenant.encode("utf-8", "surrogatepass"))
                assert end.status_code in (200, 404), end.text  # 404: ended before, by an earlier example
            assert api.get("/health").status_code == 200
            assert api.get("/v1/sessions").status_code == 200

        try:
            one()
            p.flush()
            assert p.store.write_errors == 0
            assert not leaks(home, ID_SECRETS)
        finally:
            p.stop()
    restarts(home).stop()
    assert not leaks(home, ID_SECRETS)
