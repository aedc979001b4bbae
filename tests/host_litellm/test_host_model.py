"""Learning from the first request with nothing but the host's own model (issue 47, ``learning.model: host``).

A LiteLLM proxy with one model in its ``model_list`` (a local scripted upstream) and only the callback line: a
failed session ends with an evolved skill on trial, turns are judged, and memory is extracted, each by the
proxy's model through its router; the plugin's own calls are never recorded as turns. The same for a LangChain
agent (``create_agent`` with the middleware), whose chat model serves. A spent budget stops the calls and says so.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from host_model_support import FACT, HOST_ANSWER, PLUGIN_PROMPTS, Roles, part_answer
from litellm_support import chat, reader, seed_home, write_proxy_dir
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext
from metaclaw_plugin.devtools.demo import CORRECTION, FAILED_TASK
from metaclaw_plugin.devtools.proxyrun import launch_proxy
from metaclaw_plugin.devtools.upstream import Upstream
from metaclaw_plugin.hostmodel import HostModel, HostReply
from metaclaw_plugin.memory.store import MemoryStore
from metaclaw_plugin.skillbank.files import SkillStore
from metaclaw_plugin.store import Database


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "METACLAW_HOME": str(home)}
    for key in ("METACLAW_CONFIG", "METACLAW_LEARNING__MODEL"):  # the defaults: learning.model is host
        env.pop(key, None)
    return env


@pytest.fixture
def default_learning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("METACLAW_LEARNING__MODEL", raising=False)


def _plugin_turns(home: Path) -> list[str]:
    """Turns whose messages are one of the plugin's own prompts (there must be none)."""
    store = reader(home)
    found = []
    for row in store.list_sessions(limit=500):
        session = store.get_session(row["session_id"], tenant=row.get("tenant"))
        for turn in session.turns if session is not None else []:
            text = json.dumps([m for m in turn.messages], default=str)
            if any(p in text for p in PLUGIN_PROMPTS):
                found.append(turn.turn_id)
    return found


@pytest.mark.slow
def test_a_proxy_with_only_the_callback_line_learns_with_its_own_model(tmp_path: Path) -> None:
    roles = Roles()
    up = Upstream(script=roles).start()
    home = seed_home(tmp_path / "home")
    cfg = write_proxy_dir(tmp_path / "proxy", up.url)  # one model, only metaclaw_litellm.callback
    proxy = launch_proxy(cfg, env=_env(home), log_path=tmp_path / "proxy.log", cwd=tmp_path / "proxy")
    try:
        proxy.wait_ready(240)
        sid, who = "host-model-failed", {"X-User-Id": "ana"}
        first = [{"role": "user", "content": f"{FAILED_TASK}. {FACT}"}]
        r = chat(proxy.base_url, proxy.master_key, first, headers={"X-Session-Id": sid, **who})
        assert r.status_code == 200, r.text
        second = [*first, {"role": "assistant", "content": r.json()["choices"][0]["message"]["content"]}]
        second.append({"role": "user", "content": CORRECTION})
        done = {"session_id": sid, "session_done": True, "session_outcome": {"success": False}}
        r = chat(proxy.base_url, proxy.master_key, second, headers=who, body={"metadata": done})
        assert r.status_code == 200, r.text
        # a plain turn with nothing stronger than the judge to score it
        judged = "host-model-judged"
        ask = [{"role": "user", "content": "summarise the release notes of version 2.4"}]
        r = chat(proxy.base_url, proxy.master_key, ask, headers={"X-Session-Id": judged, "X-Session-Done": "true"})
        assert r.status_code == 200, r.text

        skills = SkillStore(home / "skills")

        def on_trial() -> Any:  # the evolver's skill (or its variant of a bundled one), on shadow trial
            return [
                sk
                for sk in skills.load().skills.values()
                if sk.origin == "evolved"
                and sk.status == "quarantined"
                and sk.extra_metadata.get("promotion") == "shadow"
            ]

        (sk, *_) = wait_for(on_trial, timeout=120, what="the evolved skill on trial", step=0.5)
        assert any(s.startswith(sid) for s in sk.source_sessions) and "delimiter" in sk.body  # the model's text
        store = reader(home)

        def judge_rewards() -> list[Any]:
            session = store.get_session(judged)
            if session is None or not session.turns:
                return []
            return [r for r in store.rewards(session.turns[0].turn_id) if r["source"] == "judge"]

        wait_for(judge_rewards, timeout=60, what="the judge's reward", step=0.5)
        db = Database(home / "metaclaw.db")
        try:
            mems = wait_for(
                lambda: [m for m in MemoryStore(db).find("default", "ana") if m.text == FACT],
                timeout=60,
                what="the memory the host's model extracted",
                step=0.5,
            )
        finally:
            db.close()
        assert mems[0].kind == "fact"
        assert roles.asked["evolver"] >= 1 and roles.asked["judge"] >= 1 and roles.asked["memory"] >= 1
        # every call went to the proxy's one model, by the name its model_list gives it
        assert {b["model"] for b in up.requests} == {"stub-model"}
        assert _plugin_turns(home) == []  # the plugin's calls are not turns
        assert len(store.list_sessions(limit=100)) == 2  # the client's two sessions, no more
        # the CLI names the model each part uses
        out = subprocess.run(
            [sys.executable, "-m", "metaclaw_plugin", "status", "--json"],
            capture_output=True,
            text=True,
            env=_env(home),
            timeout=120,
        )
        st = json.loads(out.stdout)
        for part in ("evolver", "judge"):
            assert st["learning"][part]["on"] and "host's own model" in st["learning"][part]["why"]
        assert st["host_model"]["name"] == "stub-model"
    finally:
        proxy.stop()
        up.stop()


