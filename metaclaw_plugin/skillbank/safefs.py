"""Reading skill folders and library packs without ever following a link.

A pack is someone else's folder: a ``notes.md -> ~/.aws/credentials`` link inside it must not turn into that
file's contents in the shared library. Every folder and file is opened relative to its parent's descriptor with
``O_NOFOLLOW`` (the check and the open are one system call, so a link swapped in meanwhile is refused too), and
anything that is not a plain file or folder (a link, a FIFO, a device) is refused by name, its target never read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .skillmd import SkillFormatError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


class LinkRefused(SkillFormatError):
    """A symbolic link (or another non-regular entry) where a skill's file or folder was expected."""

    def __init__(self, path: Path | str, what: str = "a symbolic link"):
        self.path = str(path)
        super().__init__(
            f"{self.path} is {what}: not read (a skill folder holds only plain files and folders; "
            "links are never followed)"
        )


def _kind(mode: int) -> str | None:
    """What an entry is when it is neither a plain file nor a folder (None when it is one of those)."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return "not a regular file (a FIFO, socket or device)"


def _refusal(path: Path | str, name: str, dir_fd: int | None) -> LinkRefused:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        mode = stat.S_IFLNK
    return LinkRefused(path, _kind(mode) or "a symbolic link")


def open_dir(path: Path | str, *, dir_fd: int | None = None, name: str | None = None) -> int:
    """A descriptor of the folder ``path`` (or ``name`` under ``dir_fd``); a link there is refused."""
    target = name if name is not None else os.fspath(path)
    try:
        return os.open(target, _DIR_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            try:
                mode = os.stat(target, dir_fd=dir_fd, follow_symlinks=False).st_mode
            except OSError:
                raise e from None
            if not stat.S_ISDIR(mode):
                if stat.S_ISLNK(mode):
                    raise LinkRefused(path) from None
                raise NotADirectoryError(errno.ENOTDIR, "not a folder", os.fspath(path)) from None
        raise


def _read_fd(fd: int, path: Path | str, max_bytes: int | None) -> bytes:
    st = os.fstat(fd)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a folder where a file was expected", os.fspath(path))
    if not stat.S_ISREG(st.st_mode):
        raise LinkRefused(path, _kind(st.st_mode) or "not a regular file")
    limit = st.st_size if max_bytes is None else min(st.st_size, max_bytes) + 1
    chunks: list[bytes] = []
    got = 0
    while got < limit:
        chunk = os.read(fd, min(1 << 20, limit - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def read_file(
    path: Path | str, *, dir_fd: int | None = None, name: str | None = None, max_bytes: int | None = None
) -> bytes:
    """The bytes of a plain file (at most ``max_bytes`` + 1 of them, so a caller can tell it is too large);
    a link or a FIFO there raises :class:`LinkRefused` naming ``path``."""
    target = name if name is not None else os.fspath(path)
    try:
        fd = os.open(target, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):  # EMLINK: what FreeBSD answers for O_NOFOLLOW on a link
            raise _refusal(path, target, dir_fd) from None
        raise
    try:
        return _read_fd(fd, path, max_bytes)
    finally:
        os.close(fd)


def read_under(root: Path, rel: str | Iterable[str], *, max_bytes: int | None = None) -> bytes:
    """Read ``root/rel`` with no link followed at any step from ``root`` (``root`` itself included)."""
    parts = rel.split("/") if isinstance(rel, str) else list(rel)
    fd = open_dir(root)
    try:
        here = Path(root)
        for part in parts[:-1]:
            here = here / part
            nxt = open_dir(here, dir_fd=fd, name=part)
            os.close(fd)
            fd = nxt
        return read_file(here / parts[-1], dir_fd=fd, name=parts[-1], max_bytes=max_bytes)
    finally:
        os.close(fd)


def links_under(root: Path, rel: str) -> str | None:
    """The first component of ``root/rel`` (from ``root``'s own entries down) that is a link, if any: a writer
    checks this so that a file is never written through a link planted in the folder."""
    here = Path(root)
    for part in [p for p in rel.split("/") if p]:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(mode):
            return str(here)
    return None


@dataclass
class Pack:
    """What a folder holds: its plain files by relative path, and what was refused (never read)."""

    files: dict[str, bytes] = field(default_factory=dict)
    refused: list[LinkRefused] = field(default_factory=list)

    def refusal(self) -> str:
        return "; ".join(str(r) for r in self.refused)


def walk(root: Path, keep: Callable[[str, bool], bool] = lambda rel, is_dir: True) -> Pack:
    """Every plain file under ``root`` (``keep(rel, is_dir)`` prunes what the caller does not want), without
    following any link: a link, wherever it is (``root`` included), is recorded in ``refused`` and not read.
    A missing ``root`` is an empty pack."""
    pack = Pack()
    try:
        fd = open_dir(root)
    except FileNotFoundError:
        return pack
    except LinkRefused as e:
        pack.refused.append(e)
        return pack
    try:
        _walk(fd, Path(root), "", keep, pack)
    finally:
        os.close(fd)
    return pack


def _walk(fd: int, here: Path, prefix: str, keep: Callable[[str, bool], bool], pack: Pack) -> None:
    for name in sorted(os.listdir(fd)):
        rel, path = prefix + name, here / name
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            continue  # removed meanwhile
        if not keep(rel, stat.S_ISDIR(mode)):
            continue
        odd = _kind(mode)
        if odd is not None:
            pack.refused.append(LinkRefused(path, odd))
            continue
        try:
            if stat.S_ISDIR(mode):
                sub = open_dir(path, dir_fd=fd, name=name)
                try:
                    _walk(sub, path, rel + "/", keep, pack)
                finally:
                    os.close(sub)
            else:
                pack.files[rel] = read_file(path, dir_fd=fd, name=name)
        except LinkRefused as e:  # swapped for a link between the stat and the open
            pack.refused.append(e)
        except FileNotFoundError:
            continue
