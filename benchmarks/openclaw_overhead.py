"""Added latency per OpenClaw turn from the metaclaw plugin.

Two real gateways (openclaw@2026.9.6 on Node 24, the same lean config, the same SSE stub upstream): one with
the metaclaw plugin and a `metaclaw-plugin serve` sidecar, one without. Turns are sent through
`/v1/chat/completions`, alternating between the two in a random order each round (interleaved), so drift in
machine load hits both alike. Reported: p50/p99 of the turn time on each, and of the paired difference.

Then the hook's own round trip, measured from Node with the plugin's own client against the same sidecar:
the `/v1/skills` call that `before_prompt_build` awaits (the only call on the turn's critical path), and the
`/v1/turns/input` call with a 40 KB system prompt that `llm_input` fires without waiting.

    bash .ci/install_openclaw.sh
    .venv/bin/python benchmarks/openclaw_overhead.py --rounds 60 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests" / "support"))

from openclaw_support import PLUGIN_DIR, Gateway, Sidecar, StubUpstream, find_openclaw, system_text  # noqa: E402

from metaclaw_plugin.infra.stats import percentile  # noqa: E402

PROMPT = "back up the json file before editing it (round {i})"


def summary(xs: list[float]) -> dict[str, float]:
    return {
        "n": len(xs),
        "p50_ms": round(percentile(xs, 50), 2),
        "p99_ms": round(percentile(xs, 99), 2),
        "mean_ms": round(statistics.fmean(xs), 2) if xs else float("nan"),
    }


NODE_RTT = r"""
import { pathToFileURL } from "node:url";
const [, , clientPath, url, tokenFile, nStr] = process.argv;
const { SidecarClient } = await import(pathToFileURL(clientPath).href);
const c = new SidecarClient({ url, tokenFile });
const n = Number(nStr);
const skillsBody = (i) => ({ session_id: `bench-${i % 8}`, tenant: "default", kind: "main",
  prompt: `back up the json file before editing it (${i})`,
  messages: [{ role: "user", content: "earlier question about the config" }, { role: "assistant", content: "sure, here it is" },
             { role: "user", content: "now change the port" }, { role: "assistant", content: "done" }] });
const sys = "You are a personal assistant running inside OpenClaw.\n" + "x".repeat(40_000);
const inputBody = (i) => ({ session_id: `bench-${i % 8}`, run_id: `bench-run-${Date.now()}-${i}`, tenant: "default", kind: "main",
  model: "stub/stub-model", messages: [{ role: "system", content: sys }, { role: "user", content: `hello ${i}` }], injected_skills: [] });
