"""The fast loop end to end through the core hooks (and the LiteLLM SDK adapter), with a scripted
local server playing the judge and the evolver: failed sessions become skills, the next matching
request carries them, the buffer drops stale samples, secrets never leave, failures fail open."""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")

from click.testing import CliRunner  # noqa: E402
from fastloop_support import SECRETS, TASK, Roles, failing_session, settings_for, wait_for  # noqa: E402

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext  # noqa: E402
from metaclaw_plugin.cli import main as cli_main  # noqa: E402
from metaclaw_plugin.devtools.demo import SKILL  # noqa: E402  (the same evolved skill the demo tells)
from metaclaw_plugin.devtools.upstream import Upstream  # noqa: E402
from metaclaw_plugin.skillbank.render import OPEN  # noqa: E402


def assert_no_secret_left(home: Path, up: Upstream) -> None:
    for body in up.requests:
        system = str(body["messages"][0].get("content", ""))
        if not any(k in system for k in ("skill engineer", "strict reviewer", "security reviewer")):
            continue  # the host's own model call: the user's text goes there by design
        dumped = json.dumps(body)
        for s in SECRETS:
            assert s not in dumped, f"{s} sent to the judge/evolver"
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for s in SECRETS:
                assert s.encode() not in data, f"{s} found in {path}"


def test_failed_session_becomes_a_skill_the_next_request_carries(home: Path):
    roles = Roles()
    with Upstream(script=roles) as up:
        p = MetaClawPlugin(settings_for(home, up, evolution={"promotion": "auto"})).start()
        try:
            g0 = p.skills.generation
            # A successful earlier session leaves query samples in the buffer (judge says 1 for it).
            roles.judge_reply = "Score: 1"
            ok = TurnContext("good-1")
            p.on_request(ok, [{"role": "user", "content": "what is the capital of France?"}])
            p.on_response(ok, {"role": "assistant", "content": "Paris."})
            p.on_session_end(ok)
            wait_for(p, lambda: p.learning.buffer.stats().queued >= 1)
            roles.judge_reply = "Score: -1"
            ids = failing_session(p, "fail-1")
            wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
            skill = p.skills.skills["detect-csv-delimiter"]
            assert skill.status == "active" and skill.origin == "evolved" and skill.source_sessions == ["fail-1"]
            assert p.skills.generation == g0 + 1
            # the evolver saw the failed turns (redacted) and the existing skills
            (evo,) = [b for b in up.requests if "skill engineer" in b["messages"][0]["content"]]
            doc = json.loads(evo["messages"][1]["content"].split("```json\n", 1)[1].rsplit("\n```", 1)[0])
            assert {f["reward"]["source"] for f in doc["failed_turns"]} <= {"correction", "outcome", "judge"}
            assert len(doc["failed_turns"]) == 2 and any(s["name"] == "csv-quoting" for s in doc["existing_skills"])
            # every reward has its source; the corrected first turn needed no judge call
            sources = {r["source"] for r in p.store.rewards(ids[0])}
            assert "correction" in sources and "judge" not in sources
            assert {r["source"] for r in p.store.rewards(ids[1])} >= {"outcome"}
            # the evolver read the failed turns: support, out of the buffer; the older query sample was dropped by the bump
            st = wait_for(p, lambda: (b := p.learning.buffer.stats()).generation == g0 + 1 and b)
            assert st.support == 2 and st.dropped_stale >= 1 and st.queued == 0
            assert p.learning.buffer.drain(1, partial=True) == []
            # the next matching request carries the new skill
            nxt = TurnContext("after")
            out = p.on_request(nxt, [{"role": "user", "content": "split the csv export invoices.csv by its delimiter"}])
            assert "detect-csv-delimiter" in nxt.injected_skills and "### detect-csv-delimiter" in out[0]["content"]
            hist = p.skills.store.history("detect-csv-delimiter")[-1]
            assert hist["screening"]["verdict"] == "clean" and hist["promotion"]["decision"] == "active"
            assert all(
                b.get("temperature") == 0.6 for b in up.requests if "strict reviewer" in b["messages"][0]["content"]
            )
        finally:
            p.stop()
        assert_no_secret_left(home, up)


