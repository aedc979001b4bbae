#!/usr/bin/env python
"""Judge and evolver calls and tokens per failed session: this plugin's fast loop against the
reference's policy, on the same sessions.

The workload: ``--sessions`` sessions of ``--turns`` main turns each, generated deterministically. Half
of them fail: the user corrects one or two answers ("no, that's wrong ...") and the host reports
``success: false``; a quarter get explicit thumbs on some turns; the rest carry no signal at all, so
only a judge can score them. One local scripted server plays the judge (it answers -1 where the next
user message corrects the answer, else 1) and the evolver (one skill per call). Tokens are counted the
same way for both policies: the server's ``prompt_tokens`` (request JSON / 4) plus its completion.

* **ours**: the real plugin through its core hooks (``on_request``/``on_response``/``on_feedback``/
  ``on_session_end``), defaults (3 votes with early stop, judge only where no stronger signal exists,
  evolver once per failed session, coalesced, with existing skills ranked and capped).
* **reference**: its policy replayed against the same server with prompts built the way its code builds
  them: the PRM (``prm_m=3``) scores every main turn with 3 calls; the evolver is called every 10 main
  turns of a session and at every session end, with up to 6 turns and all existing skill names.

    python benchmarks/fastloop_calls.py [--sessions 20] [--turns 6] [--json] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.skillbank.bank import bundled_skills_dir
from metaclaw_plugin.skillbank.files import SkillStore

TASKS = [
    "parse the csv export {i} and sum the totals",
    "rename the files in folder {i} to ISO dates",
    "write a test for the bug in parser {i}",
    "summarise the meeting notes {i} with owners and dates",
    "fix the failing build step {i}",
    "convert the timestamps in log {i} to UTC",
]
SYSTEM = "You are a coding agent. " + "Follow the project's conventions. " * 60  # ~2 KB host prompt


def workload(n_sessions: int, n_turns: int, seed: int = 3) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    sessions = []
    for s in range(n_sessions):
        kind = "fail" if s % 2 == 0 else ("feedback" if s % 4 == 1 else "plain")
        bad = set(rng.sample(range(n_turns - 1), k=rng.choice([1, 2]))) if kind == "fail" else set()
        turns = []
        for t in range(n_turns):
            task = rng.choice(TASKS).format(i=f"{s}-{t}")
            how = "by doing the obvious thing" if t in bad else "after checking the input format"
            answer = f"Done: I handled '{task}' {how}. " + "Details follow. " * 20
            turns.append({"user": task, "answer": answer, "bad": t in bad})
        sessions.append({"id": f"w{s}", "kind": kind, "turns": turns})
    return sessions


def _judged_response(body: dict[str, Any]) -> str:
    """The response under review (the judge must not be fooled by earlier context in the prompt)."""
    user = str(body["messages"][-1].get("content", ""))
    if "```json" in user:  # ours: a JSON document
        try:
            return json.loads(user.split("```json\n", 1)[1].rsplit("\n```", 1)[0])["response"]
        except (ValueError, KeyError, IndexError):
            return ""
    return user.split("Response:\n", 1)[-1].split("\n\nWas the response", 1)[0]  # the reference's layout


def user_message(sess: dict[str, Any], t: int) -> str:
    prev_bad = t > 0 and sess["turns"][t - 1]["bad"]
    prefix = "no, that's wrong, you used the wrong delimiter. " if prev_bad else ""
    return prefix + sess["turns"][t]["user"]


class Server:
    def __init__(self) -> None:
        self.calls = {"judge": 0, "evolver": 0}
        self.tokens = {"judge": 0, "evolver": 0}

    def __call__(self, body: dict[str, Any]) -> Any:
        system = str(body["messages"][0].get("content", ""))
        text = json.dumps(body["messages"])
        role = (
            "evolver"
            if ("skill engineer" in system or "skill engineer" in text[:400])
            else ("judge" if ("reviewer" in system) else None)
        )
        if role is None:
            return "host reply"
        if role == "judge":
            reply = "Score: -1" if "the obvious thing" in _judged_response(body) else "Score: 1"
        else:
            n = self.calls["evolver"]
            reply = json.dumps(
                {
                    "skills": [
                        {
                            "action": "create",
                            "name": f"lesson-{n}-check-delimiters",
                            "description": f"When handling task family {n}, verify the input format first.",
                            "body": "# Verify first\n\n1. Inspect a sample.\n2. Confirm the format.\n3. Then act.",
                        }
                    ]
                }
            )
        self.calls[role] += 1
        self.tokens[role] += len(json.dumps(body.get("messages", []))) // 4 + max(1, len(reply) // 4)
        return reply


def run_ours(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    server = Server()
    with Upstream(script=server, record=False) as up, tempfile.TemporaryDirectory() as home:
        s = Settings(
            home=home,
            evolution={"model": "openai/evolver", "api_base": up.url, "api_key": "x"},
            reward={"model": "openai/judge", "api_base": up.url, "api_key": "x", "review_wait": 30},
        )
        p = MetaClawPlugin(s).start()
        try:
            for sess in sessions:
                history: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
                for t, turn in enumerate(sess["turns"]):
                    history = history + [{"role": "user", "content": user_message(sess, t)}]
                    ctx = TurnContext(sess["id"], host="bench")
                    p.on_request(ctx, history)
                    p.on_response(ctx, {"role": "assistant", "content": turn["answer"]})
                    if sess["kind"] == "feedback" and t % 2 == 0:
                        p.on_feedback(ctx, not turn["bad"])
                    history = history + [{"role": "assistant", "content": turn["answer"]}]
                p.on_session_end(ctx, {"success": sess["kind"] != "fail"})
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                p.flush(10)
                st = p.learning.status()
                busy = st["queues"]["judge"].get("pending", 0) + st["queues"]["evolution"].get("pending", 0)
                reviewed = p.learning.db.query("SELECT COUNT(*) AS n FROM fl_sessions WHERE review_due IS NOT NULL")[0][
                    "n"
                ]
                if not busy and not reviewed:
                    break
                time.sleep(0.3)
            counters = p.learning.status()["counters"]
        finally:
            p.stop()
    return {"calls": server.calls, "tokens": server.tokens, "counters": counters}


def run_reference(sessions: list[dict[str, Any]]) -> dict[str, Any]:
    """The reference's policy, replayed: PRM m=3 on every main turn; evolver every 10 turns and at
    every session end, prompts shaped like its code builds them."""
    import litellm

    server = Server()
    names = [sk for sk in SkillStore(bundled_skills_dir()).load().skills]
    with Upstream(script=server, record=False) as up:

        def call(messages: list[dict[str, str]]) -> None:
            litellm.completion(model="openai/ref", messages=messages, api_base=up.url, api_key="x", num_retries=0)

        for sess in sessions:
            done: list[tuple[str, str]] = []
            for t, turn in enumerate(sess["turns"]):
                instruction, response = user_message(sess, t), turn["answer"]
                prm_system = (
                    "You are a quality reviewer for conversational responses.\nYou will be shown a user "
                    "instruction and the assistant response to that instruction.\nBased on instruction alignment "
                    "and task completion quality, decide whether the response was helpful (+1), unhelpful (-1), "
                    "or unclear (0).\nThink briefly, then end your reply with exactly one of: Score: 1 / Score: -1 / Score: 0"
                )
                nxt = user_message(sess, t + 1) if t + 1 < len(sess["turns"]) else ""
                prm_user = (
                    f"Instruction:\n{instruction}\n\nResponse:\n{response}\n\nWas the response helpful? {nxt[:0]}"
                )
                for _ in range(3):
                    call([{"role": "system", "content": prm_system}, {"role": "user", "content": prm_user}])
                done.append((SYSTEM + "\n" + instruction, response))
                if (t + 1) % 10 == 0:
                    call(_ref_evolver_prompt(done[-10:], names))
            call(_ref_evolver_prompt(done, names))
    return {"calls": server.calls, "tokens": server.tokens}


def _ref_evolver_prompt(samples: list[tuple[str, str]], names: list[str]) -> list[dict[str, str]]:
    blocks = [
        f"### Failure {i + 1}\n**Conversation context (last 600 chars):**\n```\n...{p[-600:]}\n```\n\n"
        f"**Assistant response (first 500 chars):**\n```\n{r[:500]}\n```"
        for i, (p, r) in enumerate(samples[:6])
    ]
    prompt = (
        "You are a skill engineer for an AI assistant trained with RL.\nYour job: analyze the failed conversations "
        "below and generate NEW skills that would have prevented those failures.\n\n---\n## Failed Conversations\n\n"
        + "\n\n".join(blocks)
        + "\n\n---\n## Existing Skills (do NOT duplicate any of these)\n\n"
        + json.dumps(names, indent=2)
        + "\n\n---\n## Instructions\n\nGenerate **1 to 3** new skills ... Return ONLY a valid JSON array."
        + " " * 1500
    )
    return [{"role": "user", "content": prompt}]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--turns", type=int, default=6)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    sessions = workload(args.sessions, args.turns)
    failed = sum(1 for s in sessions if s["kind"] == "fail")
    ours, ref = run_ours(sessions), run_reference(sessions)
    per = lambda d: {k: round(v / failed, 1) for k, v in d.items()}  # noqa: E731
    result = {
        "sessions": args.sessions,
        "turns_per_session": args.turns,
        "failed_sessions": failed,
        "ours": {**ours, "per_failed_session": {"calls": per(ours["calls"]), "tokens": per(ours["tokens"])}},
        "reference": {**ref, "per_failed_session": {"calls": per(ref["calls"]), "tokens": per(ref["tokens"])}},
    }
    if args.out:
        from metaclaw_bench.common import write_result  # one file per benchmark, replaced by each run

        write_result(result, args.out, "fastloop-calls")
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{args.sessions} sessions x {args.turns} main turns, {failed} failed\n")
    print(
        "| policy | judge calls | judge tokens | evolver calls | evolver tokens | calls per failed session | tokens per failed session |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in (("ours", ours), ("reference", ref)):
        c, t = r["calls"], r["tokens"]
        print(
            f"| {name} | {c['judge']} | {t['judge']} | {c['evolver']} | {t['evolver']} | "
            f"{(c['judge'] + c['evolver']) / failed:.1f} | {(t['judge'] + t['evolver']) / failed:.0f} |"
        )


if __name__ == "__main__":
    main()
