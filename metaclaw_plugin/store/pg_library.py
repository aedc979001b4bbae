"""The skill library in PostgreSQL, shared by every host; each host's skills folder is a local copy of it.

Every file of the library (each ``SKILL.md``, every version's text and manifest under ``.metaclaw/versions``, the
history, the generation counter) is a row of ``skill_files`` with a revision number. A host publishes what
changed in its folder (the elected learner after evolution, a person's ``skills approve`` anywhere) and sends
``NOTIFY``; the others ``LISTEN``, copy the newer rows into their folder (the counter file last, so the bank
reloads once) and refresh their in-memory snapshot. A periodic pull is the fallback when a notification is
missed. The request path reads only the in-memory snapshot: it never touches the network.

Concurrent edits of the same file on two hosts: the later publish wins (only the learner writes skills
routinely, so this takes a person editing on two hosts at once).

Neither side trusts the other blindly. Publishing reads the folder without following any link (a link is
skipped, named in the log) and redacts every file's text before it leaves the host. Pulling refuses a row that is
not a file this library writes (a path out of the folder, a bad skill name, a SKILL.md that does not parse, a
file behind a link planted in the folder): it is skipped, logged and counted in ``status``, and the rows after it
are pulled as usual.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

from ..infra.service import Service
from ..privacy import Redactor
from ..skillbank import safefs
from ..skillbank.files import STATE_DIR, SkillStore, atomic_write, utc_now_iso
from ..skillbank.skillmd import check_name, parse_skill_md
from .postgres import PostgresDatabase

log = logging.getLogger("metaclaw_plugin.store")

CHANNEL = "metaclaw_skills"
STATE_FILE = f"{STATE_DIR}/state.json"  # applied last: readers reload when it changes


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _published(rel: str, is_dir: bool) -> bool:
    """Whether a folder entry is part of the library (locks, temporary and hidden files are not)."""
    name = rel.rsplit("/", 1)[-1]
    if rel == STATE_DIR:
        return True
    if name.startswith(".") or (not is_dir and (name == "lock" or name.endswith((".lock", ".tmp")))):
        return False
    return True


def library_files(root: Path) -> safefs.Pack:
    """The library's files by relative path (locks and temporary files left out), read without following any
    link: a link anywhere (the folder itself included) is in ``refused``, its target never read."""
    return safefs.walk(root, _published)


REFUSED_FILE = f"{STATE_DIR}/.library-refused.json"  # hidden: kept on this host, never published
_MAX_PATH = 512
_ODD = re.compile(r"[\x00-\x1f\x7f\\]")


def held_files(db: PostgresDatabase) -> int:
    """How many files the database's library holds (deletions left out)."""
    return int(db.query("SELECT COUNT(*) FROM skill_files WHERE deleted = 0")[0][0])


def check_library_path(rel: Any) -> str:
    """A row's path when it is one this library writes (``<skill>/<file>``, ``.metaclaw/<file>``); anything else
    raises ValueError saying why (the database is shared, not trusted blindly)."""
    if not isinstance(rel, str) or not rel:
        raise ValueError("the path is empty or not text")
    if len(rel) > _MAX_PATH or _ODD.search(rel):
        raise ValueError("the path is too long or holds control characters or backslashes")
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ValueError(f"skill library path {rel!r} escapes the skills folder")
    if len(parts) < 2 or any(p.startswith(".") for p in parts[1:]):
        raise ValueError("not a file of a skill or of the library's state")
    if parts[0] == STATE_DIR:
        if parts[1] == "versions":
            if len(parts) != 4:
                raise ValueError("a version file is .metaclaw/versions/<skill>/<file>")
            check_name(parts[2])
        return rel
    check_name(parts[0])
    return rel


def _safe_path(root: Path, rel: str) -> Path:
    """A row's path inside ``root``; anything else is refused (the database is shared, not trusted blindly)."""
    p = (root / rel).resolve()
    if rel.startswith("/") or ".." in Path(rel).parts or not p.is_relative_to(root.resolve()):
        raise ValueError(f"skill library path {rel!r} escapes the skills folder")
    return p