def test_shadow_trial_injects_a_fraction_and_promotes_on_evidence(home: Path):
    roles = Roles()
    with Upstream(script=roles) as up:
        s = settings_for(home, up, evolution={"shadow_min_samples": 4, "shadow_confidence": 0.9})
        p = MetaClawPlugin(s).start()
        try:
            failing_session(p, "fail-shadow")
            wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
            sk = p.skills.skills["detect-csv-delimiter"]
            assert sk.status == "quarantined" and sk.extra_metadata["promotion"] == "shadow"
            with_arm = 0
            for i in range(24):
                ctx = TurnContext(f"trial-{i}")
                p.on_request(ctx, [{"role": "user", "content": f"split the csv export batch{i}.csv by its delimiter"}])
                carried = "detect-csv-delimiter" in ctx.injected_skills
                with_arm += carried
                p.on_response(ctx, {"role": "assistant", "content": "done"})
                p.on_feedback(ctx, carried)  # the skill helps: up with it, down without
                p.on_session_end(ctx)
            assert 4 <= with_arm <= 20  # about half (P(outside) < 0.001)
            wait_for(p, lambda: p.skills.skills["detect-csv-delimiter"].status != "quarantined", timeout=60)
            assert p.skills.skills["detect-csv-delimiter"].status == "active"
            assert p.skills.generation == 2  # evolution, then promotion
            last = p.skills.store.history("detect-csv-delimiter")[-1]
            assert last["actor"] == "shadow-trial" and "P(better)" in last["reason"]
        finally:
            p.stop()


@contextlib.contextmanager
def _evolver_down(home: Path, roles: Roles) -> Iterator[tuple[MetaClawPlugin, Callable[[], list]]]:
    """A plugin whose evolver answers 500: the failed session's evolution job waits, pending, with its error."""
    roles.evolver_reply = {"status": 500, "error": "down"}
    with Upstream(script=roles) as up:
        s = settings_for(home, up, evolution={"promotion": "auto", "timeout": 1.0, "max_attempts": 10})
        p = MetaClawPlugin(s).start()
        try:
            failing_session(p, "fo-1")
            q = lambda: p.learning.db.query("SELECT * FROM fl_evolve_queue")  # noqa: E731
            wait_for(p, lambda: q() and q()[0]["attempts"] >= 1)
            assert q()[0]["state"] == "pending" and q()[0]["last_error"]
            yield p, q
        finally:
            p.stop()


def _host_turns(p: MetaClawPlugin, n: int) -> float:
    """n turns of the host, each given its skill block; the seconds they took."""
    t0 = time.perf_counter()
    for i in range(n):
        ctx = TurnContext(f"host-{i}")
        out = p.on_request(ctx, [{"role": "user", "content": TASK}])
        p.on_response(ctx, {"role": "assistant", "content": "ok"})
        assert OPEN in out[0]["content"]
    return time.perf_counter() - t0


def test_fail_open_when_the_evolver_is_down_slow_or_talks_garbage(home: Path):
    roles = Roles()
    with _evolver_down(home, roles) as (p, q):
        _host_turns(p, 20)  # the host path is untouched while the evolver is broken
        roles.evolver_reply = {"content": "too late", "delay": 3}  # slow: times out
        n = q()[0]["attempts"]
        wait_for(p, lambda: q()[0]["attempts"] > n)
        roles.evolver_reply = "I'd rather not answer in JSON."  # garbage: retried too
        n = q()[0]["attempts"]
        wait_for(p, lambda: q()[0]["attempts"] > n)
        assert "detect-csv-delimiter" not in p.skills.skills
        roles.evolver_reply = json.dumps({"skills": [SKILL]})  # back: the queued work completes
        wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
        assert {r["state"] for r in q()} == {"done"}
        assert not any(k.startswith(("on_", "inject")) for k in p.errors), p.errors


@pytest.mark.perf
def test_the_host_path_stays_fast_while_the_evolver_is_down(home: Path):
    with _evolver_down(home, Roles()) as (p, _):
        assert _host_turns(p, 20) / 20 < 0.05


def test_judge_down_falls_back_to_the_other_signals(home: Path):
    roles = Roles()
    roles.judge_reply = {"status": 500}
    with Upstream(script=roles) as up:
        p = MetaClawPlugin(
            settings_for(home, up, evolution={"promotion": "auto"}, reward={"review_wait": 1.0, "max_attempts": 2})
        ).start()
        try:
            failing_session(p, "jd-1", outcome={"success": False})
            wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
        finally:
            p.stop()


