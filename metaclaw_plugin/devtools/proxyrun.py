"""Run a real LiteLLM proxy as a user would, and measure requests through it.

Shared by ``metaclaw-plugin proxy``, the LiteLLM adapter tests and the overhead benchmarks. It never
imports LiteLLM (the proxy is a subprocess), so the core stays light.

* :func:`proxy_config` / :func:`write_config`: a proxy ``config.yaml`` with the metaclaw callback wired
  (``litellm_settings.callbacks: ["metaclaw_litellm.callback"]``) and the master key read from
  ``LITELLM_MASTER_KEY``, so that no secret is written to the file.
* :func:`launch_proxy` (returns at once) and :func:`start_proxy` (waits until it answers);
  :class:`ProxyProcess` stops the whole process group.
* :func:`measure`: N chat requests at a given concurrency over keep-alive connections; returns the
  latency of each and the wall time. :func:`summarize` gives p50/p99/throughput.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..infra.procs import free_port, spawn_group
from ..infra.procs import stop_process as stop_process  # re-exported for the tests and benchmarks
from ..infra.stats import percentile

CALLBACK = "metaclaw_litellm.callback"
MASTER_KEY_ENV = "LITELLM_MASTER_KEY"
READY_PATH = "/health/liveliness"
# Keys that LiteLLM's docs and examples use, and that scanners try first.
KNOWN_UNSAFE_KEYS = frozenset(
    {
        "sk-1234",
        "sk-12345",
        "sk-123456",
        "sk-1234567890",
        "sk-test",
        "sk-master",
        "sk-admin",
        "sk-password",
        "sk-changeme",
        "sk-litellm",
        "sk-local",
    }
)
MIN_KEY_CHARS = 24


@dataclass
class ModelSpec:
    """One ``model_list`` entry. ``model`` is any LiteLLM model string (``openai/gpt-4o-mini``,
    ``ollama/llama3``, ``hosted_vllm/...``); ``name`` is what clients send (default: ``model``)."""

    model: str
    name: str | None = None
    api_base: str | None = None
    api_key: str | None = None  # a literal, or "os.environ/NAME"

    @classmethod
    def parse(cls, text: str, *, api_base: str | None = None, api_key: str | None = None) -> ModelSpec:
        """``"openai/gpt-4o"``, ``"alias=openai/gpt-4o"`` or ``"alias=openai/gpt-4o@http://host:8000/v1"`` (the
        upstream's base URL after the last ``@``, when it is an http(s) URL: a model string may hold an ``@``)."""
        name, sep, model = text.partition("=")
        if not sep:
            name, model = "", text
        name, model = name.strip(), model.strip()
        head, at, base = model.rpartition("@")
        if at and base.startswith(("http://", "https://")):
            model, api_base = head.strip(), base.strip()
            if not urlsplit(api_base).hostname:
                raise ValueError(f"--model {text!r}: {api_base!r} is not a URL with a host")
        if not model:
            raise ValueError(f"--model {text!r}: empty model string")
        return cls(model=model, name=name or None, api_base=api_base, api_key=api_key)

    @property
    def client_name(self) -> str:
        """The name clients ask for (may be a wildcard such as ``claude-*``)."""
        return self.name or self.model

    def entry(self) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.model}
        if self.api_base:
            params["api_base"] = self.api_base
        if self.api_key:
            params["api_key"] = self.api_key
        return {"model_name": self.name or self.model, "litellm_params": params}


LEARNING_ROUTES = "/v1/chat/completions, /v1/messages and /v1/responses, native and bridged, streamed and not"


def route_report(cfg: dict[str, Any]) -> tuple[bool, str]:
    """What of a LiteLLM proxy config learns, for ``doctor``: (no unhooked route?, one line). Every mapped model
    learns on the three HTTP routes; a pass-through endpoint forwards raw bytes that no callback sees."""
    models = [
        f"{e.get('model_name')} ({(e.get('litellm_params') or {}).get('model')})"
        for e in cfg.get("model_list") or []
        if isinstance(e, dict)
    ]
    callbacks = (cfg.get("litellm_settings") or {}).get("callbacks") or []
    if CALLBACK not in callbacks:
        return False, f"the plugin's callback is not in litellm_settings.callbacks (add {CALLBACK!r}): nothing learns"
    line = f"{', '.join(models) or 'no models'}: learn on {LEARNING_ROUTES}"
    passthrough = [
        str(p.get("path"))
        for p in (cfg.get("general_settings") or {}).get("pass_through_endpoints") or []
        if isinstance(p, dict)
    ]
    if passthrough:
        line += (
            f"; NOT hooked: pass-through endpoints {', '.join(passthrough)} (raw bytes, no callback sees them): "
            "map those models in model_list and call /v1/chat/completions, /v1/messages or /v1/responses instead"
        )
    return not passthrough, line


