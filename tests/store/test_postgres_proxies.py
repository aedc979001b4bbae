"""Two real LiteLLM proxies, two homes, one PostgreSQL database started by the tests: a skill learned from a
failure seen by one proxy is injected by the other within seconds; 32 concurrent sessions over both never mix;
the database stopped for 10 s under load loses no acknowledged turn; kill -9 of the elected learner hands
learning to the other host, and no evolution job runs twice."""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from postgres_support import PASSWORD, missing_reason, start_server
from waiting import wait_for

pytest.importorskip("litellm")

from fastloop_support import Roles
from litellm_support import chat, seed_home, write_proxy_dir

from metaclaw_plugin.devtools.demo import SKILL
from metaclaw_plugin.devtools.proxyrun import ProxyProcess, launch_proxy
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.store.postgres import PostgresDatabase

pytestmark = pytest.mark.slow
READY = 240.0
CSV = "parse the csv export {tag}.csv and sum the totals"
SECOND = {  # what the evolver proposes after the takeover: a distinct lesson (dedup keeps it apart)
    "action": "create",
    "name": "map-csv-columns-by-header",
    "description": "When a CSV export has a header row, map columns by header name rather than by position.",
    "body": "# Map CSV columns by header\n\n1. Read the header row first.\n2. Look columns up by name.\n"
    "3. Fail loudly when an expected header is missing.",
    "category": "data",
}


class Script(Roles):
    """The host model, the judge and the evolver; the evolver's requests are kept to check none repeats."""

    def __init__(self) -> None:
        super().__init__()
        self.evolver_docs: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        system = str(body["messages"][0].get("content", ""))
        if "skill engineer" in system:
            with self.lock:
                self.evolver_docs.append(json.dumps(body["messages"], ensure_ascii=False))
        out = super().__call__(body)
        if out == "host reply":
            users = [m for m in body["messages"] if m.get("role") == "user"]
            return f"reply to: {str(users[-1].get('content'))[-60:]}" if users else "ok"
        return out


def home_config(home: Path, url: str, up: str) -> None:
    llm = {"api_base": up, "api_key": "x", "backoff": 0.01, "retries": 0}
    cfg = {
        "storage": {"backend": "postgres", "url": url},
        "evolution": {"model": "openai/evolver", "dedup_mode": "lexical", "promotion": "auto", **llm},
        "reward": {"model": "openai/judge", "review_wait": 2.0, **llm},
    }
    (home / "config.yaml").write_text(yaml.safe_dump(cfg))


def failing_session(proxy: ProxyProcess, tag: str) -> str:
    sid = f"fail-{tag}"
    first = [{"role": "user", "content": CSV.format(tag=tag)}]
    hdr = {"X-Session-Id": sid}
    assert chat(proxy.base_url, proxy.master_key, first, headers=hdr).status_code == 200
    second = first + [
        {"role": "assistant", "content": "I split each line on ',' and summed column 3."},
        {"role": "user", "content": "no, that's wrong: the file uses ';' and quoted fields."},
    ]
    md = {"metadata": {"session_id": sid, "session_done": True, "session_outcome": {"success": False}}}
    assert chat(proxy.base_url, proxy.master_key, second, body=md).status_code == 200
    return sid


def injected(proxy: ProxyProcess, up: Upstream, name: str) -> bool:
    tag = uuid.uuid4().hex[:8]
    r = chat(proxy.base_url, proxy.master_key, [{"role": "user", "content": f"split the csv export {tag}.csv"}])
    assert r.status_code == 200, r.text
    bodies = [b for b in list(up.requests) if tag in json.dumps(b.get("messages", ""))]
    return any(f"### {name}" in json.dumps(b["messages"]) for b in bodies)


def learner_pid(db: PostgresDatabase) -> int | None:
    rows = db.query("SELECT value, updated_at FROM runtime_state WHERE key = 'learner'")
    if not rows or time.time() - rows[0]["updated_at"] > 3:
        return None
    return int(json.loads(rows[0]["value"])["pid"])


def owner(pid: int | None, proxies: list[ProxyProcess]) -> ProxyProcess | None:
    for p in proxies:
        try:
            if pid is not None and os.getpgid(pid) == p.proc.pid:
                return p
        except ProcessLookupError:
            return None
    return None