def test_pending_work_survives_a_restart(home: Path):
    roles = Roles()
    roles.evolver_reply = {"status": 503}
    with Upstream(script=roles) as up:
        s = settings_for(home, up, evolution={"promotion": "auto", "backoff": 0.05})
        p = MetaClawPlugin(s).start()
        failing_session(p, "rs-1")
        wait_for(p, lambda: p.learning.db.query("SELECT attempts FROM fl_evolve_queue WHERE attempts >= 1"))
        p.stop()
        roles.evolver_reply = json.dumps({"skills": [SKILL]})
        p2 = MetaClawPlugin(s).start()
        try:
            wait_for(p2, lambda: "detect-csv-delimiter" in p2.skills.skills)
        finally:
            p2.stop()


def test_every_n_turns_reviews_a_long_session(home: Path):
    roles = Roles()
    with Upstream(script=roles) as up:
        p = MetaClawPlugin(settings_for(home, up, evolution={"every_n_turns": 3, "promotion": "auto"})).start()
        try:
            msgs: list[dict] = [{"role": "user", "content": TASK}]
            for i in range(4):  # never ends
                ctx = TurnContext("long-1")
                p.on_request(ctx, msgs)
                p.on_response(ctx, {"role": "assistant", "content": f"attempt {i}: split on commas"})
                msgs = msgs + [
                    {"role": "assistant", "content": f"attempt {i}: split on commas"},
                    {"role": "user", "content": "that's wrong, still not the right delimiter"},
                ]
            wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
            assert p.learning.status()["counters"].get("evolution_trigger_every_n_turns") == 1
        finally:
            p.stop()


def test_low_success_rate_batch_triggers_evolution(home: Path):
    roles = Roles()
    roles.judge_reply = "Hard to tell.\nScore: 0"
    with Upstream(script=roles) as up:
        s = settings_for(home, up, evolution={"batch_turns": 4, "success_rate_threshold": 0.5, "promotion": "auto"})
        p = MetaClawPlugin(s).start()
        try:
            for i in range(4):
                ctx = TurnContext(f"b-{i}")
                p.on_request(ctx, [{"role": "user", "content": f"{TASK} (file {i})"}])
                p.on_response(ctx, {"role": "assistant", "content": "here is a guess"})
                p.on_session_end(ctx)
            wait_for(p, lambda: "detect-csv-delimiter" in p.skills.skills)
            c = p.learning.status()["counters"]
            assert c.get("evolution_trigger_low_success_rate") == 1 and not c.get("evolution_trigger_session_end")
        finally:
            p.stop()


def test_daily_budget_caps_the_evolver_and_status_shows_it(home: Path):
    roles = Roles()
    roles.evolver_reply = json.dumps({"skills": []})
    with Upstream(script=roles) as up:
        s = settings_for(home, up, evolution={"daily_calls": 1, "promotion": "auto"})
        p = MetaClawPlugin(s).start()
        try:
            failing_session(p, "bud-1")
            wait_for(p, lambda: roles.evolver_calls == 1)
            failing_session(p, "bud-2", secret=SECRETS[0])
            wait_for(p, lambda: p.learning.db.query("SELECT 1 FROM fl_evolve_queue WHERE last_error = 'budget'"))
            assert roles.evolver_calls == 1
            st = p.learning.status()
            assert st["budget"]["evolver"]["calls_left"] == 0
        finally:
            p.stop()
        # the CLI reads the default limits here (200 calls a day); a budget shows only for a role with a model
        res = CliRunner().invoke(
            cli_main, ["status", "--json"], env={"METACLAW_EVOLUTION__MODEL": "openai/evolver"}, catch_exceptions=False
        )
        data = json.loads(res.stdout)
        assert data["budget"]["evolver"]["calls_used"] == 1 and data["budget"]["evolver"]["calls_left"] == 199
        # bud-1's failures were read by the one call (support); bud-2's wait for tomorrow's budget as query samples
        buf = data["buffer"]
        assert "dropped_stale" in buf and (buf["support"], buf["queued"]) == (2, 2)
        assert data["rewards_today"].get("correction", 0) >= 2


