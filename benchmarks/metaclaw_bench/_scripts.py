"""Checker scripts that start: a benchmark fetched as an archive or from a dataset hub loses the executable bit, and
one saved on Windows has ``\\r\\n`` line ends, so ``./scripts/check.sh`` answers 126 (permission denied) or 127
(``python3\\r`` not found) whatever the agent did, and the round is scored as the agent's failure.

The benchmark folder is never modified: when a script with a ``#!`` line needs either fix, the checks run against a
copy of ``scripts/`` (made once per process and content, removed at exit) in which such scripts are executable and
have ``\\n`` line ends. Scripts without a ``#!`` line (run as ``python scripts/x.py``) are copied as they are.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
from pathlib import Path

from ._workspace import copy_workspace

PREFIX = "metaclaw-checkers-"
_lock = threading.Lock()
_made: dict[tuple[str, tuple[tuple[str, int, int, int], ...]], Path] = {}


def _first_line(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(512).split(b"\n", 1)[0]


def _needs_fix(path: str, mode: int) -> bool:
    head = _first_line(path)
    return head.startswith(b"#!") and (head.endswith(b"\r") or not mode & stat.S_IXUSR)


def _files(root: Path) -> list[tuple[str, int, int, int]]:
    out = []
    for d, dirs, names in os.walk(root):  # links are not followed (copy_workspace keeps only inside ones)
        dirs.sort()
        for n in sorted(names):
            p = os.path.join(d, n)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                out.append((os.path.relpath(p, root), st.st_mtime_ns, st.st_size, st.st_mode))
    return out


def runnable_scripts(scripts: Path) -> Path:
    """``scripts`` itself when every script with a ``#!`` line can start, else the fixed copy."""
    root = scripts.resolve()
    files = _files(root)
    fix = [rel for rel, _, _, mode in files if _needs_fix(str(root / rel), mode)]
    if not fix:
        return scripts
    key = (str(root), tuple(files))
    with _lock:
        made = _made.get(key)
        if made is not None and made.is_dir():
            return made
        base = Path(tempfile.mkdtemp(prefix=PREFIX))
        atexit.register(shutil.rmtree, base, True)
        made = base / "scripts"
        copy_workspace(root, made)
        for rel in fix:
            p = made / rel
            if p.is_symlink() or not p.is_file():
                continue
            if _first_line(str(p)).endswith(b"\r"):
                p.write_bytes(p.read_bytes().replace(b"\r\n", b"\n"))
            p.chmod(p.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        _made[key] = made
        return made


def is_checker_link(link: Path, scripts: Path) -> bool:
    """Whether ``link`` is the link a check made (to ``scripts`` or a fixed copy of it, maybe gone since)."""
    if not link.is_symlink():
        return False
    target = Path(os.readlink(link))
    return link.resolve() == scripts.resolve() or target.parent.name.startswith(PREFIX)
