"""Several processes share one skills folder; a process killed mid-write corrupts nothing."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from metaclaw_plugin.skillbank import SkillStore, parse_skill_md

WRITER = r"""
import sys
from metaclaw_plugin.skillbank import SkillStore
from metaclaw_plugin.types import Skill
root, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
store = SkillStore(root)
for i in range(n):
    batch = [Skill(name=f"{tag}-{i}-{j}", description=f"skill {tag} {i} {j}", body=("body " * 200) + tag) for j in range(2)]
    store.add_batch(batch, actor=tag, reason="concurrency test")
print("done", flush=True)
"""

LOOPER = r"""
import sys
from metaclaw_plugin.skillbank import SkillStore
from metaclaw_plugin.types import Skill
store = SkillStore(sys.argv[1])
i = 0
print("ready", flush=True)
while True:
    i += 1
    store.add_batch([Skill(name="hot", description=f"version {i}", body=("x" * (i % 5000)) + f"\nend {i}")], actor="looper")
"""


def test_two_processes_writing_lose_nothing(tmp_path: Path):
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), tag, "15"], stdout=subprocess.PIPE, text=True)
        for tag in ("alpha", "beta")
    ]
    for p in procs:
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0 and "done" in out
    store = SkillStore(tmp_path)
    result = store.load()
    assert not result.problems
    assert len(result.skills) == 60
    for s in result.skills.values():
        assert s.body.endswith(s.name.split("-")[0])  # not torn, not mixed
    # One bump per batch, none lost to a race on the counter.
    assert store.generation == 30
    assert len([e for e in store.history() if e["event"] == "add"]) == 60


def test_kill_during_writes_leaves_valid_files(tmp_path: Path):
    rng = random.Random(7)
    for _ in range(8):
        p = subprocess.Popen([sys.executable, "-c", LOOPER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.01, 0.3))
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        md = tmp_path / "hot" / "SKILL.md"
        if md.exists():
            skill = parse_skill_md(md.read_bytes(), expected_name="hot")
            n = int(skill.description.split()[-1])
            assert skill.body.endswith(f"end {n}")
        assert not SkillStore(tmp_path).load().problems