class _Model:
    """A scripted chat model standing in for the host's (calls counted; a reply per call)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(self, messages: Any, temperature: float, max_tokens: int, purpose: str) -> HostReply:
        self.calls.append(purpose)
        return HostReply("Score: 1", 10, 2)


def test_a_spent_budget_stops_the_calls_and_says_so(home: Path, default_learning: None) -> None:
    model = _Model()
    learning = {"daily_calls": 2, "judge_batch": 1}  # a call per turn here: batching is tested below
    p = MetaClawPlugin(Settings(home=home, learning=learning, memory={"enabled": False})).start()
    try:
        assert p.host_models.offer(HostModel("scripted", "a test", model))
        assert not p.host_models.offer(HostModel("other", "a test", model))  # the first offer stays
        assert p.learning is not None and p.learning.judge.m == 1  # one vote on the host's model
        for i in range(4):
            ctx = TurnContext(f"budget-{i}")
            p.on_request(ctx, [{"role": "user", "content": f"write the changelog entry number {i}"}])
            p.on_response(ctx, {"role": "assistant", "content": "Done."})
            p.on_session_end(ctx)

        def queued_for_tomorrow() -> bool:
            p.flush(5)
            p.learning.wake()
            q = p.learning.status()["queues"]["judge"]
            return q.get("pending", 0) >= 2 and len(model.calls) == 2

        wait_for(
            queued_for_tomorrow,
            timeout=60,
            what=lambda: f"two judged, the rest waiting: calls {model.calls}, {p.learning.status()['queues']}",
            step=0.2,
        )
        time.sleep(0.5)
        assert len(model.calls) == 2  # no call past the budget
        st = p.learning.status()
        assert st["budget"]["host"]["calls_left"] == 0
        assert any("budget" in w for w in st.get("warnings", [])) or st["queues"]["judge"]["pending"] >= 2
        assert p.status()["host_model"]["name"] == "scripted"
        # the dashboard's Training page shows the spend and the model
        from starlette.testclient import TestClient

        from metaclaw_plugin.sidecar import create_app, load_or_create_token

        token = load_or_create_token(home)
        with TestClient(create_app(p, token), base_url="http://127.0.0.1") as c:
            page = c.get("/training", headers={"Authorization": f"Bearer {token}"}).text
        assert "<td>host</td><td>2</td><td>0</td>" in page and "scripted (a test)" in page
    finally:
        p.stop()


def test_the_plugin_calls_the_agents_chat_model_and_never_records_it(home: Path, default_learning: None) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    from metaclaw_langchain import MetaClawMiddleware

    class Scripted(GenericFakeChatModel):
        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any) -> Any:
            got = part_answer(str(messages[0].content) if messages else "")
            text = got[1] if got is not None else HOST_ANSWER
            from langchain_core.outputs import ChatGeneration, ChatResult

            return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    model = Scripted(messages=iter(()))
    p = MetaClawPlugin(Settings(home=home)).start()
    try:

        def failed(state: Any) -> dict[str, Any]:  # the application's own check of each run
            return {"success": False, "feedback": "the totals are wrong: the file is not comma-separated"}

        agent = create_agent(model, tools=[], middleware=[MetaClawMiddleware(plugin=p, outcome=failed)])
        cfg = {"configurable": {"thread_id": "lc-host-model"}, "metadata": {"user_id": "ana"}}
        agent.invoke({"messages": [{"role": "user", "content": f"{FAILED_TASK}. {FACT}"}]}, cfg)
        agent.invoke({"messages": [{"role": "user", "content": CORRECTION}]}, cfg)
        hm = p.host_models.get()
        assert hm is not None and "LangChain" in hm.via

        def learned() -> bool:  # each invoke is an episode that ends its session (after_agent)
            p.flush(5)
            assert p.learning is not None
            p.learning.wake()
            return [sk for sk in p.skills.skills.values() if sk.origin == "evolved" and "delimiter" in sk.body]

        wait_for(learned, timeout=120, what="the evolved skill", step=0.3)
        assert p.memory_store is not None
        wait_for(
            lambda: [m for m in p.memory_store.find("default", "ana") if m.text == FACT],
            timeout=60,
            what="the memory the agent's model extracted",
            step=0.3,
        )
        assert _plugin_turns(home) == []
    finally:
        p.stop()


class _BatchJudge:
    """A host model that judges each turn of a batched prompt by its content: "good" 1, "bad" -1."""

    def __init__(self) -> None:
        self.turns_per_call: list[int] = []
        self.all_recorded = threading.Event()  # the first call waits for it: later ticks find several turns due

    def __call__(self, messages: Any, temperature: float, max_tokens: int, purpose: str) -> HostReply:
        user = str(messages[-1]["content"])
        if purpose != "judge":  # the evolver, for the failed sessions: not what this counts
            return HostReply(json.dumps({"skills": []}), 10, 2)
        self.all_recorded.wait(30)
        blocks = re.split(r"\nTurn \d+:\n", "\n" + user) if "Turn 1:" in user else ["", user]
        verdicts = [1 if "good answer" in b else -1 for b in blocks[1:]]
        self.turns_per_call.append(len(verdicts))
        if "Turn 1:" not in user:
            return HostReply(f"Score: {verdicts[0]}", 10, 2)
        return HostReply("\n".join(f"Turn {i}: Score: {v}" for i, v in enumerate(verdicts, 1)), 10, 2)


def test_one_judge_call_scores_several_turns_each_by_its_own_evidence(home: Path, default_learning: None) -> None:
    """On the host's model a judge call carries up to learning.judge_batch turns; each verdict lands on its turn."""
    judge = _BatchJudge()
    p = MetaClawPlugin(Settings(home=home, memory={"enabled": False})).start()
    try:
        assert p.host_models.offer(HostModel("scripted", "a test", judge))
        want = {}
        for i in range(6):
            ctx = TurnContext(f"batch-{i}")
            p.on_request(ctx, [{"role": "user", "content": f"write release note number {i}"}])
            answer = "good answer" if i % 2 else "bad answer"
            p.on_response(ctx, {"role": "assistant", "content": f"{answer} for note {i}"})
            p.on_session_end(ctx)
            want[ctx.request_id] = 1.0 if i % 2 else -1.0
        judge.all_recorded.set()

        def judged() -> dict[str, float]:
            p.flush(5)
            assert p.learning is not None
            p.learning.wake()
            got = {t: r["score"] for t in want for r in p.store.rewards(t) if r["source"] == "judge"}
            return got if len(got) == len(want) else {}

        assert wait_for(judged, timeout=60, what="six turns judged", step=0.2) == want
        # every turn scored once, and fewer calls than turns (whichever turns the first claim took, the rest
        # were due together once it returned)
        assert sum(judge.turns_per_call) == 6 and max(judge.turns_per_call) >= 2 and len(judge.turns_per_call) < 6
    finally:
        p.stop()


def test_a_batched_answer_without_a_turns_verdict_leaves_it_to_its_own_call() -> None:
    from metaclaw_plugin.hostmodel import HostModels
    from metaclaw_plugin.learning.llm import LLMClient
    from metaclaw_plugin.learning.reward import RewardJudge, TurnView, parse_batch

    assert parse_batch("Turn 1: Score: 1\n**Turn 2** - score: −1\nTurn 9: Score: 1", 3) == [1, -1, None]
    hm = HostModels()
    hm.offer(HostModel("scripted", "a test", lambda m, t, n, p: HostReply("Turn 2: Score: 0\nTurn 1: Score: -1")))
    judge = RewardJudge(LLMClient("judge", model=None, host=hm), votes=1)
    views = [TurnView(f"t{i}", "s", "default", f"question {i}", f"answer {i}") for i in range(3)]
    got = judge.judge_many(views)
    assert [r.score if r else None for r in got] == [-1.0, 0.0, None]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield seed_home(tmp_path / "home")
