"""The skill library in PostgreSQL, shared by every host; each host's skills folder is a local copy of it.

Every file of the library (each ``SKILL.md``, every version's text and manifest under ``.metaclaw/versions``, the
history, the generation counter) is a row of ``skill_files`` with a revision number. A host publishes what
changed in its folder (the elected learner after evolution, a person's ``skills approve`` anywhere) and sends
``NOTIFY``; the others ``LISTEN``, copy the newer rows into their folder (the counter file last, so the bank
reloads once) and refresh their in-memory snapshot. A periodic pull is the fallback when a notification is
missed. The request path reads only the in-memory snapshot: it never touches the network.

Concurrent edits of the same file on two hosts: the later publish wins (only the learner writes skills
routinely, so this takes a person editing on two hosts at once).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from pathlib import Path
from typing import Any

from ..skillbank.store import STATE_DIR, SkillStore, atomic_write
from .postgres import PostgresDatabase

log = logging.getLogger("metaclaw_plugin.store")

CHANNEL = "metaclaw_skills"
STATE_FILE = f"{STATE_DIR}/state.json"  # applied last: readers reload when it changes


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _library_files(root: Path) -> dict[str, bytes]:
    """The library's files by relative path (locks and temporary files left out)."""
    out: dict[str, bytes] = {}
    if not root.is_dir():
        return out
    for p in root.rglob("*"):
        rel = p.relative_to(root).as_posix()
        if not p.is_file() or p.name == "lock" or p.name.endswith((".lock", ".tmp")) or p.name.startswith("."):
            continue
        if rel.startswith(".") and not rel.startswith(f"{STATE_DIR}/"):
            continue
        try:
            out[rel] = p.read_bytes()
        except OSError:
            continue
    return out


def _safe_path(root: Path, rel: str) -> Path:
    """A row's path inside ``root``; anything else is refused (the database is shared, not trusted blindly)."""
    p = (root / rel).resolve()
    if rel.startswith("/") or ".." in Path(rel).parts or not p.is_relative_to(root.resolve()):
        raise ValueError(f"skill library path {rel!r} escapes the skills folder")
    return p


