"""The order in which xdist hands out test files (``--dist loadfile --no-loadscope-reorder`` keeps the collection's):
the longest first, so that no long file starts last and holds the end of the run alone. xdist's own reordering sends
the files with the most tests first, which put the learning benchmarks' files of one or two tests of minutes each at
the very end. The seconds per file are ``tests/file_seconds.json``, written by a run with
``METACLAW_FILE_SECONDS=<path>`` (each file's tests, every phase); a file not in it keeps its place after them."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

COSTS = Path(__file__).resolve().parents[1] / "file_seconds.json"
OUT = "METACLAW_FILE_SECONDS"
_seconds: dict[str, float] = {}


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[Any]) -> None:
    try:
        cost = {str(k): float(v) for k, v in json.loads(COSTS.read_text()).items()}
    except (OSError, ValueError, AttributeError, TypeError):
        cost = {}
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        first.setdefault(_file(item.nodeid), i)

    def key(item: Any) -> tuple[float, int]:
        f = _file(item.nodeid)
        return -cost.get(f, 0.0), first[f]

    items.sort(key=key)  # stable: a file's tests keep their order


def pytest_runtest_logreport(report: Any) -> None:
    if os.environ.get(OUT):
        f = _file(report.nodeid)
        _seconds[f] = _seconds.get(f, 0.0) + report.duration


def pytest_unconfigure(config: Any) -> None:
    out = os.environ.get(OUT)
    if out and _seconds and not hasattr(config, "workerinput"):  # the controller, which sees every report
        ranked = sorted(_seconds.items(), key=lambda kv: -kv[1])
        Path(out).write_text(json.dumps({k: round(v, 1) for k, v in ranked}, indent=0) + "\n")
