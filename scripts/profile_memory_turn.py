"""The cost of recording a turn whose request carries a memory section, with an agent's 38 KB system prompt.

The memory section changes with the request (each request names another of the user's services). Prints how many
turns carried a section, ``on_response``'s wall time on the host thread, the process CPU per turn (the store's
write-behind and the worker included) and the database's size. Run it against two checkouts to compare them:

    python scripts/profile_memory_turn.py [CHECKOUT] [TURNS]     # CHECKOUT defaults to this one
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from metaclaw_bench.retrieval import HOST_SYSTEM_PROMPT  # noqa: E402
from metaclaw_plugin import MetaClawPlugin, Settings, TurnContext  # noqa: E402
from metaclaw_plugin.skillbank import bundled_skills_dir  # noqa: E402

SYSTEM = (HOST_SYSTEM_PROMPT * 20)[:38_000]
TOPICS = ["billing", "search", "payments", "analytics", "mailer", "gateway", "scheduler", "inventory"]


def main() -> None:
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
    home = Path(tempfile.mkdtemp())
    plugin = MetaClawPlugin(Settings(home=home, skills_dir=bundled_skills_dir()))
    plugin.start()
    plugin.skills.refresh(force=True)
    for i, topic in enumerate(TOPICS):  # the user's facts, one session
        ctx = TurnContext(session_id="facts", request_id=f"f{i}", user="ana")
        said = f"Remember that the {topic} service runs on host {topic}-{i}.internal."
        plugin.on_request(ctx, [{"role": "user", "content": said}])
        plugin.on_response(ctx, {"role": "assistant", "content": "Noted."})
    plugin.on_session_end(TurnContext(session_id="facts", user="ana"))
    plugin.flush()
    plugin.refresh_memory()
    rnd = random.Random(1)
    t_resp, carried = 0.0, 0
    c0 = time.process_time()
    for i in range(n):
        ctx = TurnContext(session_id=f"s{i % 8}", request_id=f"r{i}", user="ana")
        ask = f"Deploy the {rnd.choice(TOPICS)} service again and check its logs, request {i}"
        sent = plugin.on_request(ctx, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ask}])
        carried += "<metaclaw-memory>" in sent[0]["content"]
        t0 = time.perf_counter()
        plugin.on_response(ctx, {"role": "assistant", "content": f"Done {i}."})
        t_resp += time.perf_counter() - t0
    plugin.flush()
    cpu = time.process_time() - c0
    db = sum(f.stat().st_size for f in home.rglob("*.db*"))
    print(
        f"{ROOT}: turns with a memory section {carried}/{n}; on_response {t_resp / n * 1e3:.3f} ms (wall); "
        f"process CPU {cpu / n * 1e3:.3f} ms a turn; database {db / 1e6:.1f} MB"
    )
    plugin.stop()


if __name__ == "__main__":
    main()