def generate_master_key() -> str:
    return "sk-" + secrets.token_urlsafe(32)


def unsafe_key_reason(key: str | None) -> str | None:
    """Why a master key must not be used, or None when it is acceptable."""
    if not key:
        return "no master key"
    if key.strip() != key:
        return "the master key has leading or trailing spaces"
    if not key.startswith("sk-"):
        return "a LiteLLM master key must start with 'sk-'"
    if key.lower() in KNOWN_UNSAFE_KEYS or key[3:].isdigit():
        return f"{key!r} is a well-known example key"
    if len(key) < MIN_KEY_CHARS:
        return f"the master key is shorter than {MIN_KEY_CHARS} characters"
    if len(set(key[3:])) < 6:
        return "the master key is too repetitive"
    return None


def proxy_config(
    models: Sequence[ModelSpec],
    *,
    callbacks: Iterable[str] | None = (CALLBACK,),
    litellm_settings: dict[str, Any] | None = None,
    general_settings: dict[str, Any] | None = None,
) -> dict[str, Any]:
    ls: dict[str, Any] = {}
    cbs = list(callbacks or [])
    if cbs:
        ls["callbacks"] = cbs
    ls.update(litellm_settings or {})
    gs: dict[str, Any] = {"master_key": f"os.environ/{MASTER_KEY_ENV}"}
    gs.update(general_settings or {})
    cfg: dict[str, Any] = {"model_list": [m.entry() for m in models], "general_settings": gs}
    if ls:
        cfg["litellm_settings"] = ls
    return cfg


def write_config(path: Path | str, cfg: dict[str, Any], header: str = "") -> Path:
    """Write the config atomically with mode 0600 (it may name environment variables holding keys)."""
    import yaml

    from ..skillbank.files import atomic_write

    path = Path(path)
    text = (header + "\n" if header else "") + yaml.safe_dump(cfg, sort_keys=False)
    atomic_write(path, text.encode("utf-8"), mode=0o600)
    return path


def litellm_command(config: Path | str, *, host: str = "127.0.0.1", port: int, extra: Sequence[str] = ()) -> list[str]:
    """The ``litellm`` CLI of this interpreter's environment (falls back to ``python -m``)."""
    exe = Path(sys.executable).with_name("litellm")
    head = (
        [str(exe)]
        if exe.exists()
        else (
            [shutil.which("litellm")] if shutil.which("litellm") else [sys.executable, "-m", "litellm.proxy.proxy_cli"]
        )
    )
    return [*head, "--config", str(config), "--host", host, "--port", str(port), *extra]


