"""Copying a day's workspace: one walk, regular files copied in the kernel, links never followed out.

A workspace can be large and can hold things a plain ``copytree`` mishandles: a symlink to a file outside
it (copied as is, it would let the next day's agent or checker reach out of the workspace; an absolute one
into the source would even write back into the benchmark), a link loop, a named pipe (opening it to copy
blocks for ever). Rules: a symlink whose target lies inside the tree being copied is recreated as a
relative link to the same place in the copy; any other symlink (outside, dangling, a loop) is left out;
files that are neither regular files, folders nor such links are left out. What was left out is returned,
so that the day's result can say so.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def copy_workspace(src: Path, dest: Path) -> list[str]:
    """Copy ``src`` into a new folder ``dest``; returns notes on what was left out and why."""
    notes: list[str] = []
    root = src.resolve()
    dest.mkdir(parents=True)

    def walk(d: Path, rel: str) -> None:
        with os.scandir(d) as it:
            entries = sorted(it, key=lambda e: e.name)
        for e in entries:
            r = f"{rel}{e.name}"
            target = dest / r
            if e.is_symlink():
                _link(Path(e.path), target, r)
            elif e.is_dir(follow_symlinks=False):
                target.mkdir()
                walk(Path(e.path), r + "/")
            elif e.is_file(follow_symlinks=False):
                shutil.copy2(e.path, target, follow_symlinks=False)  # sendfile: in the kernel
            else:
                notes.append(f"{r}: not a regular file, folder or link (left out)")

    def _link(link: Path, target: Path, r: str) -> None:
        try:
            resolved = link.resolve(strict=True)
        except (OSError, RuntimeError):
            notes.append(f"{r}: a dangling or looping symlink (left out)")
            return
        if resolved != root and root not in resolved.parents:
            notes.append(f"{r}: a symlink to outside the workspace (left out)")
            return
        inside = dest / resolved.relative_to(root)
        target.symlink_to(os.path.relpath(inside, target.parent), target_is_directory=resolved.is_dir())

    if root.is_dir():
        walk(root, "")
    return notes
