"""The plugin's own CPU inside a LiteLLM proxy, next to the whole proxy's, both measured in the proxy process.

``bench overhead`` loads ``metaclaw_bench.cpumeter.callback`` into the proxy instead of
``metaclaw_litellm.callback``: the same callback (a subclass, configured the same way), with a meter:

- *plugin CPU* = the thread CPU time (``time.thread_time``) spent inside the callback's hooks and in the
  end-of-stream capture (which LiteLLM calls with the assembled response), plus the CPU time of the
  plugin's own threads (``metaclaw-*``: worker, store writer, learning), read from
  ``/proc/self/task/<tid>/schedstat``. The hooks never suspend inside (no ``await`` in the adapter's
  code), so a hook's thread time is its own.
- *host CPU* = ``time.process_time()``: every thread of the proxy process.

What the host does because of the callback (beyond the callback's own code: LiteLLM's hook dispatch, work a
hook's presence switches on) shows only in the proxy's loop CPU against a no-op callback, which ``bench
overhead`` reports next to this. The meter adds no hook of its own: every one it times is the adapter's.

Every 0.1 s a snapshot of the running totals is written (atomically) to ``$METACLAW_CPUMETER_FILE``;
the benchmark reads one before and one after a batch. The meter's own cost is counted in the host's CPU.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from metaclaw_litellm import MetaClawCallback

HOOKS = (
    "async_pre_call_hook",
    "async_post_call_success_hook",
    "async_post_call_failure_hook",
    "async_pre_call_deployment_hook",
    "async_post_call_success_deployment_hook",
    "async_log_success_event",
    "async_log_failure_event",
    "log_success_event",
    "log_failure_event",
)
INTERVAL = 0.1


class _Totals:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hooks = 0.0
        self.calls = 0
        self.threads: dict[int, float] = {}
        self.names: dict[int, str] = {}

    def add(self, seconds: float) -> None:
        with self.lock:
            self.hooks += max(0.0, seconds)
            self.calls += 1

    def snapshot(self) -> dict[str, Any]:
        for t in threading.enumerate():
            if t.name.startswith("metaclaw") and t.native_id is not None:
                cpu = _thread_cpu(t.native_id)
                if cpu is not None:
                    self.threads[t.native_id] = max(cpu, self.threads.get(t.native_id, 0.0))
                    self.names[t.native_id] = t.name
        with self.lock:
            return {
                "t": time.time(),
                "process_cpu_s": time.process_time(),
                "hooks_cpu_s": self.hooks,
                "hook_calls": self.calls,
                "threads_cpu_s": sum(self.threads.values()),
                "threads": len(self.threads),
                "threads_cpu_s_by_name": _by_name(self.threads, self.names),
            }


def _by_name(cpu: dict[int, float], names: dict[int, str]) -> dict[str, float]:
    """CPU seconds per thread name (the worker, the store writer, the memory learner, ...): where the threads' share goes."""
    out: dict[str, float] = {}
    for tid, s in cpu.items():
        out[names.get(tid, "?")] = out.get(names.get(tid, "?"), 0.0) + s
    return out


def _thread_cpu(tid: int) -> float | None:
    try:
        with open(f"/proc/self/task/{tid}/schedstat", "rb") as f:
            return int(f.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


TOTALS = _Totals()


def _timed_async(name: str) -> Callable[..., Any]:
    base = getattr(MetaClawCallback, name)

    async def hook(self: Any, *args: Any, **kw: Any) -> Any:
        t0 = time.thread_time()
        try:
            return await base(self, *args, **kw)
        finally:
            TOTALS.add(time.thread_time() - t0)

    hook.__name__ = name
    return hook


def _timed_sync(name: str) -> Callable[..., Any]:
    base = getattr(MetaClawCallback, name)

    def hook(self: Any, *args: Any, **kw: Any) -> Any:
        t0 = time.thread_time()
        try:
            return base(self, *args, **kw)
        finally:
            TOTALS.add(time.thread_time() - t0)

    hook.__name__ = name
    return hook


# LiteLLM looks hooks up on the leaf class (``name in vars(cls)``): every hook is defined on this one.
_ns: dict[str, Any] = {"__doc__": "MetaClawCallback with a CPU meter around every hook.", "__module__": __name__}
for _name in HOOKS:
    _ns[_name] = (_timed_sync if _name.startswith("log_") else _timed_async)(_name)
_ns["stream_ended"] = _timed_sync("stream_ended")
MeteredCallback = type("MeteredCallback", (MetaClawCallback,), _ns)


def _writer(path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    while True:
        try:
            tmp.write_text(json.dumps(TOTALS.snapshot()), "utf-8")
            os.replace(tmp, path)
        except OSError:
            pass
        time.sleep(INTERVAL)


def __getattr__(name: str) -> Any:
    """``callback``: made on first access (in the proxy only), like ``metaclaw_litellm.callback``."""
    if name != "callback":
        raise AttributeError(name)
    cb = MeteredCallback(start=True)
    globals()["callback"] = cb
    out = os.environ.get("METACLAW_CPUMETER_FILE")
    if out:
        threading.Thread(target=_writer, args=(Path(out),), name="cpumeter", daemon=True).start()
    return cb
