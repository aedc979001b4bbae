"""The bytes of every file under a plugin home, read while the plugin may still be writing: a file renamed into place
or removed between the listing and the read (an atomic write's temporary file, SQLite's rollback journal) is skipped,
not an error. Reading a running home is what the leak tests are for; this makes them independent of when the
background threads happen to write."""

from __future__ import annotations

from pathlib import Path


def home_files(root: Path) -> dict[Path, bytes]:
    out: dict[Path, bytes] = {}
    for path in sorted(root.rglob("*")):
        try:
            if path.is_file():
                out[path] = path.read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            continue  # gone since the listing: it was a temporary file, and what it held is in the file it became
    return out