def proxy_env(master_key: str, base: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline start-up: no fetch of the price map
    env[MASTER_KEY_ENV] = master_key
    env.setdefault("LITELLM_LOG", "ERROR")
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.update(extra)
    return env


@dataclass
class ProxyProcess:
    proc: subprocess.Popen
    host: str
    port: int
    master_key: str
    config: Path
    log_path: Path | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL (``.../v1``)."""
        return self.base_url + "/v1"

    def headers(self, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.master_key}", **extra}

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log_tail(self, n: int = 4000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_bytes()[-n:].decode("utf-8", "replace")

    def wait_ready(self, timeout: float = 120.0) -> ProxyProcess:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"litellm proxy exited with {self.proc.returncode} before it was ready:\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(self.base_url + READY_PATH, timeout=2) as r:
                    if r.status < 500:
                        return self
            except urllib.error.HTTPError as e:
                if e.code < 500:
                    return self
                last = e
            except Exception as e:
                last = e
            time.sleep(0.1)
        raise TimeoutError(f"litellm proxy not ready after {timeout:.0f}s ({last}):\n{self.log_tail()}")

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to the proxy's process group (SIGKILL: no shutdown code runs)."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def stop(self, timeout: float = 15.0) -> None:
        stop_process(self.proc, timeout)

    def __enter__(self) -> ProxyProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def launch_proxy(
    config: Path | str,
    *,
    master_key: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    env: dict[str, str] | None = None,
    log_path: Path | str | None = None,
    cwd: Path | str | None = None,
    extra_args: Sequence[str] = (),
) -> ProxyProcess:
    """Start ``litellm --config ...`` in its own process group and return without waiting."""
    key = master_key or generate_master_key()
    port = port or free_port(host)
    log_p = Path(log_path) if log_path else None
    proc = spawn_group(
        litellm_command(config, host=host, port=port, extra=extra_args),
        env=proxy_env(key, env),
        cwd=cwd,
        log_path=log_p,
    )
    return ProxyProcess(proc, host, port, key, Path(config), log_p)


def start_proxy(config: Path | str, *, timeout: float = 120.0, **kw: Any) -> ProxyProcess:
    p = launch_proxy(config, **kw)
    try:
        return p.wait_ready(timeout)
    except BaseException:
        p.stop()
        raise


def start_upstream_process(
    *,
    reply: str = "OK.",
    kind: str = "auto",
    log_path: Path | str | None = None,
    env: dict[str, str] | None = None,
    number_replies: bool = False,
) -> tuple[subprocess.Popen, int]:
    """The local OpenAI-compatible upstream in its own process (so it shares no GIL with a client).

    ``kind``: ``"aiohttp"`` (one event loop; best under load), ``"stdlib"`` or ``"auto"`` (aiohttp when
    its module is available). ``number_replies``: each reply starts with its number, so no two are alike.
    Returns the process (own process group) and its port.
    """
    import importlib.util

    if kind == "auto":
        kind = "aiohttp" if importlib.util.find_spec("metaclaw_plugin.devtools.aioupstream") else "stdlib"
    module = "metaclaw_plugin.devtools.aioupstream" if kind == "aiohttp" else "metaclaw_plugin.devtools.upstream"
    argv = [sys.executable, "-m", module, "--port", "0", "--reply", reply]
    if number_replies:
        argv.append("--number-replies")
    proc = spawn_group(
        argv,
        env=dict(os.environ if env is None else env),
        log_path=Path(log_path) if log_path else None,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode().strip()
    if not line.startswith("PORT "):
        proc.kill()
        raise RuntimeError(f"upstream did not start: {line!r}")
    return proc, int(line.split()[1])


# Measuring -------------------------------------------------------------------------------------------
@dataclass
class Run:
    latencies_ms: list[float]
    wall_s: float
    errors: int
    concurrency: int
    first_error: str | None = None


BodyFn = Callable[[int], dict[str, Any]]
HeadersFn = Callable[[int], dict[str, str]]


async def measure_async(
    url: str,
    *,
    n: int,
    concurrency: int,
    body: BodyFn,
    headers: HeadersFn | None = None,
    timeout: float = 60.0,
    session: Any = None,
) -> Run:
    """Send ``n`` POSTs to ``url`` (a full ``.../chat/completions`` URL), ``concurrency`` at a time.

    Each latency runs from sending the request to reading the last byte (SSE included). Bodies are
    serialised before the clock starts. Needs ``aiohttp``.
    """
    import aiohttp

    own = session is None
    if own:
        conn = aiohttp.TCPConnector(limit=concurrency, force_close=False, enable_cleanup_closed=True)
        session = aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=timeout))
    lat: list[float] = []
    errors = 0
    first_error: str | None = None
    next_i = 0

    async def worker() -> None:
        nonlocal next_i, errors, first_error
        while True:
            i = next_i
            if i >= n:
                return
            next_i += 1
            data = json.dumps(body(i)).encode()
            hdrs = {"Content-Type": "application/json", **(headers(i) if headers else {})}
            t0 = time.perf_counter()
            try:
                async with session.post(url, data=data, headers=hdrs) as r:
                    payload = await r.read()
                    ok = r.status == 200
            except Exception as e:
                ok, payload = False, repr(e).encode()
            dt = (time.perf_counter() - t0) * 1000.0
            if ok:
                lat.append(dt)
            else:
                errors += 1
                if first_error is None:
                    first_error = payload[:300].decode("utf-8", "replace")

    t_start = time.perf_counter()
    try:
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    finally:
        if own:
            await session.close()
    return Run(lat, time.perf_counter() - t_start, errors, concurrency, first_error)


def measure(url: str, **kw: Any) -> Run:
    return asyncio.run(measure_async(url, **kw))


def process_cpu_seconds(pid: int, thread: int | None = None) -> float | None:
    """User + system CPU time of a process (all its threads) so far, from /proc; None elsewhere.
    With ``thread``, that thread's only (``thread=pid``: the main thread, a proxy's event loop).

    CPU time per request is the steadiest measure of a proxy's cost on a shared machine: other
    load stretches wall-clock latency, much less the CPU a request consumes."""
    try:
        if thread is not None:  # nanoseconds on the CPU (the tick counts in stat are 10 ms coarse)
            with open(f"/proc/{pid}/task/{thread}/schedstat", "rb") as f:
                return int(f.read().split()[0]) / 1e9
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks
    except (OSError, ValueError, IndexError):
        return None


def summarize(latencies_ms: Sequence[float], wall_s: float, errors: int = 0) -> dict[str, Any]:
    n = len(latencies_ms)
    return {
        "n": n,
        "errors": errors,
        "p50_ms": _r(percentile(latencies_ms, 50)),
        "p99_ms": _r(percentile(latencies_ms, 99)),
        "mean_ms": _r(sum(latencies_ms) / n if n else None),
        "rps": _r(n / wall_s if wall_s > 0 else None, 1),
    }


def _r(x: float | None, nd: int = 3) -> float | None:
    return None if x is None else round(x, nd)
