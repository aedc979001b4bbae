"""``metaclaw-plugin bench overhead``: what the plugin adds to a LiteLLM proxy, and what the reference costs.

One run, one local upstream (the aiohttp stub from :mod:`metaclaw_plugin.devtools.aioupstream`,
JSON and SSE, in its own process), four targets in front of it:

* ``direct``: the upstream itself (the floor: client + stub + loopback);
* ``bare``: a LiteLLM proxy with no callbacks;
* ``noop`` (full runs): the same proxy with a callback that does nothing, which separates LiteLLM's own
  callback machinery from the plugin's work;
* ``plugin``: the same proxy config plus ``litellm_settings.callbacks: ["metaclaw_litellm.callback"]``;
* ``reference``: the reference MetaClaw proxy (``aiming-metaclaw==0.4.1.2`` from PyPI, in its own venv
  under the bench cache), ``skills_only`` mode, template retrieval.

The plugin and the reference get copies of the same 1k-skill library (the starter skills plus
synthetic ones, see :mod:`metaclaw_bench.synth`). Every request to every target carries
``X-Turn-Type: main`` and an ``X-Session-Id`` (one session per client per round), since the
reference only injects on main turns. Before measuring, the upstream's ``/stats`` is used to check
that the plugin and the reference really injected skills into what they forwarded.

Response modes: ``json`` and ``sse`` against an upstream that answers at once, and ``sse-paced``, where
the upstream streams like a model (``POST /pace`` on it: 50 content chunks 20 ms apart by default), so
that the time to the first byte (what a user waits for) shows apart from the total time. The plugin
target runs the callback with a CPU meter (:mod:`metaclaw_bench.cpumeter`): the plugin's own
CPU per request and the proxy process's, both measured inside the proxy, and their ratio (the share).

Rounds are interleaved: in each round every concurrency level runs every target in turn, and the
order rotates from round to round, so slow drift of the machine (thermal, page cache, another
process) spreads over all targets instead of landing on one. Latency is per request, client side,
full response (for SSE also the time to the first byte). Percentiles pool all rounds; throughput
is requests over the batch's wall time, the median over rounds. Every batch is also kept by round, and the one
summary line (:mod:`.overhead_summary`) pairs each round's batches to give issue 44's figures with their spread.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import time
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from metaclaw_plugin.devtools.upstream import PACED_CHUNKS, PACED_DELAY

from .common import (
    Child,
    cache_dir,
    child_env,
    free_port,
    median,
    percentile,
    provenance,
    ratio,
    rmtree,
    rnd,
    spawn,
    start_upstream,
)
from .overhead_summary import summarize
from .reference import REFERENCE_PACKAGES, install_reference, reference_python, reference_venv, reference_version

TARGETS = ("direct", "bare", "noop", "plugin", "reference")
CONCURRENCY = (1, 32, 64)
QUICK_CONCURRENCY = (1, 32)
MODES = ("json", "sse", "sse-paced")
PLUGIN_CALLBACK = "metaclaw_bench.cpumeter.callback"  # metaclaw_litellm.callback with a CPU meter
NOOP_CALLBACK = '''"""A callback that does nothing: what LiteLLM's callback machinery costs by itself."""
from litellm.integrations.custom_logger import CustomLogger


class NoopCallback(CustomLogger):
    async def async_pre_call_hook(self, user_api_key_dict, cache, data, call_type):
        return data

    async def async_post_call_success_hook(self, data, user_api_key_dict, response):
        return response

    async def async_log_success_event(self, kwargs, response_obj, start_time, end_time):
        return None