const out = { skills: [], input: [], blockChars: 0 };
for (let i = 0; i < 20; i++) await c.post("/v1/skills", skillsBody(i), 5000);
for (let i = 0; i < n; i++) {
  let t = process.hrtime.bigint();
  const r = await c.post("/v1/skills", skillsBody(i), 5000);
  out.skills.push(Number(process.hrtime.bigint() - t) / 1e6);
  out.blockChars = r.block.length;
  t = process.hrtime.bigint();
  await c.post("/v1/turns/input", inputBody(i), 5000);
  out.input.push(Number(process.hrtime.bigint() - t) / 1e6);
}
c.close();
console.log(JSON.stringify(out));
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=60, help="interleaved rounds (one turn on each gateway)")
    ap.add_argument("--warmup", type=int, default=4, help="untimed turns per gateway first")
    ap.add_argument("--rtt", type=int, default=500, help="hook round trips timed from Node")
    ap.add_argument("--json", dest="json_out", default=None, help="also write the results here")
    ap.add_argument("--keep", action="store_true", help="keep the temp folder")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    install, why = find_openclaw()
    if install is None:
        print(f"cannot run: {why}", file=sys.stderr)
        return 2
    random.seed(args.seed)
    root = Path(tempfile.mkdtemp(prefix="mc-oc-bench-"))
    up = StubUpstream(reply="stub reply").start()
    sidecar = Sidecar(root / "metaclaw-home")
    gws: dict[str, Gateway] = {}
    try:
        sidecar.start(timeout=60)
        gws["plugin"] = Gateway(
            install,
            root / "gw-plugin",
            up.base_url,
            plugin=True,
            plugin_config={"url": sidecar.url, "home": str(sidecar.home), "autoStart": False},
        )
        gws["bare"] = Gateway(install, root / "gw-bare", up.base_url, plugin=False)
        for name, gw in gws.items():
            gw.root.mkdir(parents=True, exist_ok=True)
            t0 = time.monotonic()
            gw.start(timeout=180)
            print(f"gateway {name} ready in {time.monotonic() - t0:.1f}s", file=sys.stderr)

        for gw in gws.values():
            for i in range(args.warmup):
                gw.chat(PROMPT.format(i=f"warm-{i}"), timeout=180)
        # Check the plugin really injects on the plugin side and not on the bare side.
        up.clear()
        gws["plugin"].chat(PROMPT.format(i="check"), timeout=60)
        gws["bare"].chat(PROMPT.format(i="check"), timeout=60)
        reqs = up.snapshot()
        injected = ["<metaclaw-skills>" in system_text(b) for b in reqs]
        if injected != [True, False]:
            print(f"warning: expected the block on the plugin side only, got {injected}", file=sys.stderr)

        times: dict[str, list[float]] = {"plugin": [], "bare": []}
        diffs: list[float] = []
        for i in range(args.rounds):
            order = ["plugin", "bare"]
            random.shuffle(order)
            this = {}
            for name in order:
                t0 = time.perf_counter()
                gws[name].chat(PROMPT.format(i=i), timeout=120)
                this[name] = (time.perf_counter() - t0) * 1000.0
                times[name].append(this[name])
            diffs.append(this["plugin"] - this["bare"])
            if (i + 1) % 10 == 0:
                print(
                    f"round {i + 1}/{args.rounds}: plugin p50 {percentile(times['plugin'], 50):.1f} ms, "
                    f"bare p50 {percentile(times['bare'], 50):.1f} ms",
                    file=sys.stderr,
                )

        node = str(install.node_bin / "node")
        script = root / "rtt.mjs"
        script.write_text(NODE_RTT)
        r = subprocess.run(
            [
                node,
                str(script),
                str(PLUGIN_DIR / "lib" / "client.js"),
                sidecar.url,
                str(sidecar.token_file),
                str(args.rtt),
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if r.returncode != 0:
            raise RuntimeError(f"node round-trip bench failed: {r.stderr[-2000:]}")
        rtt = json.loads(r.stdout.strip().splitlines()[-1])
        try:
            load = open("/proc/loadavg").read().split()[:3]
        except OSError:
            load = []
        result = {
            "openclaw": "2026.9.6",
            "rounds": args.rounds,
            "turn_with_plugin": summary(times["plugin"]),
            "turn_without_plugin": summary(times["bare"]),
            "added_per_turn_paired": summary(diffs),
            "added_p50_ms": round(percentile(times["plugin"], 50) - percentile(times["bare"], 50), 2),
            "added_p99_ms": round(percentile(times["plugin"], 99) - percentile(times["bare"], 99), 2),
            "hook_skills_roundtrip": summary(rtt["skills"]),
            "hook_turn_input_roundtrip_40KB": summary(rtt["input"]),
            "skill_block_chars": rtt["blockChars"],
            "loadavg": load,
        }
        print(json.dumps(result, indent=2))
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(result, indent=2))
        print("\n| | p50 ms | p99 ms |\n|---|---|---|", file=sys.stderr)
        for k in (
            "turn_without_plugin",
            "turn_with_plugin",
            "added_per_turn_paired",
            "hook_skills_roundtrip",
            "hook_turn_input_roundtrip_40KB",
        ):
            print(f"| {k} | {result[k]['p50_ms']} | {result[k]['p99_ms']} |", file=sys.stderr)
        return 0
    finally:
        for gw in gws.values():
            gw.stop()
        sidecar.stop()
        up.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
