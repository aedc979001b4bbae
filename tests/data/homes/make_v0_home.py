"""How ``v0-home.tar.gz`` was made: run once with the release before schema versions (commit a5f2db3).

A small home as that release leaves it: the library (two evolved skills, one refined, one on shadow
trial; a few builtin ones), and ``metaclaw.db`` with sessions, turns, rewards, the fast loop's
queues, the sample buffer, the LLM budget and the judge cache; no ``user_version``. The upgrade test
opens it with today's code. Kept for the record; it imports names that later releases moved.
"""

from __future__ import annotations

import json
import shutil
import sys
import tarfile
import time
from pathlib import Path

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.devtools.upstream import Upstream

SKILL_A = {"action": "create", "name": "detect-csv-delimiter",
           "description": "When parsing CSV exports, detect the delimiter and quoting before splitting rows.",
           "body": "# Detect the CSV delimiter\n\n1. Sniff a sample with csv.Sniffer.\n2. Never split on commas by hand.",
           "category": "data"}
SKILL_A2 = {**SKILL_A, "action": "refine", "target": "detect-csv-delimiter",
            "body": SKILL_A["body"] + "\n3. Tell the user which delimiter you found."}
SKILL_B = {"action": "create", "name": "iso-timestamps-in-reports",
           "description": "Write timestamps in reports as ISO 8601 with a UTC offset.",
           "body": "# ISO timestamps\n\n1. Use 2026-01-31T09:00:00Z style.\n2. Never write local times without offset.",
           "category": "conventions"}


def main(out: Path) -> None:
    home = Path("/tmp/metaclaw-v0-home")
    shutil.rmtree(home, ignore_errors=True)
    replies = iter([json.dumps({"skills": [SKILL_A]}), json.dumps({"skills": [SKILL_A2]}),
                    json.dumps({"skills": [SKILL_B]})])

    def script(body):
        system = body["messages"][0]["content"]
        if "skill engineer" in system:
            return next(replies)
        if "strict reviewer" in system:
            return "Score: -1"
        return "host reply"

    with Upstream(script=script) as up:
        common = {"api_base": up.url, "api_key": "x", "backoff": 0.01, "retries": 0}
        for i, promotion in enumerate(("auto", "auto", "shadow")):
            s = Settings(home=home, evolution={"model": "openai/evolver", "promotion": promotion, **common},
                         reward={"model": "openai/judge", "review_wait": 1.0, **common})
            p = MetaClawPlugin(s).start()
            sid = f"fail-{i}"
            tenant = "team-a" if i < 2 else "team-b"
            c1 = TurnContext(sid, tenant=tenant, host="fixture")
            msgs = [{"role": "user", "content": "parse the csv export orders.csv and write the report timestamps"}]
            p.on_request(c1, msgs)
            p.on_response(c1, {"role": "assistant", "content": "I split each line on ','."})
            c2 = TurnContext(sid, tenant=tenant, host="fixture")
            p.on_request(c2, msgs + [{"role": "assistant", "content": "I split each line on ','."},
                                     {"role": "user", "content": "no, that's wrong: it uses ';'"}])
            p.on_response(c2, {"role": "assistant", "content": "Still wrong."})
            p.on_session_end(c2, {"success": False, "feedback": "wrong delimiter"})
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                p.flush(5)
                p.fastloop.tick(force=True)
                if p.fastloop.db.query("SELECT 1 FROM fl_evolve_queue WHERE state = 'done'")[i:]:
                    break
                time.sleep(0.2)
            else:
                raise SystemExit(f"evolution {i} did not finish")
            ok = TurnContext(f"ok-{i}", tenant=tenant, host="fixture")
            p.on_request(ok, [{"role": "user", "content": "what is the capital of France?"}])
            p.on_response(ok, {"role": "assistant", "content": "Paris."})
            p.on_feedback(ok, True)
            p.on_session_end(ok, {"success": True})
            p.flush(5)
            p.fastloop.tick(force=True)
            p.fastloop.tick(force=True)
            p.stop()
    keep = {"detect-csv-delimiter", "iso-timestamps-in-reports", "csv-quoting", "iso-8601-timestamps"}
    for d in (home / "skills").iterdir():
        if not d.name.startswith(".") and d.name not in keep:
            shutil.rmtree(d)
    for junk in home.rglob("*.jsonl.*"):
        junk.unlink()
    with tarfile.open(out, "w:gz") as tar:
        tar.add(home, arcname="home")
    print("wrote", out)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
