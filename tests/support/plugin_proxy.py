"""``metaclaw-plugin proxy`` started as a user starts it (the CLI, a subprocess), for the client tests."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from metaclaw_plugin.devtools.proxyrun import ProxyProcess
from metaclaw_plugin.infra.procs import free_port

READY_TIMEOUT = 240.0
CLI = Path(sys.executable).with_name("metaclaw-plugin")


@contextmanager
def cli_proxy(home: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[ProxyProcess]:
    """Run ``metaclaw-plugin proxy ARGS`` on a free port with ``home`` as METACLAW_HOME; yields the proxy with the
    master key it printed. Stopped (its process group) on exit."""
    home.mkdir(parents=True, exist_ok=True, mode=0o700)
    e = {k: v for k, v in os.environ.items() if k not in ("METACLAW_CONFIG", "LITELLM_MASTER_KEY")}
    e.update(METACLAW_HOME=str(home), PYTHONUNBUFFERED="1", **(env or {}))
    port = free_port()
    log = home.parent / f"{home.name}-proxy.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(CLI), "proxy", *args, "--port", str(port), "--num-retries", "0"],
            env=e,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    proxy = ProxyProcess(proc, "127.0.0.1", port, "", home / "litellm-proxy.yaml", log)
    try:
        proxy.wait_ready(READY_TIMEOUT)
        m = re.search(r"master key \(shown once, not stored\): (\S+)", log.read_text("utf-8", "replace"))
        assert m, proxy.log_tail()
        proxy.master_key = m.group(1)
        yield proxy
    finally:
        proxy.stop()