class SharedSkillLibrary:
    def __init__(self, db: PostgresDatabase, store: SkillStore, host: str = ""):
        self.db = db
        self.store = store
        self.host = host
        self._known: dict[str, str] = {}  # path -> digest, as this folder and the database last agreed
        self._rev = 0  # the highest revision copied into this folder
        self._seen: tuple[int, float] | None = None  # the folder's change marks at the last publish
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._listener: threading.Thread | None = None
        self.pulled = 0
        self.published = 0
        self.last_error: str | None = None

    # Moving files ------------------------------------------------------------------------------------------
    def pull(self) -> int:
        """Copy rows newer than this folder into it. Returns the files written or deleted."""
        with self._lock:
            rows = self.db.query(
                "SELECT path, content, digest, deleted, rev FROM skill_files WHERE rev > ? ORDER BY rev", [self._rev]
            )
            if not rows:
                return 0
            root = self.store.root
            changed = 0
            last: list[Any] = []
            self.store.ensure()
            with self.store._lock:  # the store's own writers take it too: no torn interleaving
                unpublished = self._marks() != self._seen  # a local change the next publish must still scan for
                for r in rows:
                    if r["path"] == STATE_FILE:
                        last.append(r)
                        continue
                    changed += self._apply_row(root, r)
                for r in last:
                    changed += self._apply_row(root, r)
                if not unpublished:
                    self._seen = self._marks()
            self._rev = max(int(r["rev"]) for r in rows)
            self.pulled += changed
            return changed

    def _apply_row(self, root: Path, r: Any) -> int:
        path = _safe_path(root, r["path"])
        if r["digest"] == self._known.get(r["path"], "") and not r["deleted"]:
            return 0  # what this folder last published or copied: a newer local edit must not be reverted
        local = path.read_bytes() if path.is_file() else None
        if r["deleted"]:
            self._known.pop(r["path"], None)
            if local is None:
                return 0
            path.unlink()
            return 1
        self._known[r["path"]] = r["digest"]
        data = r["content"].encode("utf-8")
        if local is not None and _digest(local) == r["digest"]:
            return 0
        atomic_write(path, data)
        return 1

    def _marks(self) -> tuple[int, float]:
        st = self.store.state()
        try:
            mtime = (self.store.root / STATE_FILE).stat().st_mtime
        except OSError:
            mtime = 0.0
        return (st.version, mtime)

    def publish(self, force: bool = False) -> int:
        """Write what changed in this folder since it last agreed with the database, then NOTIFY the others.
        Cheap when nothing changed (the store's change counter is compared first)."""
        with self._lock:
            marks = self._marks()
            if not force and marks == self._seen:
                return 0
            self.store.ensure()
            with self.store._lock:  # a consistent snapshot: the store writes several files per change
                marks = self._marks()
                files = _library_files(self.store.root)
            rows: list[tuple[str, str | None, str, int]] = []
            for rel, data in files.items():
                d = _digest(data)
                if self._known.get(rel) != d:
                    rows.append((rel, data.decode("utf-8", "replace"), d, 0))
            rows += [(rel, None, "", 1) for rel in self._known if rel not in files]
            if rows:
                now = time.time()
                with self.db.transaction() as tx:
                    rev = int(tx.execute("SELECT COALESCE(MAX(rev), 0) FROM skill_files").fetchone()[0])
                    for i, (rel, text, d, deleted) in enumerate(sorted(rows, key=lambda r: r[0] == STATE_FILE)):
                        tx.execute(
                            "INSERT INTO skill_files(path, content, digest, deleted, rev, origin, updated_at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET content = excluded.content, "
                            "digest = excluded.digest, deleted = excluded.deleted, rev = excluded.rev, "
                            "origin = excluded.origin, updated_at = excluded.updated_at",
                            (rel, text, d, deleted, rev + 1 + i, self.host, now),
                        )
                    tx.execute(f"NOTIFY {CHANNEL}")
                for rel, _, d, deleted in rows:
                    if deleted:
                        self._known.pop(rel, None)
                    else:
                        self._known[rel] = d
                self.published += len(rows)
                # our own rows need no pull; a row another host wrote meanwhile has a revision in between,
                # so the pull position stays and the next pull re-reads (and skips, by digest) what is ours
            self._seen = marks
            return len(rows)

    def sync(self) -> bool:
        """Pull, then publish. True when this folder changed (the caller refreshes its snapshot). Fails open."""
        try:
            changed = self.pull()
            self.publish()
            self.last_error = None
            return changed > 0
        except Exception as e:
            if self.last_error is None:
                log.warning("skill library sync with %s failed (retried): %s", self.db.where, e)
            self.last_error = f"{type(e).__name__}: {e}"
            return False

    # Notifications ---------------------------------------------------------------------------------------------
    def listen(self, on_change: Any, every: float = 1.0) -> None:
        """Start the thread that calls ``on_change()`` (a sync) on each NOTIFY and every ``every`` seconds besides
        (the fallback, and what publishes this host's own changes). Its own thread: a database that is away
        stalls only it, never the plugin's worker."""
        if self._listener is not None:
            return
        self._stop.clear()
        self._listener = threading.Thread(
            target=self._listen, args=(on_change, every), name="metaclaw-skills-sync", daemon=True
        )
        self._listener.start()

    def _listen(self, on_change: Any, every: float) -> None:
        while not self._stop.is_set():
            try:
                with self.db.connect(autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not self._stop.is_set():
                        on_change()
                        for _ in conn.notifies(timeout=every, stop_after=1):
                            pass
            except Exception as e:
                if not self._stop.is_set():
                    log.debug("skill library listener: %s (reconnecting)", e)
                    on_change()  # publishes nothing while the server is away, but says so in status
                    self._stop.wait(2.0)

    def stop(self) -> None:
        self._stop.set()
        if self._listener is not None:
            self._listener.join(timeout=5)
            self._listener = None

    def status(self) -> dict[str, Any]:
        return {
            "where": self.db.where,
            "revision": self._rev,
            "files": len(self._known),
            "pulled": self.pulled,
            "published": self.published,
            "error": self.last_error,
        }