def test_two_proxies_share_one_database(tmp_path: Path):
    reason = missing_reason()
    if reason:
        pytest.skip(f"NO POSTGRESQL: {reason}")
    srv = start_server()
    os.environ["PGPASSWORD"] = PASSWORD
    script = Script()
    up = Upstream(script=script).start()
    proxies: list[ProxyProcess] = []
    db = PostgresDatabase(srv.url)
    try:
        for i in (1, 2):
            home = seed_home(tmp_path / f"home{i}")
            home_config(home, srv.url, up.url)
            cfg = write_proxy_dir(tmp_path / f"proxy{i}", up.url)
            env = dict(os.environ, METACLAW_HOME=str(home), PGPASSWORD=PASSWORD)
            env.pop("METACLAW_CONFIG", None)
            env.pop("METACLAW_RETRIEVAL__MODE", None)
            env["METACLAW_RETRIEVAL__MODE"] = "keyword"
            proxies.append(launch_proxy(cfg, env=env, log_path=tmp_path / f"proxy{i}.log", cwd=tmp_path / f"proxy{i}"))
        for p in proxies:
            p.wait_ready(READY)
        p1, p2 = proxies
        leader = wait_for(lambda: owner(learner_pid(db), proxies), 30, "a learner elected")

        # 1. A failure seen by proxy 1 becomes a skill that proxy 2 injects within seconds.
        assert not injected(p2, up, SKILL["name"])
        failing_session(p1, "first")
        wait_for(
            lambda: db.query("SELECT 1 FROM skill_files WHERE path = ? AND deleted = 0", [f"{SKILL['name']}/SKILL.md"]),
            90,
            "the learned skill in the database",
            0.2,
        )
        t0 = time.monotonic()
        wait_for(lambda: injected(p2, up, SKILL["name"]), 10, "proxy 2 injects the skill learned from proxy 1", 0.2)
        spread = time.monotonic() - t0
        print(f"skill in the database -> injected by the other proxy: {spread:.2f}s")
        assert injected(p1, up, SKILL["name"])

        # 2. 32 concurrent sessions over both proxies never mix.
        errors: list[str] = []

        def session(n: int) -> None:
            proxy = proxies[n % 2]
            sid = f"mix-{n}-{uuid.uuid4().hex[:6]}"
            msgs: list[dict[str, Any]] = []
            for i in range(4):
                msgs.append({"role": "user", "content": f"s{n} q{i}"})
                r = chat(proxy.base_url, proxy.master_key, msgs, headers={"X-Session-Id": sid})
                if r.status_code != 200:
                    errors.append(r.text)
                    return
                msgs.append({"role": "assistant", "content": r.json()["choices"][0]["message"]["content"]})
            sids.append((n, sid))

        sids: list[tuple[int, str]] = []
        threads = [threading.Thread(target=session, args=(n,)) for n in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(sids) == 32, errors[:3]
        for n, sid in sids:
            rows = wait_for(
                lambda sid=sid: (
                    (r := db.query("SELECT * FROM turns WHERE session_id = ? ORDER BY seq", [sid]))
                    and len(r) == 4
                    and r
                ),
                30,
                f"4 turns of {sid}",
            )
            assert [r["seq"] for r in rows] == [1, 2, 3, 4]
            for i, r in enumerate(rows):
                resp = db.query("SELECT content FROM messages WHERE hash = ?", [r["response_hash"]])[0]["content"]
                assert f"s{n} q{i}" in json.loads(resp)["content"], (sid, i, resp)

        # 3. PostgreSQL stopped for 10 s under load: both proxies keep answering; nothing acknowledged is lost.
        acked: list[str] = []
        failed: list[str] = []
        stop = threading.Event()

        def load(proxy: ProxyProcess, k: int) -> None:
            i = 0
            while not stop.is_set():
                sid = f"outage-{k}-{i}"
                r = chat(proxy.base_url, proxy.master_key, [{"role": "user", "content": f"o{k} {i}"}],
                         headers={"X-Session-Id": sid}, timeout=30)  # fmt: skip
                (acked if r.status_code == 200 else failed).append(sid)
                i += 1

        loaders = [threading.Thread(target=load, args=(proxies[k % 2], k)) for k in range(4)]
        for t in loaders:
            t.start()
        time.sleep(1.0)
        srv.stop("immediate")
        before = len(acked)
        time.sleep(10.0)
        during = len(acked) - before
        srv.start()
        time.sleep(1.0)
        stop.set()
        for t in loaders:
            t.join()
        assert not failed, failed[:3]
        assert during >= 20, f"only {during} answers while the database was down"
        want = set(acked)

        def all_in() -> bool:
            got = {r[0] for r in db.query("SELECT session_id FROM turns WHERE session_id LIKE 'outage-%'")}
            return want <= got

        wait_for(all_in, 60, "every acknowledged turn in the database after it returned", 0.5)
        print(f"database down 10 s: {during} turns answered meanwhile, {len(want)} acknowledged, all stored")

        # 4. kill -9 the elected learner: the other host takes over and learns; no evolution job runs twice.
        leader = wait_for(lambda: owner(learner_pid(db), proxies), 30, "a learner after the outage")
        survivor = p2 if leader is p1 else p1
        leader.kill()
        t0 = time.monotonic()
        wait_for(lambda: owner(learner_pid(db), [survivor]), 15, "the survivor takes over", 0.05)
        print(f"learner failover after kill -9 of its proxy: {time.monotonic() - t0:.2f}s")
        script.evolver_reply = json.dumps({"skills": [SECOND]})
        failing_session(survivor, "second")
        try:
            wait_for(lambda: injected(survivor, up, SECOND["name"]), 90, "the new learner evolves a skill", 0.5)
        except AssertionError as e:
            jobs = [dict(r) for r in db.query("SELECT id, state, reason, last_error FROM fl_evolve_queue")]
            raise AssertionError(f"{e}\njobs: {jobs}\nsurvivor log:\n{survivor.log_tail(6000)}") from None
        jobs = db.query("SELECT id, state FROM fl_evolve_queue ORDER BY id")
        assert jobs and all(j["state"] in ("done", "skipped", "failed") for j in jobs), jobs
        judged = db.query("SELECT value FROM fl_counters WHERE key = 'judge_turns'")
        rewards = db.query("SELECT COUNT(*) FROM fl_rewards WHERE source = 'judge'")[0][0]
        assert judged and judged[0][0] == rewards > 0, "a turn was judged by both hosts"
        for tag in ("first", "second"):
            seen = [d for d in script.evolver_docs if f"{tag}.csv" in d]
            assert len(seen) == 1, f"the failure of session {tag} went to the evolver {len(seen)} times"
    finally:
        for p in proxies:
            p.stop()
        up.stop()
        db.close()
        srv.destroy()
