"""``POST /v1/chat/completions`` on the sidecar (sidecar/policy.py), through a real uvicorn server and the openai
SDK: JSON, SSE, tool calls (with a forced output), logprobs, the bearer token, clear errors; and, with
``metaclaw-plugin serve`` as a real process, hot swaps under 32 concurrent clients."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import httpx
import openai
import pytest
import yaml
from openclaw_support import free_port, metaclaw_cli
from policy_support import TOOL_TEXT, WEATHER_TOOL, ServerThread, force_output
from transformers import AutoTokenizer
from waiting import wait_for

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.scheduling.lock import TrainerLock
from metaclaw_plugin.serving import ServedPolicy
from metaclaw_plugin.sidecar import create_app, load_or_create_token
from metaclaw_plugin.store import Database
from metaclaw_plugin.store.trajectories import TrajectoryStore
from metaclaw_plugin.training import tokens
from metaclaw_plugin.training.samples import TrainSample, build_sample
from metaclaw_plugin.training.weights import latest
from metaclaw_plugin.types import Sample

MSGS = [{"role": "user", "content": "Please deploy the app"}]


@pytest.fixture()
def rl_settings(home: Path, policy_base: Path) -> Settings:
    return Settings(
        home=home,
        mode="rl",
        training={"base_model": str(policy_base)},
        serving={"max_new_tokens": 12, "poll_interval": 0.1},
    )


@pytest.fixture()
def sidecar(rl_settings: Settings):
    """(url, token, policy): the sidecar app with a policy the test can reach."""
    plugin = MetaClawPlugin(rl_settings)
    policy = ServedPolicy(
        str(rl_settings.training.base_model), db=Database(rl_settings.db_file), max_new_tokens=12, poll_interval=None
    )
    token = load_or_create_token(rl_settings.home_dir)
    app = create_app(plugin, token, manage_plugin=True, policy=policy)
    with ServerThread(app, free_port()) as srv:
        policy.wait_ready(60)
        yield srv.url, token, policy


def test_json_completion_through_the_openai_sdk(sidecar, rl_settings: Settings) -> None:
    url, token, _ = sidecar
    client = openai.OpenAI(base_url=url + "/v1", api_key=token)
    raw = client.chat.completions.with_raw_response.create(
        model="metaclaw/policy", messages=MSGS, seed=4, logprobs=True
    )
    r = raw.parse()
    assert raw.headers["x-metaclaw-weights"] == "base"
    assert r.model == "metaclaw/policy" and r.choices[0].finish_reason in ("stop", "length")
    text = r.choices[0].message.content
    assert isinstance(text, str) and r.usage.completion_tokens > 0
    body = json.loads(raw.text)
    assert body["metaclaw"] == {"weights": "base", "step": None}
    rec = tokens.lookup(Database(rl_settings.db_file), tokens.response_key(text))
    assert rec is not None and rec.logprobs == [c["logprob"] for c in body["choices"][0]["logprobs"]["content"]]
    assert [m.id for m in client.models.list()] == ["metaclaw/policy"]


def test_streaming_adds_up_to_the_same_answer(sidecar) -> None:
    url, token, _ = sidecar
    client = openai.OpenAI(base_url=url + "/v1", api_key=token)
    whole = client.chat.completions.create(model="policy", messages=MSGS, seed=9)
    chunks = list(
        client.chat.completions.create(
            model="metaclaw/policy", messages=MSGS, seed=9, stream=True, stream_options={"include_usage": True}
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == [
        whole.choices[0].finish_reason
    ]
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == whole.usage.total_tokens


def test_tool_calls_on_the_wire(sidecar) -> None:
    url, token, policy = sidecar
    force_output(policy, TOOL_TEXT)
    client = openai.OpenAI(base_url=url + "/v1", api_key=token)
    r = client.chat.completions.create(model="metaclaw/policy", messages=MSGS, tools=[WEATHER_TOOL], max_tokens=200)
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls" and msg.content == "Let me check."
    assert [(c.function.name, json.loads(c.function.arguments)) for c in msg.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    chunks = list(
        client.chat.completions.create(
            model="metaclaw/policy", messages=MSGS, tools=[WEATHER_TOOL], max_tokens=200, stream=True
        )
    )
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert [(tc.index, tc.function.name, tc.function.arguments) for tc in calls] == [
        (0, "get_weather", '{"city": "Paris"}')
    ]
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Let me check."
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def _captured_sample(url: str, token: str, settings: Settings, run_id: str, sent: dict, answer: dict) -> TrainSample:
    """The turn as a host captures it through the sidecar (OpenClaw's llm_input/llm_output routes), then the
    trainer's sample of it, built with a tokenizer of its own."""
    h = {"Authorization": f"Bearer {token}"}
    turn_in = {"session_id": "s-" + run_id, "run_id": run_id, **sent}
    assert httpx.post(url + "/v1/turns/input", json=turn_in, headers=h).status_code == 200
    out = {"session_id": "s-" + run_id, "run_id": run_id, "response": answer}
    assert httpx.post(url + "/v1/turns/output", json=out, headers=h).json()["ok"]
    store = TrajectoryStore(settings.db_file)
    try:
        turn = wait_for(lambda: store.get_turn(run_id))
    finally:
        store.close()
    assert turn.tools == sent.get("tools")
    tok = AutoTokenizer.from_pretrained(settings.training.base_model)
    return build_sample(turn, Sample(run_id, "s-" + run_id, "default", 0, 1.0), tok, Database(settings.db_file))


def test_a_tool_calling_answer_trains_with_its_behaviour_logprobs(sidecar, rl_settings: Settings) -> None:
    """A request with tools through the real route: the policy's answer (a tool call) becomes a sample with the
    prompt ids the policy saw (tool definitions rendered) and the logprobs it sampled with, not missing ones."""
    url, token, policy = sidecar
    force_output(policy, TOOL_TEXT)
    client = openai.OpenAI(base_url=url + "/v1", api_key=token)
    r = client.chat.completions.create(
        model="metaclaw/policy", messages=MSGS, tools=[WEATHER_TOOL], max_tokens=200, logprobs=True
    )
    msg = r.choices[0].message
    assert r.choices[0].finish_reason == "tool_calls" and msg.tool_calls
    sent = {"messages": MSGS, "tools": [WEATHER_TOOL]}
    sample = _captured_sample(url, token, rl_settings, "tc-1", sent, msg.model_dump(exclude_none=True))
    rec = tokens.lookup(Database(rl_settings.db_file), tokens.response_key(msg.content, msg.model_dump()["tool_calls"]))
    assert rec is not None
    assert sample.logprobs is not None and sample.logprobs == [c.logprob for c in r.choices[0].logprobs.content]
    assert sample.prompt_ids == rec.prompt_ids == policy.prompt_ids(MSGS, [WEATHER_TOOL])
    assert sample.completion_ids == rec.response_ids and set(sample.mask) == {1}
    prompt = policy._tokenizer.decode(sample.prompt_ids)
    assert '"name": "get_weather"' in prompt and "<tools>" in prompt  # the definitions are in what it saw

    # the same without tools: the plain prompt, and still the recorded logprobs
    plain = client.chat.completions.create(model="metaclaw/policy", messages=MSGS, max_tokens=200, logprobs=True)
    answer = plain.choices[0].message
    sample = _captured_sample(url, token, rl_settings, "tc-2", {"messages": MSGS}, answer.model_dump(exclude_none=True))
    assert sample.logprobs == [c.logprob for c in plain.choices[0].logprobs.content]
    assert sample.prompt_ids == policy.prompt_ids(MSGS) and "<tools>" not in policy._tokenizer.decode(sample.prompt_ids)


def test_token_and_bad_requests(sidecar) -> None:
    url, token, _ = sidecar
    ok = {"model": "metaclaw/policy", "messages": MSGS}
    assert httpx.post(url + "/v1/chat/completions", json=ok).status_code == 401
    h = {"Authorization": f"Bearer {token}"}
    r = httpx.post(url + "/v1/chat/completions", json={**ok, "model": "gpt-4o"}, headers=h)
    assert r.status_code == 404 and "metaclaw/policy" in r.json()["error"]
    for bad, field in [({**ok, "n": 2}, "n"), ({**ok, "messages": []}, "messages"), ({**ok, "temperature": 3}, "")]:
        r = httpx.post(url + "/v1/chat/completions", json=bad, headers=h)
        assert r.status_code == 422 and field in r.json()["error"]
    long = {**ok, "messages": [{"role": "user", "content": "x " * 3000}]}
    r = httpx.post(url + "/v1/chat/completions", json=long, headers=h)
    assert r.status_code == 400 and "context" in r.json()["error"]
    r = httpx.post(url + "/v1/chat/completions", json={**long, "stream": True}, headers=h)
    assert r.status_code == 400 and "context" in r.json()["error"]  # before any event: a plain HTTP error


def test_no_base_model_is_a_clear_503(home: Path) -> None:
    settings = Settings(home=home, mode="rl")
    plugin = MetaClawPlugin(settings)
    token = load_or_create_token(home)
    with ServerThread(create_app(plugin, token, manage_plugin=True), free_port()) as srv:
        h = {"Authorization": f"Bearer {token}"}
        r = httpx.post(srv.url + "/v1/chat/completions", json={"model": "metaclaw/policy", "messages": MSGS}, headers=h)
        assert r.status_code == 503 and "training.base_model is not set" in r.json()["error"]
        st = httpx.get(srv.url + "/v1/status", headers=h).json()["policy"]
        assert st["ready"] is False and "training.base_model" in st["reason"]


@pytest.mark.slow
def test_training_steps_and_hot_swaps_under_32_concurrent_clients_of_metaclaw_plugin_serve(
    tmp_path: Path, policy_base: Path
) -> None:
    """A trainer in this process runs real steps on buffered samples and publishes each adapter; the sidecar
    (another process) swaps them in while 32 clients keep asking. No request fails."""
    from openclaw_support import stop_process
    from training_support import a_and_b, capture

    from metaclaw_plugin.training.runtime import build_trainer

    home = tmp_path / "mh"
    home.mkdir()
    cfg = {
        "mode": "rl",
        "training": {
            "base_model": str(policy_base),
            "batch_size": 4,
            "micro_batch_size": 2,
            "learning_rate": 2e-3,
            "off_policy": "reinforce",  # captured answers, not the served policy's
        },
        "serving": {"max_new_tokens": 6, "poll_interval": 0.1, "workers": 4},
    }
    (home / "config.yaml").write_text(yaml.safe_dump(cfg))
    steps = 4
    capture(home / "metaclaw.db", a_and_b(steps))  # captured, judged turns waiting in the buffer
    # this process is the home's trainer (as `metaclaw-plugin train` is): the sidecar's scheduler, in mode rl,
    # sees the lock and only serves
    trainer_lock = TrainerLock(home)
    assert trainer_lock.acquire()
    port = free_port()
    env = {**os.environ, "METACLAW_HOME": str(home)}
    env.pop("METACLAW_CONFIG", None)
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*metaclaw_cli(), "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        token = wait_for(lambda: (home / "server.token").exists() and (home / "server.token").read_text().strip(), 60)
        url, h = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}

        def status() -> dict:
            return httpx.get(url + "/v1/status", headers=h, timeout=10).json()["policy"]

        def ready() -> bool:
            try:
                return status()["ready"]
            except httpx.HTTPError:
                return False

        wait_for(ready, 90)
        trainer = build_trainer(Settings.load(home / "config.yaml", home=home))
        trained = threading.Event()
        reports = []

        def train() -> None:
            time.sleep(0.5)  # the clients are in flight first
            reports.append(trainer.run(lambda: True))
            trained.set()

        results: list[tuple[int, str | None]] = []
        lock = threading.Lock()

        def client(n: int) -> None:
            with httpx.Client(timeout=120) as c:
                k = 0
                while k < 3 or not trained.is_set():
                    body = {"model": "metaclaw/policy", "messages": [{"role": "user", "content": f"task {n} {k}"}]}
                    r = c.post(url + "/v1/chat/completions", json=body, headers=h)
                    with lock:
                        results.append((r.status_code, r.headers.get("x-metaclaw-weights")))
                    k += 1

        t = threading.Thread(target=train)
        threads = [threading.Thread(target=client, args=(n,)) for n in range(32)]
        t0 = time.monotonic()
        for th in threads:
            th.start()
        t.start()
        t.join(300)
        for th in threads:
            th.join(300)

        def tail() -> str:
            return log.read_text(errors="replace")[-3000:]

        assert reports and reports[0].steps == steps, reports
        failed = [c for c, _ in results if c != 200]
        assert len(results) >= 96 and not failed, (failed, tail())
        served = {w for _, w in results}
        assert "base" in served and len(served) >= 2, served  # answers came from the base and from trained steps
        final = latest(Database(home / "metaclaw.db"))
        assert final is not None and final.step == steps
        st = wait_for(lambda: (st := status())["step"] == steps and st)
        assert st["swap_errors"] == 0, (st, tail())
        r = httpx.post(url + "/v1/chat/completions", json={"model": "metaclaw/policy", "messages": MSGS}, headers=h)
        assert r.headers["x-metaclaw-weights"] == final.path
        print(f"{len(results)} requests from 32 clients in {time.monotonic() - t0:.1f}s; weights served: {served}")
    finally:
        stop_process(proc)
        trainer_lock.release()
