"""Small secret files in the home (the server token, the id key): created once with mode 0600, then reused by every
process on the home."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger("metaclaw_plugin")


def load_or_create_secret(path: Path, make: Callable[[], str]) -> str:
    """The text in ``path``, created (mode 0600) from ``make()`` when missing or empty.

    A file readable by others is tightened to 0600. Two processes creating it at once agree: the file is written
    aside and linked into place, and the first link wins."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        st = None
    if st is not None:
        if stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, 0o600)
            log.warning("%s was readable by others; its mode is now 0600", path)
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
        path.unlink()
    text = make()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (text + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)
    except FileExistsError:
        text = path.read_text(encoding="utf-8").strip() or text
    finally:
        tmp.unlink(missing_ok=True)
    return text