def test_cli_evolve_session_dry_run_then_real(home: Path):
    roles = Roles()
    with Upstream(script=roles) as up:
        (home / "config.yaml").write_text(
            f"evolution:\n  model: openai/evolver\n  api_base: {up.url}\n  api_key: x\n  promotion: auto\n  enabled: true\n"
            "  dedup_mode: lexical\n"
            f"reward:\n  model: openai/judge\n  api_base: {up.url}\n  api_key: x\n"
        )
        # record a failed session with evolution disabled, so nothing evolves on its own
        s = Settings.load(evolution={"enabled": False}, reward={"enabled": False})
        p = MetaClawPlugin(s).start()
        failing_session(p, "cli-1")
        p.flush()
        p.stop()
        runner = CliRunner()
        dry = runner.invoke(cli_main, ["evolve", "--session", "cli-1", "--dry-run", "--json"], catch_exceptions=False)
        assert dry.exit_code == 0, dry.output
        rep = json.loads(dry.stdout)["reports"][0]
        assert rep["dry_run"] and rep["decisions"][0]["name"] == "detect-csv-delimiter"
        assert not (home / "skills" / "detect-csv-delimiter").exists()
        real = runner.invoke(cli_main, ["evolve", "--session", "cli-1"], catch_exceptions=False)
        assert real.exit_code == 0 and "detect-csv-delimiter" in real.output
        assert (home / "skills" / "detect-csv-delimiter" / "SKILL.md").exists()
        assert_no_secret_left(home, up)


def test_cli_evolve_finds_a_session_by_the_ids_the_host_used(home: Path):
    """Fails before: a session whose id (or tenant) the hooks stored as its keyed hash (longer than the id bound,
    or holding a secret) was "no session" for ``evolve --session``, which looked the raw id up."""
    sid = "run-" + "checkout-service-" * 20  # past the id bound
    roles = Roles()
    with Upstream(script=roles) as up:
        (home / "config.yaml").write_text(
            f"evolution:\n  model: openai/evolver\n  api_base: {up.url}\n  api_key: x\n  enabled: true\n"
            f"  dedup_mode: lexical\nreward:\n  model: openai/judge\n  api_base: {up.url}\n  api_key: x\n"
        )
        p = MetaClawPlugin(Settings.load(evolution={"enabled": False}, reward={"enabled": False})).start()
        failing_session(p, sid)
        p.flush()
        p.stop()
        for args in (["--session", sid], ["--session", sid, "--tenant", " default "]):
            dry = CliRunner().invoke(cli_main, ["evolve", *args, "--dry-run", "--json"], catch_exceptions=False)
            assert dry.exit_code == 0, dry.output
            assert json.loads(dry.stdout)["reports"][0]["decisions"][0]["name"] == "detect-csv-delimiter"


SUPPORT = Path(__file__).resolve().parents[1] / "support"  # the child imports waiting from there
SDK_SCRIPT = r"""
import asyncio, json, os, sys, time
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm
from metaclaw_litellm import MetaClawCallback
from metaclaw_plugin import MetaClawPlugin, Settings

home, url, task, secret, support = sys.argv[1:6]
sys.path.insert(0, support)
from waiting import wait_for
s = Settings(home=home, evolution={"model": "openai/evolver", "api_base": url, "api_key": "x", "promotion": "auto",
                                    "dedup_mode": "lexical"},
             reward={"model": "openai/judge", "api_base": url, "api_key": "x", "review_wait": 5.0})
p = MetaClawPlugin(s).start()
litellm.callbacks = [MetaClawCallback(p)]
kw = {"model": "openai/host-model", "api_base": url, "api_key": "x", "num_retries": 0}
loop = asyncio.new_event_loop()  # one loop: LiteLLM's logging worker binds to the first loop it sees

def turn(sid, messages, **md):
    async def go():
        r = await litellm.acompletion(messages=messages, metadata={"session_id": sid, **md}, **kw)
        await asyncio.sleep(0.2)
        return r
    return loop.run_until_complete(go())

first = [{"role": "user", "content": f"{task}; key {secret}"}]
turn("sdk-fail", first)
second = first + [{"role": "assistant", "content": "host reply"},
                  {"role": "user", "content": "no, that's wrong, the delimiter is ';'"}]
turn("sdk-fail", second, session_done=True, session_outcome={"success": False})
def learned():
    if "detect-csv-delimiter" in p.skills.skills:
        return True
    p.flush(5)
    return False
wait_for(learned, 120, "the evolved skill", 0.2)
turn("sdk-next", [{"role": "user", "content": "split the csv export invoices.csv by its delimiter"}])
p.flush(10)
print(json.dumps({"skills": sorted(p.skills.skills), "sessions": sorted(x["session_id"] for x in p.store.list_sessions(100))}))
p.stop()
"""