callback = NoopCallback()
'''
MODEL = "stub-model"
REPLY = (
    "Done. I read the file, checked the schema, wrote the new entry with an ISO 8601 timestamp and "
    "kept a backup next to it. Nothing else changed; tell me if you want the old value restored. "
) * 2  # ~380 characters: a short answer, about 25 SSE chunks


# Starting the targets -----------------------------------------------------------------------------
def plugin_callback_status() -> str | None:
    """None when the LiteLLM adapter is installed here, else why not. (Found, not imported: importing it
    imports LiteLLM, seconds of start-up this process does not need. The warm-up checks that it injects.)"""
    import importlib.util

    try:
        spec = importlib.util.find_spec("metaclaw_litellm")
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "metaclaw_litellm is not installed; the LiteLLM adapter has not landed in this tree"
    return None


def _get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    req = urllib.request.Request(url)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, b""
    except Exception:
        return 0, b""


def _wait_http(child: Child, url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not child.alive():
            raise RuntimeError(
                f"{child.name} exited during start-up (code {child.proc.returncode}):\n{child.log_tail()}"
            )
        status, _ = _get(url)
        if status == 200:
            return
        time.sleep(0.2)
    raise RuntimeError(f"{child.name} was not ready after {timeout:.0f} s:\n{child.log_tail()}")


def start_litellm(
    name: str,
    scratch: Path,
    upstream_port: int,
    *,
    master_key: str,
    callbacks: Sequence[str] = (),
    env_extra: dict[str, str] | None = None,
) -> Child:
    """A LiteLLM proxy, started with the project's own helpers (:mod:`metaclaw_plugin.devtools.proxyrun`)."""
    from metaclaw_plugin.devtools.proxyrun import ModelSpec, launch_proxy, proxy_config, write_config

    d = scratch / name
    d.mkdir(parents=True, exist_ok=True)
    spec = ModelSpec(
        model=f"openai/{MODEL}", name=MODEL, api_base=f"http://127.0.0.1:{upstream_port}/v1", api_key="sk-stub"
    )
    cfg = write_config(d / "config.yaml", proxy_config([spec], callbacks=list(callbacks)))
    env = child_env(
        dict(os.environ, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", **(env_extra or {}))
    )
    pp = launch_proxy(cfg, master_key=master_key, env=env, log_path=d / "proxy.log", cwd=d)
    child = Child(name, pp.proc, pp.log_path, pp.port)
    child.info["health"] = f"http://127.0.0.1:{pp.port}/health/liveliness"
    return child


def start_reference(scratch: Path, upstream_port: int, lib: Path) -> Child:
    py = reference_python()
    if py is None:
        raise RuntimeError("the reference proxy is not installed")
    home = scratch / "ref_home"
    mc = home / ".metaclaw"
    skills = mc / "skills"
    mc.mkdir(parents=True, exist_ok=True)
    shutil.copytree(lib, skills, ignore=shutil.ignore_patterns(".metaclaw"), dirs_exist_ok=True)
    port = free_port()
    cfg = {
        "mode": "skills_only",
        "llm": {
            "provider": "custom",
            "auth_method": "api_key",
            "model_id": MODEL,
            "api_base": f"http://127.0.0.1:{upstream_port}/v1",
            "api_key": "sk-stub",
        },
        "proxy": {"port": port, "host": "127.0.0.1"},
        "skills": {
            "enabled": True,
            "dir": str(skills),
            "retrieval_mode": "template",
            "top_k": 6,
            "task_specific_top_k": 10,
            "auto_evolve": False,
        },
        "memory": {"enabled": False},
    }
    (mc / "config.yaml").write_text(json.dumps(cfg, indent=2), "utf-8")
    cwd = scratch / "ref_cwd"  # it writes records/ relative to its working directory
    cwd.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("METACLAW_", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        NO_PROXY="127.0.0.1,localhost",
        PATH=f"{py.parent}:{env.get('PATH', '')}",
    )
    child = spawn(
        "reference",
        [str(py.parent / "metaclaw"), "start", "--mode", "skills_only"],
        env=env,
        cwd=cwd,
        log_path=scratch / "reference.log",
    )
    child.port = port
    child.info["health"] = f"http://127.0.0.1:{port}/healthz"
    child.info["cwd"] = str(cwd)
    return child


def group_rss_mb(pid: int) -> float | None:
    """Resident memory of a process group (the target and anything it spawned), MiB."""
    total = 0
    found = False
    page = os.sysconf("SC_PAGE_SIZE")
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            stat = (p / "stat").read_text()
            pgrp = int(stat.rsplit(")", 1)[1].split()[2])
            if pgrp != pid:
                continue
            total += int((p / "statm").read_text().split()[1]) * page
            found = True
        except (OSError, ValueError, IndexError):
            continue
    return round(total / 1024 / 1024, 1) if found else None


# Load generation ----------------------------------------------------------------------------------
def payloads(texts: Sequence[str], stream: bool) -> list[bytes]:
    """One request body per user text. Every measured request carries a text of its own: a repeated
    one would be answered from the plugin's caches (the turn's block, the already-redacted message)
    and make it look cheaper than it is."""
    from .retrieval import request_messages

    out = []
    for text in texts:
        body: dict[str, Any] = {"model": MODEL, "messages": request_messages(text), "max_tokens": 128}
        if stream:
            body["stream"] = True
        out.append(json.dumps(body).encode())
    return out


async def _batch(
    url: str,
    bodies: list[bytes],
    concurrency: int,
    total: int,
    session_prefix: str,
    auth: str,
    stream: bool,
    timeout: float = 120.0,
) -> dict[str, Any]:
    import aiohttp

    lat: list[float] = []
    ttfb: list[float] = []
    errors: list[str] = []
    counter = iter(range(total))
    conn = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency, ttl_dns_cache=None)
    tmo = aiohttp.ClientTimeout(total=timeout)

    async def client(cid: int, session: aiohttp.ClientSession) -> None:
        headers = {
            "Content-Type": "application/json",
            "Authorization": f"Bearer {auth}",
            "X-Turn-Type": "main",
            "X-Session-Id": f"{session_prefix}-c{cid}",
        }
        for i in counter:
            body = bodies[i % len(bodies)]
            t0 = time.perf_counter()
            first = None
            try:
                async with session.post(url, data=body, headers=headers) as resp:
                    if stream:
                        async for _chunk in resp.content.iter_any():
                            if first is None:
                                first = time.perf_counter()
                    else:
                        await resp.read()
                    if resp.status != 200:
                        errors.append(f"HTTP {resp.status}")
                        continue
            except Exception as e:
                errors.append(f"{type(e).__name__}: {e}"[:200])
                continue
            t1 = time.perf_counter()
            lat.append((t1 - t0) * 1000.0)
            if first is not None:
                ttfb.append((first - t0) * 1000.0)

    async with aiohttp.ClientSession(connector=conn, timeout=tmo) as session:
        t0 = time.perf_counter()
        await asyncio.gather(*(client(c, session) for c in range(concurrency)))
        wall = time.perf_counter() - t0
    return {"lat": lat, "ttfb": ttfb, "errors": errors, "wall_s": wall}


def run_batch(*args: Any, **kw: Any) -> dict[str, Any]:
    return asyncio.run(_batch(*args, **kw))


def _retrieval_label(retrieval: str) -> str:
    """What the plugin target runs: ``default`` says what the default resolves to here (the proxy runs in the
    same environment)."""
    if retrieval != "default":
        return retrieval
    from metaclaw_plugin.config import RetrievalSettings

    r = RetrievalSettings()
    model = f", {r.embedding_model}" if r.mode != "keyword" else ""
    return f"default ({r.mode}{model}: {r.mode_reason})"


# Driver -------------------------------------------------------------------------------------------
def run(
    *,
    quick: bool = False,
    rounds: int | None = None,
    concurrency: Sequence[int] | None = None,
    skills: int = 1000,
    modes: Sequence[str] | None = None,
    reference: str = "auto",
    noop: bool | None = None,
    requests_c1: int | None = None,
    requests_per_client: int | None = None,
    paced_requests: int | None = None,
    chunks: int = PACED_CHUNKS,
    chunk_delay_ms: float = PACED_DELAY * 1000,
    retrieval: str = "default",
    keep_scratch: bool = False,
    log: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Run the benchmark and return the result document.

    ``reference``: ``auto`` (use it when installed), ``on`` (fail without it), ``install`` (install it
    first when missing), ``off``.
    """
    from .synth import write_library

    t_run = time.perf_counter()
    _log = log

    def timed(msg: str) -> Any:  # progress lines carry the elapsed time
        return _log(f"[{time.perf_counter() - t_run:5.1f}s] {msg}")

    log = timed

    import importlib.util

    if importlib.util.find_spec("aiohttp") is None:
        raise RuntimeError(
            "bench overhead needs aiohttp (it comes with the litellm extra: pip install 'metaclaw-plugin[litellm]')"
        )
    rounds = rounds or (2 if quick else 5)
    concurrency = list(concurrency or (QUICK_CONCURRENCY if quick else CONCURRENCY))
    modes = list(modes or (["json"] if quick else list(MODES)))
    n1 = requests_c1 or (10 if quick else 100)
    per_client = requests_per_client or (1 if quick else 10)
    n_paced = paced_requests or (3 if quick else 10)  # a paced request takes about a second
    argv = ["--quick"] if quick else []
    result: dict[str, Any] = {
        **provenance("overhead", argv),
        "quick": quick,
        "rounds": rounds,
        "concurrency": list(concurrency),
        "modes": modes,
        "skills": skills,
        "requests_per_batch": {str(c): (n1 if c == 1 else c * per_client) for c in concurrency},
        "requests_per_paced_batch": {str(c): (n_paced if c == 1 else c) for c in concurrency},
        "paced_upstream": {"chunks": chunks, "delay_ms": chunk_delay_ms},
        "plugin_retrieval": _retrieval_label(retrieval),
        "upstream": "metaclaw_plugin.devtools.aioupstream (aiohttp, own process), reply ~380 chars, numbered",
        "client": "aiohttp, keep-alive pool sized to the concurrency, in the bench process",
        "targets": {},
        "notes": [],
    }
    # Which targets can run ---------------------------------------------------------------------
    avail: dict[str, str | None] = {"direct": None, "bare": None}
    with_noop = not quick if noop is None else noop
    if importlib.util.find_spec("litellm") is None:
        avail["bare"] = "litellm is not installed; pip install 'metaclaw-plugin[litellm]'"
    avail["plugin"] = avail["bare"] or plugin_callback_status()
    avail["noop"] = avail["bare"] or (None if with_noop else "not requested (full runs include it; --noop)")
    if reference == "off":
        avail["reference"] = "not requested (--no-reference)"
    else:
        if reference_python() is None and reference == "install":
            try:
                install_reference(log)
            except Exception as e:
                avail["reference"] = f"install failed: {e}"
        if "reference" not in avail:
            if reference_python() is None:
                avail["reference"] = (
                    f"not installed: run `metaclaw-plugin bench overhead --install-reference` "
                    f"(installs {' '.join(REFERENCE_PACKAGES)} into {reference_venv()})"
                )
                if reference == "on":
                    raise RuntimeError(avail["reference"])
            else:
                avail["reference"] = None
    for t in TARGETS:
        result["targets"][t] = {"available": avail[t] is None, **({"note": avail[t]} if avail[t] else {})}
        if avail[t]:
            result["notes"].append(f"{t} skipped: {avail[t]}")
    if avail["reference"] is None:
        result["targets"]["reference"]["version"] = reference_version()

    scratch = Path(tempfile.mkdtemp(prefix="overhead-", dir=_scratch_root()))
    children: dict[str, Child] = {}
    upstream: Child | None = None
    try:
        lib = scratch / "library"
        info = write_library(lib, skills)
        result["library"] = info
        log(f"library of {skills} skills written")
        upstream = start_upstream(scratch, reply=REPLY, number_replies=True)
        uport = upstream.port
        assert uport is not None
        from metaclaw_plugin.devtools.proxyrun import generate_master_key

        master_key = generate_master_key()
        urls: dict[str, str] = {"direct": f"http://127.0.0.1:{uport}/v1/chat/completions"}
        t_start = time.perf_counter()
        if avail["bare"] is None:
            children["bare"] = start_litellm("bare", scratch, uport, master_key=master_key)
        if avail["noop"] is None:
            (scratch / "noop").mkdir(parents=True, exist_ok=True)
            (scratch / "noop" / "noop_callback.py").write_text(NOOP_CALLBACK, "utf-8")  # found next to the config
            children["noop"] = start_litellm(
                "noop", scratch, uport, master_key=master_key, callbacks=["noop_callback.callback"]
            )
        if avail["plugin"] is None:
            home = scratch / "plugin_home"
            home.mkdir()
            plib = scratch / "plugin_library"
            shutil.copytree(lib, plib)
            # "default": the retrieval settings `init` writes (mode auto, resolved in the proxy as for a user)
            cfg: dict[str, Any] = {"mode": "skills_only", "skills_dir": str(plib)}
            if retrieval != "default":
                cfg["retrieval"] = {"mode": retrieval}
            (home / "config.yaml").write_text(json.dumps(cfg), "utf-8")
            meter = scratch / "plugin_cpu.json"
            env = {
                "METACLAW_HOME": str(home),
                "METACLAW_CONFIG": str(home / "config.yaml"),
                "METACLAW_CPUMETER_FILE": str(meter),
            }
            children["plugin"] = start_litellm(
                "plugin", scratch, uport, master_key=master_key, callbacks=[PLUGIN_CALLBACK], env_extra=env
            )
        if avail["reference"] is None:
            children["reference"] = start_reference(scratch, uport, lib)
        for name, ch in list(children.items()):
            try:
                _wait_http(ch, ch.info["health"], timeout=120)
                urls[name] = f"http://127.0.0.1:{ch.port}/v1/chat/completions"
                result["targets"][name]["ready_s"] = round(time.perf_counter() - t_start, 1)
            except RuntimeError as e:
                log(f"{name} did not start: {e}")
                result["targets"][name].update(available=False, note=f"did not start: {str(e)[-600:]}")
                result["notes"].append(f"{name} failed to start")
                ch.stop()
                del children[name]
        active = [t for t in TARGETS if t in urls]
        log(f"targets: {', '.join(active)}; upstream on port {uport}")

        # Warm-up and the injection check ------------------------------------------------------
        from .retrieval import workload

        per_batch = {c: n1 if c == 1 else c * per_client for c in concurrency}
        per_paced = {c: n_paced if c == 1 else c for c in concurrency}
        texts = workload(16 + rounds * len(modes) * sum(per_batch.values()), seed=23)
        warm_bodies = payloads(texts[:16], stream=False)
        seq = 16  # the next unused text: each batch gets new ones, the same for every target
        for t in active:
            before = _stats(uport)
            r = run_batch(urls[t], warm_bodies, 4, 8 if quick else 24, f"warm-{t}", master_key, False)
            after = _stats(uport)
            n = after["requests"] - before["requests"]
            inj = {k: after["injected"][k] - before["injected"][k] for k in after["injected"]}
            result["targets"][t]["warmup_errors"] = len(r["errors"])
            if r["errors"]:
                result["targets"][t]["warmup_error_sample"] = r["errors"][:3]
            marker = {"plugin": "metaclaw", "reference": "reference"}.get(t)
            if marker:
                result["targets"][t]["injected_share"] = round(inj[marker] / n, 3) if n else 0.0
            log(
                f"  warm-up {t}: {len(r['lat'])} ok, {len(r['errors'])} errors"
                + (f", skills injected into {inj[marker]}/{n} forwarded requests" if marker else "")
            )

        # Measurement ------------------------------------------------------------------------------
        samples: dict[tuple[str, int, str], dict[str, Any]] = {}
        meter = scratch / "plugin_cpu.json"
        for rnd_i in range(rounds):
            for mode in modes:
                _pace(uport, chunks if mode == "sse-paced" else 0, chunk_delay_ms)
                for c in concurrency:
                    order = active[rnd_i % len(active) :] + active[: rnd_i % len(active)]
                    total = (per_paced if mode == "sse-paced" else per_batch)[c]
                    stream = mode != "json"
                    batch = payloads(texts[seq : seq + total], stream=stream)
                    seq += total
                    for t in order:
                        pid = children[t].proc.pid if t in children else None
                        cpu0 = _cpu(pid)
                        m0 = read_meter(meter, time.time()) if t == "plugin" else None
                        up0 = _stats(uport)["requests"]
                        r = run_batch(urls[t], batch, c, total, f"{t}-r{rnd_i}", master_key, stream)
                        up1 = _stats(uport)["requests"]
                        cpu1 = _cpu(pid)
                        m1 = read_meter(meter, time.time()) if t == "plugin" else None
                        s = samples.setdefault(
                            (mode, c, t),
                            {
                                "lat": [],
                                "ttfb": [],
                                "rps": [],
                                "p50": [],
                                "errors": [],
                                "cpu": [],
                                "loop_cpu": [],
                                "plugin_cpu": [],
                                "host_cpu": [],
                                "threads": [],
                                "cpu_rounds": [],
                                "by_round": {},
                            },
                        )
                        # this batch alone, kept by round so that the summary pairs it with the other targets'
                        # batches of the same round (same requests, back to back)
                        one: dict[str, Any] = {
                            "n": len(r["lat"]),
                            "errors": len(r["errors"]),
                            "upstream_extra": up1 - up0 - len(r["lat"]),
                        }
                        if cpu0 and cpu1 and r["lat"]:
                            s["cpu"].append((cpu1[0] - cpu0[0]) * 1000.0 / len(r["lat"]))
                            if t != "reference":  # its server loop is not its main thread
                                s["loop_cpu"].append((cpu1[1] - cpu0[1]) * 1000.0 / len(r["lat"]))
                                s["cpu_rounds"].append(rnd_i)
                        if m0 and m1 and r["lat"]:
                            own = (m1["hooks_cpu_s"] - m0["hooks_cpu_s"]) + (m1["threads_cpu_s"] - m0["threads_cpu_s"])
                            s["plugin_cpu"].append(own * 1000.0 / len(r["lat"]))
                            one["plugin_cpu_ms"] = rnd(s["plugin_cpu"][-1])
                            s["host_cpu"].append((m1["process_cpu_s"] - m0["process_cpu_s"]) * 1000.0 / len(r["lat"]))
                            b0, b1 = m0.get("threads_cpu_s_by_name", {}), m1.get("threads_cpu_s_by_name", {})
                            s["threads"].append({n: (b1[n] - b0.get(n, 0.0)) * 1000.0 / len(r["lat"]) for n in b1})
                        s["lat"] += r["lat"]
                        s["ttfb"] += r["ttfb"]
                        s["errors"] += r["errors"]
                        if r["lat"]:
                            s["rps"].append(len(r["lat"]) / r["wall_s"])
                            s["p50"].append(percentile(r["lat"], 50) or 0.0)
                            one.update(rps=rnd(s["rps"][-1], 2), p50_ms=rnd(s["p50"][-1]))
                            if r["ttfb"]:
                                one["ttfb_p50_ms"] = rnd(percentile(r["ttfb"], 50))
                        s["by_round"][str(rnd_i)] = one
            log(f"round {rnd_i + 1}/{rounds} done")
        for t, ch in children.items():
            result["targets"][t]["rss_mb_after"] = group_rss_mb(ch.proc.pid)
        if "reference" in children:
            records = Path(children["reference"].info["cwd"])
            result["targets"]["reference"]["disk_written_kb"] = round(
                sum(f.stat().st_size for f in records.rglob("*") if f.is_file()) / 1024, 1
            )

        res: dict[str, Any] = {}
        for (mode, c, t), s in samples.items():
            res.setdefault(mode, {}).setdefault(str(c), {})[t] = {
                "n": len(s["lat"]),
                "errors": len(s["errors"]),
                "p50_ms": rnd(percentile(s["lat"], 50)),
                "p90_ms": rnd(percentile(s["lat"], 90)),
                "p99_ms": rnd(percentile(s["lat"], 99)),
                "mean_ms": rnd(sum(s["lat"]) / len(s["lat"])) if s["lat"] else None,
                "ttfb_p50_ms": rnd(percentile(s["ttfb"], 50)) if s["ttfb"] else None,
                "rps": rnd(median(s["rps"]), 1),
                "cpu_ms_per_request": rnd(median(s["cpu"])) if s["cpu"] else None,
                "loop_cpu_ms_per_request": rnd(median(s["loop_cpu"])) if s["loop_cpu"] else None,
                # by round, for pairing with the other targets' batches of the same round (a round may lack a reading)
                "round_cpu_ms": {str(i): rnd(x, 3) for i, x in zip(s["cpu_rounds"], s["cpu"])},
                "round_loop_cpu_ms": {str(i): rnd(x, 3) for i, x in zip(s["cpu_rounds"], s["loop_cpu"])},
                **(_plugin_cpu(s["plugin_cpu"], s["host_cpu"], s["threads"]) if s["plugin_cpu"] else {}),
                "round_p50s_ms": [rnd(x, 2) for x in s["p50"]],
                "rounds": s["by_round"],
                "upstream_extra": sum(b["upstream_extra"] for b in s["by_round"].values()),
                **({"error_sample": s["errors"][:3]} if s["errors"] else {}),
            }
        result["results"] = res
    finally:
        for ch in children.values():
            ch.stop()
        if upstream is not None:
            upstream.stop()
        if keep_scratch:
            result["scratch"] = str(scratch)
        else:
            rmtree(scratch)
    result["loadavg_1m_at_end"] = round(os.getloadavg()[0], 2)
    _headline(result)
    result["summary"] = summarize(result)
    log(result["summary"]["line"])
    return result


def _cpu(pid: int | None) -> tuple[float, float] | None:
    """(process, main thread) CPU seconds of a proxy. The main thread runs the proxy's event loop, which
    is what limits a single LiteLLM worker's throughput: the steadiest cost figure on a shared machine."""
    from metaclaw_plugin.devtools.proxyrun import process_cpu_seconds

    if pid is None:
        return None
    total, loop = process_cpu_seconds(pid), process_cpu_seconds(pid, thread=pid)
    return (total, loop) if total is not None and loop is not None else None


def _plugin_cpu(plugin: list[float], host: list[float], threads: list[dict[str, float]]) -> dict[str, Any]:
    """The plugin's CPU per request, the proxy process's, and the share: totals over the batches; and each of the
    plugin's threads' CPU per request (median over the batches), which says where the threads' part goes."""
    p, h = sum(plugin), sum(host)
    names = sorted({n for t in threads for n in t})
    return {
        "plugin_cpu_ms_per_request": rnd(median(plugin)),
        "host_cpu_ms_per_request": rnd(median(host)),
        "plugin_cpu_share": rnd(p / h, 4) if h > 0 else None,
        "plugin_threads_ms_per_request": {n: rnd(median([t.get(n, 0.0) for t in threads])) for n in names},
    }


def read_meter(path: Path, after: float, timeout: float = 5.0) -> dict[str, Any] | None:
    """The CPU meter's first snapshot written after ``after`` (a ``time.time()``), or None
    (see :mod:`metaclaw_bench.cpumeter`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            snap = json.loads(path.read_text("utf-8"))
            if snap["t"] > after:
                return dict(snap)
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.05)
    return None


def _pace(port: int, chunks: int, delay_ms: float) -> None:
    """Switch the upstream's streams between instant (0 chunks) and paced."""
    body = json.dumps({"chunks": chunks, "delay_ms": delay_ms}).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/pace", body, {"Content-Type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        if r.status != 200:
            raise RuntimeError(f"the upstream refused /pace: HTTP {r.status}")


def _stats(port: int) -> dict[str, Any]:
    status, body = _get(f"http://127.0.0.1:{port}/stats")
    if status != 200:
        return {"requests": 0, "injected": {"metaclaw": 0, "reference": 0}}
    return json.loads(body)


def _scratch_root() -> str:
    d = cache_dir() / "tmp"
    d.mkdir(parents=True, exist_ok=True)
    return str(d)


def _headline(result: dict[str, Any]) -> None:
    """The flat keys: JSON mode at concurrency 1 is the headline (added latency per request, no queueing);
    the same keys with ``_c32`` (and ``_sse``) suffixes cover the rest."""
    res = result.get("results", {})
    names = {t: t for t in TARGETS}
    for mode in MODES:
        for c in result.get("concurrency", []):
            suffix = ("" if c == 1 else f"_c{c}") + ("" if mode == "json" else "_" + mode.replace("-", "_"))
            point = res.get(mode, {}).get(str(c), {})
            if not point and mode != "json":
                continue
            for t, key in names.items():
                r = point.get(t) or {}
                if mode != "json":
                    result[f"{key}_ttfb_p50_ms{suffix}"] = r.get("ttfb_p50_ms")
                if t == "plugin":
                    result[f"plugin_cpu_ms{suffix}"] = r.get("plugin_cpu_ms_per_request")
                    result[f"plugin_host_cpu_ms{suffix}"] = r.get("host_cpu_ms_per_request")
                    result[f"plugin_cpu_share{suffix}"] = r.get("plugin_cpu_share")
                result[f"{key}_p50_ms{suffix}"] = r.get("p50_ms")
                result[f"{key}_p99_ms{suffix}"] = r.get("p99_ms")
                result[f"{key}_rps{suffix}"] = r.get("rps")
                result[f"{key}_loop_cpu_ms{suffix}"] = r.get("loop_cpu_ms_per_request")
            # What the plugin costs the host, counted as issue 28 counts it: the proxy loop's CPU with the plugin minus
            # with a no-op callback (LiteLLM's work because of the hooks included), over the plugin proxy's CPU.
            shares = _paired_shares(point.get("plugin") or {}, point.get("noop") or {})
            result[f"plugin_over_noop_loop_share{suffix}"] = rnd(median(shares), 4) if shares else None
            result[f"plugin_over_noop_loop_share_rounds{suffix}"] = [rnd(x, 4) for x in shares]
            result[f"ratio_plugin_noop_rps{suffix}"] = ratio(
                result.get(f"plugin_rps{suffix}"), result.get(f"noop_rps{suffix}")
            )
            for t in ("noop", "plugin", "reference"):
                result[f"ratio_{t}_bare_p50{suffix}"] = ratio(
                    result.get(f"{t}_p50_ms{suffix}"), result.get(f"bare_p50_ms{suffix}")
                )
                result[f"ratio_{t}_bare_p99{suffix}"] = ratio(
                    result.get(f"{t}_p99_ms{suffix}"), result.get(f"bare_p99_ms{suffix}")
                )
                result[f"ratio_{t}_bare_rps{suffix}"] = ratio(
                    result.get(f"{t}_rps{suffix}"), result.get(f"bare_rps{suffix}")
                )
                result[f"added_p50_ms_{t}{suffix}"] = _minus(
                    result.get(f"{t}_p50_ms{suffix}"), result.get(f"bare_p50_ms{suffix}")
                )
                # CPU-bound throughput: the bare proxy's event-loop CPU per request over this target's.
                result[f"ratio_{t}_bare_loop_throughput{suffix}"] = ratio(
                    result.get(f"bare_loop_cpu_ms{suffix}"), result.get(f"{t}_loop_cpu_ms{suffix}")
                )
    for k in (
        "bare_p50_ms",
        "plugin_p50_ms",
        "reference_p50_ms",
        "bare_p99_ms",
        "plugin_p99_ms",
        "reference_p99_ms",
        "ratio_plugin_bare_p50",
        "ratio_reference_bare_p50",
    ):
        result.setdefault(k, None)


def _paired_shares(plugin: dict[str, Any], noop: dict[str, Any]) -> list[float]:
    """Issue 28's share, round by round: each round ran the plugin's batch and the no-op's back to back, so their
    difference leaves out what drifts between rounds (the machine's other load); the median of these is the
    figure, their spread says how far one run can be trusted. A difference of two medians moved by ±15 points
    between runs of one build."""
    lp, ln, cp = (
        plugin.get("round_loop_cpu_ms") or {},
        noop.get("round_loop_cpu_ms") or {},
        plugin.get("round_cpu_ms") or {},
    )
    return [(lp[i] - ln[i]) / cp[i] for i in lp if i in ln and cp.get(i)]


def markdown(result: dict[str, Any]) -> str:
    res = result.get("results", {})
    levels = [str(c) for c in result.get("concurrency", [])]
    lines = [(result.get("summary") or summarize(result))["line"], ""]
    lines += [f"Plugin target's retrieval: {result.get('plugin_retrieval')}.", ""]
    pace = result.get("paced_upstream") or {}
    label_of = {
        "json": "stream: false",
        "sse": "stream: true, instant upstream; TTFB in brackets",
        "sse-paced": f"stream: true, upstream paced {pace.get('chunks')} chunks "
        f"{pace.get('delay_ms')} ms apart; TTFB in brackets",
    }
    for mode in result.get("modes", []):
        lines += [
            f"**{mode.upper()}** ({label_of.get(mode, mode)})",
            "",
            "| target | " + " | ".join(f"c={c} p50 | c={c} p99 | c={c} req/s" for c in levels) + " |",
            "|---|" + "---:|---:|---:|" * len(levels),
        ]
        for t in TARGETS:
            cells = []
            for c in levels:
                r = res.get(mode, {}).get(c, {}).get(t)
                if not r or r.get("p50_ms") is None:
                    cells += ["—", "—", "—"]
                    continue
                ttfb = f" [{r['ttfb_p50_ms']:.1f}]" if mode != "json" and r.get("ttfb_p50_ms") is not None else ""
                cells += [f"{r['p50_ms']:.1f} ms{ttfb}", f"{r['p99_ms']:.1f} ms", f"{r['rps']:.0f}"]
            if not any(res.get(m, {}).get(c, {}).get(t) for m in res for c in res[m]):
                continue
            label = LABELS[t] + (f" {result['targets']['reference'].get('version') or ''}" if t == "reference" else "")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += _first_byte_table(result)
    lines += _plugin_cpu_table(result)
    for mode in [m for m in MODES if m in res]:
        tail = "" if mode == "json" else "_" + mode.replace("-", "_")
        rows, cpu_rows = [], []
        for c, suffix in [(c, ("" if c == "1" else f"_c{c}") + tail) for c in levels]:
            for t in ("noop", "plugin", "reference"):
                if result.get(f"ratio_{t}_bare_p50{suffix}") is None:
                    continue
                rows.append(
                    f"| {t}/bare | c={c} | {_fmt(result.get(f'ratio_{t}_bare_p50{suffix}'))} | "
                    f"{_fmt(result.get(f'ratio_{t}_bare_p99{suffix}'))} | {_fmt(result.get(f'ratio_{t}_bare_rps{suffix}'))} |"
                )
            for t in ("bare", "noop", "plugin", "reference"):
                r = res[mode].get(c, {}).get(t) or {}
                if r.get("cpu_ms_per_request") is None:
                    continue
                loop = result.get(f"{t}_loop_cpu_ms{suffix}")
                added = _minus(result.get(f"{t}_p50_ms{suffix}"), result.get(f"bare_p50_ms{suffix}"))
                cpu_rows.append(
                    f"| {t} | c={c} | {'—' if t == 'bare' or added is None else f'{added:+.2f} ms'} | "
                    f"{r['cpu_ms_per_request']:.2f} ms | {'—' if loop is None else f'{loop:.2f} ms'} | "
                    f"{'—' if t == 'bare' else _fmt(result.get(f'ratio_{t}_bare_loop_throughput{suffix}'))} |"
                )
        label = mode.upper()
        lines += [f"| ratio ({label}) | concurrency | p50 | p99 | throughput |", "|---|---|---:|---:|---:|", *rows, ""]
        if cpu_rows:
            lines += [
                f"| target ({label}) | concurrency | p50 added vs bare | CPU per request "
                "| event-loop thread CPU per request | CPU-bound throughput vs bare |",
                "|---|---|---:|---:|---:|---:|",
                *cpu_rows,
                "",
            ]
    return "\n".join(lines).rstrip("\n")


LABELS = {
    "direct": "(a) upstream direct",
    "bare": "(b) bare LiteLLM proxy",
    "noop": "(b') LiteLLM + a no-op callback",
    "plugin": "(c) LiteLLM + metaclaw_litellm.callback",
    "reference": "(d) reference proxy",
}


def _first_byte_table(result: dict[str, Any]) -> list[str]:
    """Time to first byte and total time (p50) per target, instant and paced SSE side by side."""
    res = result.get("results", {})
    streams = [m for m in ("sse", "sse-paced") if m in res]
    if not streams:
        return []
    out = []
    for c in [str(x) for x in result.get("concurrency", [])]:
        head = " | ".join(f"{m} first byte | {m} total" for m in streams)
        rows = []
        for t in TARGETS:
            cells = []
            for m in streams:
                r = res[m].get(c, {}).get(t) or {}
                cells += [_ms(r.get("ttfb_p50_ms")), _ms(r.get("p50_ms"))]
            if any(x != "—" for x in cells):
                rows.append(f"| {LABELS[t]} | " + " | ".join(cells) + " |")
        if rows:
            out += [f"| target (c={c}, p50) | {head} |", "|---|" + "---:|---:|" * len(streams), *rows, ""]
    return out


def _plugin_cpu_table(result: dict[str, Any]) -> list[str]:
    """The plugin's own CPU per request and the proxy process's, both measured in the proxy."""
    rows = []
    for mode, points in result.get("results", {}).items():
        for c, targets in points.items():
            r = targets.get("plugin") or {}
            if r.get("plugin_cpu_share") is None:
                continue
            suffix = ("" if c == "1" else f"_c{c}") + ("" if mode == "json" else "_" + mode.replace("-", "_"))
            over = result.get(f"plugin_over_noop_loop_share{suffix}")
            spread = result.get(f"plugin_over_noop_loop_share_rounds{suffix}") or []
            over_text = "—" if over is None else f"{100 * over:.1f}%"
            if len(spread) > 1:
                over_text += f" ({100 * min(spread):.1f} to {100 * max(spread):.1f}%)"
            rps = result.get(f"ratio_plugin_noop_rps{suffix}")
            threads = ", ".join(f"{n} {v:.3f}" for n, v in (r.get("plugin_threads_ms_per_request") or {}).items())
            rows.append(
                f"| {mode} | c={c} | {r['plugin_cpu_ms_per_request']:.3f} ms | {r['host_cpu_ms_per_request']:.3f} ms "
                f"| {100 * r['plugin_cpu_share']:.1f}% | {over_text} "
                f"| {_fmt(rps)} | {threads or '—'} |"
            )
    if not rows:
        return []
    return [
        "| plugin CPU (in the proxy process) | concurrency | plugin's own CPU per request "
        "| proxy process CPU per request | plugin share | loop CPU over the no-op's, share of the proxy's "
        "(median of the rounds' paired differences; their range) "
        "| throughput vs no-op | the plugin's threads (ms per request) |",
        "|---|---|---:|---:|---:|---:|---:|---|",
        *rows,
        "",
    ]


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.1f} ms"


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else round(a - b, 3)


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f}×"
