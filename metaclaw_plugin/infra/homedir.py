"""The home folder: made private, and kept so.

Everything under ``$METACLAW_HOME`` is the user's own (sessions, memories, keys, logs). It is created 0700 with files
0600; a home made beforehand with looser modes (``mkdir ~/.metaclaw-plugin`` under a 022 umask, an older release
that made ``skills/`` 0755, a copy from elsewhere) is tightened when the plugin starts, with one warning naming
what changed.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger("metaclaw_plugin")

DIR_MODE = 0o700
FILE_MODE = 0o600
WALK_MAX = 50_000  # entries looked at, at most (a home is small; a runaway one does not stall the start)


def make_dirs(path: Path) -> None:
    """``mkdir -p`` where every folder it creates is 0700 (``Path.mkdir(parents=True)`` makes the parents 0755)."""
    missing = []
    p = Path(path)
    while not p.exists() and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:
            pass


def make_private(*roots: Path) -> list[str]:
    """Create ``roots`` (0700) and tighten what lies under them: folders to 0700, files to 0600, neither following
    links nor touching what another user owns. Returns the paths changed (and warns once, naming them)."""
    changed: list[str] = []
    uid = os.getuid()
    seen = 0
    for root in roots:
        make_dirs(root)
        for here, _dirs, files in os.walk(root, followlinks=False):
            for name, want in [(None, DIR_MODE), *((f, FILE_MODE) for f in files)]:
                seen += 1
                if seen > WALK_MAX:
                    break
                path = here if name is None else os.path.join(here, name)
                try:
                    st = os.lstat(path)
                    if st.st_uid != uid or stat.S_ISLNK(st.st_mode):
                        continue
                    if stat.S_IMODE(st.st_mode) & ~want:
                        os.chmod(path, stat.S_IMODE(st.st_mode) & want)
                        changed.append(path)
                except OSError:
                    continue  # gone meanwhile, or not ours to change: the rest still goes
            if seen > WALK_MAX:
                break
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        log.warning("metaclaw home was readable by others; made private (folders 0700, files 0600): %s", shown)
    return changed