def test_end_to_end_through_the_litellm_sdk_adapter(home: Path):
    """Through the real adapter (``litellm.acompletion`` with ``MetaClawCallback``), in a fresh
    interpreter: LiteLLM's global logging worker binds to one event loop per process."""
    import subprocess
    import sys

    pytest.importorskip("metaclaw_litellm")
    roles = Roles()
    with Upstream(script=roles) as up:
        proc = subprocess.run(
            [sys.executable, "-c", SDK_SCRIPT, str(home), up.url, TASK, SECRETS[0], str(SUPPORT)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        assert "detect-csv-delimiter" in out["skills"]
        host_calls = [b for b in up.requests if b.get("model") == "host-model"]
        assert len(host_calls) == 3 and "### detect-csv-delimiter" in host_calls[-1]["messages"][0]["content"]
        assert roles.evolver_calls == 1
        # the plugin's own judge/evolver calls were not captured as turns of any session
        assert out["sessions"] == ["sdk-fail", "sdk-next"]
    assert_no_secret_left(home, up)


def test_failures_of_two_kinds_of_work_evolve_apart_and_each_convention_stays_in_its_kind(home: Path):
    """One batch of failed turns that the host labelled with two task types: the evolver is called once per
    type, never with a mix, and each convention it writes reaches that type's turns only (an unlabelled turn
    gets neither)."""
    roles = Roles()
    seen: list[set[str]] = []

    def evolver(body: dict[str, Any]) -> Any:
        user = body["messages"][1]["content"]
        doc = json.loads(user.split("```json\n", 1)[1].rsplit("\n```", 1)[0])
        kinds = {"csv" if "csv" in t["instruction"] else "invoice" for t in doc["failed_turns"]}
        seen.append(kinds)
        (kind,) = kinds
        text = {  # two unrelated rules: near-duplicates would be merged into one
            "csv": "Every answer about a CSV file names the file it read and gives its row count.",
            "invoice": "Invoice totals are given in euros with two decimals, VAT shown on its own line.",
        }[kind]
        rule = {
            "action": "create",
            "name": f"{kind}-house-rule",
            "description": text,
            "body": f"# {kind}\n\n- {text}",
            "kind": "convention",
            "kind_reason": "a standing rule of this user",
        }
        return json.dumps({"skills": [rule]})

    def script(body: dict[str, Any]) -> Any:
        return evolver(body) if "skill engineer" in body["messages"][0]["content"] else roles(body)

    with Upstream(script=script) as up:
        s = settings_for(home, up, evolution={"batch_turns": 4, "success_rate_threshold": 0.5, "promotion": "auto"})
        p = MetaClawPlugin(s).start()
        try:
            for i, kind in enumerate(["csv", "invoice", "csv", "invoice"]):
                ctx = TurnContext(f"k-{i}", metadata={"task_type": kind})
                text = f"{TASK} (file {i})" if kind == "csv" else f"total the invoice number {i} for March"
                p.on_request(ctx, [{"role": "user", "content": text}])
                p.on_response(ctx, {"role": "assistant", "content": "here is a guess"})
                p.on_session_end(ctx)
            wait_for(p, lambda: {"csv-house-rule", "invoice-house-rule"} <= set(p.skills.skills))
            assert sorted(map(sorted, seen)) == [["csv"], ["invoice"]]  # one call per kind, no mix
            assert p.skills.skills["csv-house-rule"].extra_metadata["task_types"] == ["csv"]

            def reach(task: str | None) -> set[str]:
                ctx = TurnContext("next", metadata={"task_type": task} if task else {})
                p.on_request(ctx, [{"role": "user", "content": "what is the capital of Peru?"}])
                return {n for n in ctx.injected_skills if n.endswith("house-rule")}

            assert reach("csv") == {"csv-house-rule"}
            assert reach("invoice") == {"invoice-house-rule"}
            assert reach(None) == set()
        finally:
            p.stop()
