"""``bench overhead``'s one summary line: what a user of the proxy feels, each figure with its spread over rounds.

Every figure is taken round by round from batches that ran back to back on the same requests (the plugin's batch
and the bare proxy's, or the no-op callback's), so drift of the machine between rounds drops out of it; the
figure is the median of the rounds' values and its spread is their range. With n rounds the range holds the
median of the distribution with probability 1 - 2**(1 - n) (94% for the default 5, 98% for 7), whatever the
distribution: a figure of at least 5 rounds is *met* or *missed* when the whole range is on one side of its target,
else *unsettled* (run more ``--rounds``); with fewer rounds it is always unsettled.

The figures and targets are issue 44's: added p50 over the bare proxy for JSON and to the first byte of a paced
stream (c=1, ≤ 2 ms), throughput against the no-op callback for JSON and paced SSE at every concurrency above 1
(≥ 0.95×), and the plugin's own CPU per request, all its threads (aim ≤ 0.6 ms).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .common import median, rnd

ADDED_MS_MAX = 2.0
THROUGHPUT_MIN = 0.95
CPU_AIM_MS = 0.6
MIN_ROUNDS = 5  # below this the range holds the median with less than 90% probability: no verdict


def _rounds(result: dict[str, Any], mode: str, c: int, target: str) -> dict[str, dict[str, Any]]:
    point = result.get("results", {}).get(mode, {}).get(str(c), {}).get(target) or {}
    return point.get("rounds") or {}


def _paired(
    result: dict[str, Any], mode: str, c: int, a: str, b: str, key: str, op: Callable[[float, float], float]
) -> list[float]:
    """``op(a's value, b's value)`` for every round where both targets have ``key`` and neither batch had a failed
    request (a batch's figures over the requests that got through say nothing of the target)."""
    ra, rb = _rounds(result, mode, c, a), _rounds(result, mode, c, b)
    out = []
    for i in sorted(ra, key=int):
        x, y = ra[i].get(key), (rb.get(i) or {}).get(key)
        if x is None or y is None or (op is _div and not y) or ra[i].get("errors") or rb[i].get("errors"):
            continue
        out.append(op(x, y))
    return out


def _minus(x: float, y: float) -> float:
    return x - y


def _div(x: float, y: float) -> float:
    return x / y


def _cpu_rounds(result: dict[str, Any], mode: str) -> list[float]:
    """The plugin's CPU per request in each round, over all of this mode's batches of that round."""
    by_round: dict[str, list[tuple[float, int]]] = {}
    for c in result.get("concurrency", []):
        for i, b in _rounds(result, mode, c, "plugin").items():
            if b.get("plugin_cpu_ms") is not None and b.get("n"):
                by_round.setdefault(i, []).append((b["plugin_cpu_ms"], b["n"]))
    return [
        sum(ms * n for ms, n in v) / sum(n for _, n in v)
        for _, v in sorted(by_round.items(), key=lambda kv: int(kv[0]))
    ]


def figure(values: list[float], *, at_most: float | None = None, at_least: float | None = None) -> dict[str, Any]:
    """The median of the rounds' values, their range, and the verdict against the target (met, missed, unsettled;
    None without values or target)."""
    if not values:
        return {"median": None, "min": None, "max": None, "rounds": [], "verdict": None}
    lo, hi = min(values), max(values)
    verdict = None
    if len(values) < MIN_ROUNDS:
        verdict = "unsettled" if at_most is not None or at_least is not None else None
    elif at_most is not None:
        verdict = "met" if hi <= at_most else "missed" if lo > at_most else "unsettled"
    elif at_least is not None:
        verdict = "met" if lo >= at_least else "missed" if hi < at_least else "unsettled"
    return {
        "median": rnd(median(values)),
        "min": rnd(lo),
        "max": rnd(hi),
        "rounds": [rnd(v) for v in values],
        "verdict": verdict,
        **({"target": f"<= {at_most}"} if at_most is not None else {}),
        **({"target": f">= {at_least}"} if at_least is not None else {}),
    }


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """The summary figures (``figures``, by name) and the one line that says them (``line``)."""
    figs: dict[str, dict[str, Any]] = {
        "added_p50_ms_json": figure(
            _paired(result, "json", 1, "plugin", "bare", "p50_ms", _minus), at_most=ADDED_MS_MAX
        ),
        "added_first_byte_ms_sse_paced": figure(
            _paired(result, "sse-paced", 1, "plugin", "bare", "ttfb_p50_ms", _minus), at_most=ADDED_MS_MAX
        ),
    }
    for c in [c for c in result.get("concurrency", []) if c > 1]:
        for mode in ("json", "sse-paced"):
            figs[f"throughput_vs_noop_{mode.replace('-', '_')}_c{c}"] = figure(
                _paired(result, mode, c, "plugin", "noop", "rps", _div), at_least=THROUGHPUT_MIN
            )
    for mode in ("json", "sse-paced"):
        figs[f"plugin_cpu_ms_{mode.replace('-', '_')}"] = figure(_cpu_rounds(result, mode), at_most=CPU_AIM_MS)
    figs = {k: v for k, v in figs.items() if v["rounds"]}
    extra = sum(
        ((result.get("results", {}).get(m, {}).get(str(c), {}).get("plugin") or {}).get("upstream_extra") or 0)
        for m in result.get("modes", [])
        for c in result.get("concurrency", [])
    )
    failed = {
        t: n
        for t in ("bare", "noop", "plugin")
        if (
            n := sum(
                ((result.get("results", {}).get(m, {}).get(str(c), {}).get(t) or {}).get("errors") or 0)
                for m in result.get("modes", [])
                for c in result.get("concurrency", [])
            )
        )
    }
    line = _line(figs, extra, result)
    if failed:  # the rounds with failures are left out of the figures; say so where nobody can miss it
        line += "; FAILED REQUESTS: " + ", ".join(f"{t} {n}" for t, n in failed.items()) + " (their rounds left out)"
    return {"figures": figs, "plugin_calls_through_the_proxy": extra, "failed_requests": failed, "line": line}


def _spread(f: dict[str, Any], num: str, unit: str) -> str:
    """``median unit [min..max]``, and the verdict unless met."""
    mark = {"missed": " MISSED", "unsettled": " unsettled"}.get(f.get("verdict") or "", "")
    return f"{f['median']:{num}}{unit} [{f['min']:{num}}..{f['max']:{num}}]{mark}"


def _line(figs: dict[str, dict[str, Any]], extra: int, result: dict[str, Any]) -> str:
    parts = []
    if "added_p50_ms_json" in figs:
        parts.append(f"added p50 JSON {_spread(figs['added_p50_ms_json'], '+.2f', ' ms')}")
    if "added_first_byte_ms_sse_paced" in figs:
        parts.append(f"first byte paced SSE {_spread(figs['added_first_byte_ms_sse_paced'], '+.2f', ' ms')}")
    for c in [c for c in result.get("concurrency", []) if c > 1]:
        pairs = (("JSON", f"throughput_vs_noop_json_c{c}"), ("paced SSE", f"throughput_vs_noop_sse_paced_c{c}"))
        tp = [f"{label} {_spread(figs[k], '.2f', 'x')}" for label, k in pairs if k in figs]
        if tp:
            parts.append(f"c={c} vs no-op " + ", ".join(tp))
    pairs = (("JSON", "plugin_cpu_ms_json"), ("paced SSE", "plugin_cpu_ms_sse_paced"))
    cpus = [f"{label} {_spread(figs[k], '.2f', ' ms')}" for label, k in pairs if k in figs]
    if cpus:
        parts.append("plugin CPU/request " + ", ".join(cpus))
    if not parts:
        return "summary: no paired rounds"
    n = max(len(f["rounds"]) for f in figs.values())
    return f"summary: {'; '.join(parts)} (median [range] of {n} rounds; plugin's own calls through the proxy: {extra})"
