"""The host's task type of labelled turns (``fl_turns.task_type``: ``metadata.task_type`` as the learning loop stored
it), which the trainer groups advantages by and the evolution queue keeps a support set to."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def task_types(query: Callable[[str, list[str]], Sequence[Any]], turn_ids: Sequence[str]) -> dict[str, str]:
    """Each of ``turn_ids`` that has a task type, read with ``query`` (a database's or a transaction's) in chunks
    of 500 ids."""
    out: dict[str, str] = {}
    for i in range(0, len(turn_ids), 500):
        part = list(turn_ids[i : i + 500])
        rows = query(f"SELECT turn_id, task_type FROM fl_turns WHERE turn_id IN ({','.join('?' * len(part))})", part)
        out.update({r["turn_id"]: str(r["task_type"]) for r in rows if r["task_type"]})
    return out
