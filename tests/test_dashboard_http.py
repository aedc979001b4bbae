"""The dashboard's HTTP contract, in process (the browser test, tests/test_dashboard.py, drives the real thing):
sign-in and its cookie, no open redirect, CSRF, empty training/scheduler pages that say so plainly, rows written
by SQL shown, untrusted text escaped, the API untouched."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.dashboard.app import COOKIE
from metaclaw_plugin.server import create_app, load_or_create_token


@pytest.fixture()
def app(home: Path):
    p = MetaClawPlugin(Settings(home=home)).start()
    token = load_or_create_token(home)
    with TestClient(create_app(p, token), base_url="http://127.0.0.1", follow_redirects=False) as c:
        yield c, token, p
    p.stop()


def test_signed_out_pages_go_to_the_login_form_and_the_api_keeps_its_401(app):
    c, _token, _ = app
    for path in ("/", "/sessions", "/training", "/scheduler", "/static/plotly.min.js", "/nowhere"):
        r = c.get(path)
        assert r.status_code == 303 and r.headers["location"].startswith("/login"), path
    assert c.post("/skills/csv-quoting/retire", data={"csrf": "x"}).status_code == 403
    assert c.get("/v1/status").status_code == 401 and c.get("/health").status_code == 401
    assert c.get("/static/dashboard.css").status_code == 200  # the login form's own style, nothing secret


def test_the_token_link_sets_a_strict_httponly_cookie_and_drops_the_token_from_the_url(app):
    c, token, _ = app
    r = c.get(f"/training?token={token}")
    assert r.status_code == 303 and r.headers["location"] == "/training"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and token not in cookie
    assert (
        r.headers["referrer-policy"] == "same-origin"
        and "frame-ancestors 'none'" in r.headers["content-security-policy"]
    )
    page = c.get("/training")
    assert page.status_code == 200 and "no training steps yet" in page.text.lower()
    assert "script-src 'self'" in page.headers["content-security-policy"]
    c.cookies.clear()
    assert c.get(f"/?token={token}x").headers["location"].startswith("/login")


def test_login_form_refuses_a_wrong_token_and_never_redirects_off_site(app):
    c, token, _ = app
    assert c.post("/login", data={"token": "nope", "next": "/"}).status_code == 401
    for bad in ("//evil.example/x", "https://evil.example/", "/\\evil.example"):
        r = c.post("/login", data={"token": token, "next": bad})
        assert r.status_code == 303 and r.headers["location"] == "/", bad
    r = c.post("/login", data={"token": token}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 401


def test_empty_slow_loop_pages_say_so_and_rows_written_by_sql_show(app, home: Path):
    c, token, _p = app
    h = {"Authorization": f"Bearer {token}"}
    assert "no training steps yet" in c.get("/training", headers=h).text.lower()
    assert "scheduler not running" in c.get("/scheduler", headers=h).text.lower()
    conn = sqlite3.connect(home / "metaclaw.db")
    now = time.time()
    with conn:
        conn.execute(
            "INSERT INTO train_steps (step, backend, loss, mean_reward, success_rate, samples_used, samples_dropped, "
            "created_at) VALUES (1, 'local', 0.75, 0.5, 0.6, 4, 1, ?)",
            (now,),
        )
        conn.execute(
            "INSERT INTO sched_transitions (at, from_state, to_state, reason) VALUES (?, 'idle', 'window_open', ?)",
            (now, "asleep <b>now</b>"),
        )
    conn.close()
    t = c.get("/training", headers=h).text
    assert "1 steps" in t and "0.7500" in t and 'data-chart="chart-loss"' in t
    s = c.get("/scheduler", headers=h).text
    assert "window_open" in s and "asleep &lt;b&gt;now&lt;/b&gt;" in s and "<b>now</b>" not in s


def test_untrusted_text_is_escaped_in_sessions(app, home: Path):
    c, token, p = app
    ctx = TurnContext("s-<i>x</i>")
    p.on_request(ctx, [{"role": "user", "content": "</script><script>alert(1)</script>"}])
    p.on_response(ctx, {"role": "assistant", "content": "<img src=x onerror=alert(2)>"})
    p.flush()
    h = {"Authorization": f"Bearer {token}"}
    listing = c.get("/sessions", headers=h).text
    assert "s-&lt;i&gt;x&lt;/i&gt;" in listing and "<i>x</i>" not in listing
    page = c.get("/sessions/s-%3Ci%3Ex%3C%2Fi%3E", headers=h).text
    assert "&lt;/script&gt;&lt;script&gt;alert(1)" in page and "<img src=x" not in page


def test_a_post_without_the_csrf_token_changes_nothing(app, home: Path):
    c, token, p = app
    c.get(f"/?token={token}")  # signed in by cookie
    assert c.cookies.get(COOKIE)
    r = c.post("/skills/csv-quoting/retire", data={"csrf": "forged"})
    assert r.status_code == 403 and p.skills.store.read("csv-quoting").status == "active"
    page = c.get("/").text
    csrf = page.split('name="csrf" value="', 1)[1].split('"', 1)[0]
    r = c.post("/skills/csv-quoting/retire", data={"csrf": csrf})
    assert r.status_code == 303 and p.skills.store.read("csv-quoting").status == "retired"
    assert "now retired" in c.get(r.headers["location"]).text