def read_refused(root: Path) -> dict[str, dict[str, Any]]:
    """The rows this host's folder refused (path -> revision, reason, when), as the last pull recorded them."""
    try:
        data = json.loads(safefs.read_under(root, REFUSED_FILE))
        return {str(k): dict(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}


def _check_content(rel: str, content: str) -> str:
    """A row's text, refused when it is not what the file must hold: a SKILL.md (and a version's text) must parse."""
    parts = rel.split("/")
    if len(parts) == 2 and parts[1] == "SKILL.md":
        parse_skill_md(content, expected_name=parts[0])
    elif parts[:2] == [STATE_DIR, "versions"] and parts[3].endswith(".md"):
        parse_skill_md(content, expected_name=parts[2])
    return content


class SharedSkillLibrary:
    def __init__(self, db: PostgresDatabase, store: SkillStore, host: str, redactor: Redactor):
        self.db = db
        self.store = store
        self.host = host
        self.redactor = redactor
        self._outgoing: dict[str, tuple[str, str, str]] = {}  # path -> (local digest, published text, its digest)
        self.refused: dict[str, dict[str, Any]] = read_refused(store.root)  # path -> the row refused and why
        self.skipped_links: list[str] = []  # links in this folder, not published
        self._known: dict[str, str] = {}  # path -> digest, as this folder and the database last agreed
        self._rev = 0  # the highest revision copied into this folder
        self._seen: tuple[int, float] | None = None  # the folder's change marks at the last publish
        self._lock = threading.Lock()
        self._listener: Service | None = None
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
            if root.is_symlink():  # nothing is written through a link, the folder itself included
                raise safefs.LinkRefused(root, "a symbolic link (the skills folder itself)")
            changed = 0
            last: list[Any] = []
            self.store.ensure()
            with self.store._lock:  # the store's own writers take it too: no torn interleaving
                unpublished = self._marks() != self._seen  # a local change the next publish must still scan for
                for r in rows:
                    if r["path"] == STATE_FILE:
                        last.append(r)
                        continue
                    changed += self._apply_guarded(root, r)
                for r in last:
                    changed += self._apply_guarded(root, r)
                if not unpublished:
                    self._seen = self._marks()
            self._rev = max(int(r["rev"]) for r in rows)
            self.pulled += changed
            self._write_refused()
            return changed

    def _apply_guarded(self, root: Path, r: Any) -> int:
        """One row; a row that cannot be applied is refused (logged, counted), never a stop for the rows after it."""
        path = r["path"]
        try:
            n = self._apply_row(root, r)
        except (ValueError, OSError, TypeError) as e:  # SkillFormatError and safefs.LinkRefused are ValueErrors
            reason = self.redactor.redact(str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}")
            key = self.redactor.redact(path if isinstance(path, str) else repr(path))  # shown in logs and status
            if self.refused.get(key, {}).get("rev") != r["rev"]:
                log.warning("skill library: refused row %r (revision %s): %s", key[:200], r["rev"], reason)
            self.refused[key[:_MAX_PATH]] = {"rev": r["rev"], "reason": reason[:300], "at": utc_now_iso()}
            return 0
        self.refused.pop(path, None)  # a newer, good revision of a path refused before (a good path has no secret)
        return n

    def _apply_row(self, root: Path, r: Any) -> int:
        rel = check_library_path(r["path"])
        path = _safe_path(root, rel)
        link = safefs.links_under(root, rel)
        if link is not None:
            raise safefs.LinkRefused(link, "a symbolic link in the skills folder (the row is not written through it)")
        if r["digest"] == self._known.get(rel, "") and not r["deleted"]:
            return 0  # what this folder last published or copied: a newer local edit must not be reverted
        try:
            local: bytes | None = safefs.read_under(root, rel)
        except FileNotFoundError:
            local = None
        if r["deleted"]:
            self._known.pop(rel, None)
            if local is None:
                return 0
            path.unlink()
            return 1
        if not isinstance(r["content"], str):
            raise ValueError("the row has no text")
        # rows from an older host may hold secrets; what is written must still parse once they are redacted
        text = _check_content(rel, self.redactor.redact(r["content"]))
        data = text.encode("utf-8")
        self._known[rel] = r["digest"]
        if local is not None and _digest(local) == _digest(data):
            return 0
        atomic_write(path, data)
        return 1

    def _write_refused(self) -> None:
        """This host's refused rows, for ``status`` in another process (the CLI) to show."""
        if not self.refused and not (self.store.root / REFUSED_FILE).exists():
            return
        if len(self.refused) > 1000:  # bounded: the newest are kept
            self.refused = dict(sorted(self.refused.items(), key=lambda kv: str(kv[1].get("at")))[-1000:])
        try:
            atomic_write(self.store.root / REFUSED_FILE, json.dumps(self.refused, sort_keys=True).encode())
        except OSError as e:
            log.warning("skill library: cannot record the refused rows: %s", e)

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
                pack = library_files(self.store.root)
            links = [r.path for r in pack.refused]
            if str(self.store.root) in links:  # publishing nothing would delete the whole library for every host
                raise safefs.LinkRefused(self.store.root, "a symbolic link (the skills folder itself)")
            if links != self.skipped_links:
                for r in pack.refused:
                    log.warning("skill library: not published: %s", r)
                self.skipped_links = links
            files: dict[str, tuple[str, str]] = {}  # path -> (text to publish, its digest)
            for rel, data in pack.files.items():
                try:
                    check_library_path(rel)
                except ValueError as e:
                    log.debug("skill library: not publishing %s: %s", rel, e)
                    continue
                files[rel] = self._outgoing_text(rel, data)
            rows: list[tuple[str, str | None, str, int]] = []
            for rel, (out, d) in files.items():
                if self._known.get(rel) != d:
                    rows.append((rel, out, d, 0))
            behind = [Path(p).relative_to(self.store.root).as_posix() + "/" for p in links]
            rows += [
                (rel, None, "", 1)  # a file now behind a link is not deleted for everyone: it is skipped
                for rel in self._known
                if rel not in files and not any((rel + "/").startswith(b) for b in behind)
            ]
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

    def _outgoing_text(self, rel: str, data: bytes) -> tuple[str, str]:
        """A file's text as it leaves this host (secrets redacted), and its digest; each version redacted once."""
        local = _digest(data)
        cached = self._outgoing.get(rel)
        if cached is not None and cached[0] == local:
            return cached[1], cached[2]
        text = self.redactor.redact(data.decode("utf-8", "replace"))
        out = (local, text, _digest(text.encode("utf-8")))
        self._outgoing[rel] = out
        return out[1], out[2]

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
    def listener(self, on_change: Any, every: float = 1.0) -> Service:
        """The thread (to start) that calls ``on_change()`` (a sync) on each NOTIFY and every ``every`` seconds
        besides (the fallback, and what publishes this host's own changes). Its own thread: a database that is
        away stalls only it, never the plugin's worker."""
        if self._listener is None:
            self._listener = Service("metaclaw-skills-sync", partial(self._listen, on_change, every))
        return self._listener

    def _listen(self, on_change: Any, every: float, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                with self.db.connect(autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    while not stop.is_set():
                        on_change()
                        for _ in conn.notifies(timeout=every, stop_after=1):
                            pass
            except Exception as e:
                if not stop.is_set():
                    log.debug("skill library listener: %s (reconnecting)", e)
                    on_change()  # publishes nothing while the server is away, but says so in status
                    stop.wait(2.0)

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.stop(5)
            self._listener = None

    def status(self) -> dict[str, Any]:
        return {
            "where": self.db.where,
            "revision": self._rev,
            "files": len(self._known),
            "pulled": self.pulled,
            "published": self.published,
            "error": self.last_error,
            "refused": len(self.refused),
            "refused_rows": [{"path": k, **v} for k, v in sorted(self.refused.items())[:20]],
            "links_not_published": self.skipped_links[:20],
        }
