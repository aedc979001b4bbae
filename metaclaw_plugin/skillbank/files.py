"""The skill library on disk: ``<root>/<name>/SKILL.md`` plus a small state folder.

* Writes are atomic (temp file, fsync, rename, fsync of the folder) and made under a file lock,
  so several processes may share one library.
* ``<root>/.metaclaw/state.json`` holds the skill generation and a change counter. Readers compare
  the counter to know when to reload.
* ``<root>/.metaclaw/history.jsonl`` records who added or changed what, and why.
* ``<root>/.metaclaw/versions/<name>/`` keeps every version's SKILL.md text (``<n>.md``) and a
  manifest (``versions.json``) saying which version is served, which were superseded, and which one,
  if any, is pending: on a shadow trial against the served one, or waiting for a person's review.
  A refinement of an active skill under ``shadow``/``review`` promotion is written as a pending
  version, so the served one keeps serving until the new one wins; rollback restores any version.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from ..infra.homedir import make_dirs
from ..types import Skill, SkillKind
from . import safefs
from .skillmd import MAX_FILE_BYTES, SkillFormatError, check_name, parse_skill_md, render_skill_md

log = logging.getLogger("metaclaw_plugin.skills")

STATE_DIR = ".metaclaw"


def utc_now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new file, never a torn one."""
    make_dirs(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


VERSION_KEY = "version"  # metadata.version: the served version's number
PENDING_STATES = ("trial", "review")  # a pending version is on shadow trial, or waits for approval


@dataclass
class LoadResult:
    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[tuple[Path, str]] = field(default_factory=list)
    pending: dict[str, Skill] = field(default_factory=dict)  # name -> the pending version (metadata.pending: state)
    evidence: dict[str, float] = field(
        default_factory=dict
    )  # name -> reward with it minus without (see write_evidence)


@dataclass(frozen=True)
class StoreState:
    generation: int = 0
    version: int = 0


class SkillStore:
    def __init__(self, root: Path | str):
        self.root = Path(root).expanduser()
        self._state_dir = self.root / STATE_DIR
        self._lock = FileLock(str(self._state_dir / "lock"), timeout=30, mode=0o600)

    # Paths ------------------------------------------------------------------------------------
    def skill_path(self, name: str) -> Path:
        check_name(name)  # the name regex alone rules out '/', '..' and absolute paths
        path = (self.root / name / "SKILL.md").resolve()
        if path.parent.parent != self.root.resolve():
            raise SkillFormatError(f"name {name!r} escapes the skills folder")
        return path

    def ensure(self) -> None:
        make_dirs(self._state_dir)

    # State ------------------------------------------------------------------------------------
    def state(self) -> StoreState:
        try:
            data = json.loads(self._state_bytes("state.json"))
            return StoreState(int(data.get("generation", 0)), int(data.get("version", 0)))
        except (OSError, ValueError):
            return StoreState()

    def _state_bytes(self, rel: str) -> bytes:
        """A file of the state folder, read without following a link (a link there raises, as a bad file does)."""
        return safefs.read_under(self.root, f"{STATE_DIR}/{rel}")

    @property
    def generation(self) -> int:
        return self.state().generation

    def _write_state(self, state: StoreState) -> None:
        atomic_write(self._state_dir / "state.json", json.dumps(state.__dict__).encode())

    def _log(self, event: dict[str, Any]) -> None:
        event = {"at": utc_now_iso(), **event}
        path = self._state_dir / "history.jsonl"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as e:
            if e.errno == errno.ELOOP:  # never appended through a link planted in the state folder
                raise safefs.LinkRefused(path) from None
            raise
        try:
            os.write(fd, (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    # Reading ----------------------------------------------------------------------------------
    def load(self) -> LoadResult:
        """Every readable skill; a skill that cannot be used (bad format, a link, unreadable) is a problem
        named with its reason, never a reason to stop. No link is followed: a linked folder or SKILL.md
        (or a linked skills folder) is refused, its target never read."""
        result = LoadResult()
        try:
            root_fd = safefs.open_dir(self.root)
        except (FileNotFoundError, NotADirectoryError):
            return result
        except (safefs.LinkRefused, OSError) as e:
            log.warning("skipping skills folder %s: %s", self.root, e)
            result.problems.append((self.root, str(e)))
            return result
        try:
            for name in sorted(os.listdir(root_fd)):
                if name.startswith("."):
                    continue
                entry = self.root / name
                try:
                    mode = os.stat(name, dir_fd=root_fd, follow_symlinks=False).st_mode
                    if stat.S_ISREG(mode) or not (stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                        continue  # a stray file beside the skill folders
                    if stat.S_ISLNK(mode):
                        raise safefs.LinkRefused(entry)
                    skill = self._read_file(entry / "SKILL.md", name)
                except FileNotFoundError:
                    continue  # a folder without a SKILL.md (or removed meanwhile)
                except (SkillFormatError, OSError) as e:
                    md = entry if isinstance(e, safefs.LinkRefused) and e.path == str(entry) else entry / "SKILL.md"
                    reason = str(e) if isinstance(e, SkillFormatError) else (e.strerror or str(e))
                    log.warning("skipping skill file %s: %s", md, reason)
                    result.problems.append((md, reason))
                    continue
                result.skills[skill.name] = skill
        finally:
            os.close(root_fd)
        result.evidence = self.evidence()
        versions = self._state_dir / "versions"
        if versions.is_dir():
            for name in sorted(result.skills):
                cand = self._pending_of(name)
                if cand is not None:
                    result.pending[name] = cand
        return result

    # Versions ---------------------------------------------------------------------------------
    def _versions_dir(self, name: str) -> Path:
        check_name(name)
        return self._state_dir / "versions" / name

    def versions(self, name: str) -> list[dict[str, Any]]:
        """The manifest, oldest first. A skill written before versions existed shows its current
        text as version 1 (adopted on its next write)."""
        try:
            data = json.loads(self._state_bytes(f"versions/{check_name(name)}/versions.json"))
            if isinstance(data, list):
                return [e for e in data if isinstance(e, dict) and isinstance(e.get("version"), int)]
        except (OSError, ValueError):
            pass
        if self.skill_path(name).is_file():
            return [{"version": 1, "state": "served", "adopted": True}]
        return []

    def read_version(self, name: str, version: int) -> Skill:
        path = self._versions_dir(name) / f"{int(version)}.md"
        if path.is_file() or path.is_symlink():
            rel = path.relative_to(self.root).as_posix()
            return parse_skill_md(safefs.read_under(self.root, rel, max_bytes=MAX_FILE_BYTES), expected_name=name)
        entries = [e for e in self.versions(name) if e["version"] == version]
        if entries and entries[0].get("adopted"):
            return self.read(name)
        raise KeyError(f"{name} has no version {version}")

    def _pending_of(self, name: str) -> Skill | None:
        for e in reversed(self.versions(name)):
            if e.get("state") in PENDING_STATES:
                try:
                    cand = self.read_version(name, e["version"])
                except (KeyError, SkillFormatError, OSError):
                    return None
                return replace(cand, extra_metadata={**cand.extra_metadata, "pending": e["state"]})
        return None

    def pending(self, name: str) -> Skill | None:
        """The version waiting for its trial or its review, if any."""
        return self._pending_of(name)

    def _record_version(self, skill: Skill, state: str, *, actor: str, reason: str, action: str) -> Skill:
        """Save ``skill``'s text as the next version (under the lock). Served: it replaces SKILL.md and
        the previously served version is superseded; any pending version is superseded too, since
        what it was tried against is gone. Pending: any earlier pending version is dropped."""
        name = skill.name
        entries = self.versions(name)
        if entries and entries[0].get("adopted"):
            # adopt the pre-versions text as version 1 before anything replaces it
            entries = [
                {
                    "version": 1,
                    "state": "served",
                    "at": None,
                    "actor": "adopted",
                    "generation": self.read(name).generation,
                }
            ]
            atomic_write(self._versions_dir(name) / "1.md", safefs.read_under(self.root, [name, "SKILL.md"]))
        number = max((e["version"] for e in entries), default=0) + 1
        skill = replace(
            skill,
            extra_metadata={k: v for k, v in {**skill.extra_metadata, VERSION_KEY: number}.items() if k != "pending"},
        )
        text = render_skill_md(skill).encode("utf-8")
        atomic_write(self._versions_dir(name) / f"{number}.md", text)
        for e in entries:
            if state == "served" and e.get("state") == "served":
                e["state"] = "superseded"
            if e.get("state") in PENDING_STATES:
                e["state"] = "superseded"
        entries.append(
            {
                "version": number,
                "state": state,
                "at": utc_now_iso(),
                "actor": actor,
                "generation": skill.generation,
                "action": action,
                "reason": reason,
            }
        )
        atomic_write(self._versions_dir(name) / "versions.json", json.dumps(entries, indent=1).encode())
        if state == "served":
            atomic_write(self.skill_path(name), text)
        return skill

    def _set_version_state(self, name: str, version: int, state: str) -> None:
        entries = self.versions(name)
        for e in entries:
            if e["version"] == version:
                e["state"] = state
        atomic_write(self._versions_dir(name) / "versions.json", json.dumps(entries, indent=1).encode())

    def _read_file(self, md: Path, expected: str) -> Skill:
        data = safefs.read_under(self.root, [expected, md.name], max_bytes=MAX_FILE_BYTES)
        return parse_skill_md(data, expected_name=expected)

    def read(self, name: str) -> Skill:
        check_name(name)
        try:
            return self._read_file(self.root / name / "SKILL.md", name)
        except FileNotFoundError:
            raise KeyError(name) from None

    def history(self, name: str | None = None) -> list[dict[str, Any]]:
        path = self._state_dir / "history.jsonl"
        out: list[dict[str, Any]] = []
        try:
            lines = self._state_bytes(path.name).decode("utf-8", errors="replace").splitlines()
        except (OSError, ValueError):  # missing, or a link (not followed)
            return out
        for line in lines:
            try:
                ev = json.loads(line)
            except ValueError:
                continue  # a torn last line after a crash
            if name is None or ev.get("skill") == name:
                out.append(ev)
        return out

    # Writing ----------------------------------------------------------------------------------
    def add_batch(
        self,
        skills: Iterable[Skill],
        *,
        actor: str,
        reason: str = "",
        details: dict[str, dict[str, Any]] | None = None,
        bump: bool = True,
        pending: dict[str, str] | None = None,
    ) -> int:
        """Write a batch of new or refined skills and bump the generation once. Returns the generation.

        ``pending`` names refinements that must not replace the served version yet: each is kept as a
        pending version in the given state (``trial`` or ``review``) until promoted or discarded."""
        skills = list(skills)
        details = details or {}
        pending = pending or {}
        self.ensure()
        with self._lock:
            state = self.state()
            generation = state.generation + (1 if bump and skills else 0)
            for s in skills:
                existed = self.skill_path(s.name).is_file()
                s = replace(s, generation=generation, created_at=s.created_at or utc_now_iso())
                vstate = pending.get(s.name, "served") if existed else "served"
                s = self._record_version(s, vstate, actor=actor, reason=reason, action="refine" if existed else "add")
                self._log(
                    {
                        "event": ("refine" if existed else "add") if vstate == "served" else f"pending-{vstate}",
                        "skill": s.name,
                        "version": s.extra_metadata[VERSION_KEY],
                        "actor": actor,
                        "origin": s.origin,
                        "status": s.status,
                        "generation": generation,
                        "source_sessions": s.source_sessions,
                        "reason": reason,
                        **details.get(s.name, {}),
                    }
                )
            self._write_state(StoreState(generation, state.version + 1))
        return generation

    def set_status(self, name: str, status: str, *, actor: str, reason: str = "", bump: bool = False) -> Skill:
        self.ensure()
        with self._lock:
            skill = self.read(name)
            old = skill.status
            state = self.state()
            generation = state.generation + (1 if bump else 0)
            updated = replace(skill, status=status)  # type: ignore[arg-type]
            if bump:
                updated = replace(updated, generation=generation)
            atomic_write(self.skill_path(name), render_skill_md(updated).encode("utf-8"))
            self._log({"event": "status", "skill": name, "from": old, "to": status, "actor": actor, "reason": reason})
            self._write_state(StoreState(generation, state.version + 1))
        return updated

    def promote_pending(self, name: str, *, actor: str, reason: str = "") -> Skill:
        """The pending version becomes the served one (active), with a new generation."""
        self.ensure()
        with self._lock:
            cand = self._pending_of(name)
            if cand is None:
                raise KeyError(f"{name} has no pending version")
            state = self.state()
            generation = state.generation + 1
            number = cand.extra_metadata[VERSION_KEY]
            served = replace(
                cand,
                status="active",
                generation=generation,
                extra_metadata={k: v for k, v in cand.extra_metadata.items() if k != "pending"},
            )
            atomic_write(self.skill_path(name), render_skill_md(served).encode("utf-8"))
            atomic_write(self._versions_dir(name) / f"{number}.md", render_skill_md(served).encode("utf-8"))
            entries = self.versions(name)
            for e in entries:
                if e.get("state") == "served":
                    e["state"] = "superseded"
                if e["version"] == number:
                    e["state"] = "served"
            atomic_write(self._versions_dir(name) / "versions.json", json.dumps(entries, indent=1).encode())
            self._log(
                {
                    "event": "promote",
                    "skill": name,
                    "version": number,
                    "actor": actor,
                    "reason": reason,
                    "generation": generation,
                }
            )
            self._write_state(StoreState(generation, state.version + 1))
        return served

    def discard_pending(self, name: str, *, actor: str, reason: str = "") -> int:
        """Drop the pending version (kept on disk as ``rejected``); the served one stays. Returns its number."""
        self.ensure()
        with self._lock:
            cand = self._pending_of(name)
            if cand is None:
                raise KeyError(f"{name} has no pending version")
            number = int(cand.extra_metadata[VERSION_KEY])
            self._set_version_state(name, number, "rejected")
            self._log({"event": "discard", "skill": name, "version": number, "actor": actor, "reason": reason})
            state = self.state()
            self._write_state(StoreState(state.generation, state.version + 1))
        return number

    def rollback(self, name: str, to: int | None = None, *, actor: str, reason: str = "") -> Skill:
        """Serve an earlier version again (as a new version, active, with a new generation). Without
        ``to``: the version served before the current one."""
        self.ensure()
        with self._lock:
            entries = self.versions(name)
            if not entries:
                raise KeyError(name)
            served = [e["version"] for e in entries if e.get("state") == "served"]
            current = served[-1] if served else None
            if to is None:
                earlier = [
                    e["version"]
                    for e in entries
                    if e.get("state") == "superseded" and (current is None or e["version"] < current)
                ]
                if not earlier:
                    raise ValueError(f"{name} has no earlier served version to roll back to")
                to = earlier[-1]
            if to == current:
                raise ValueError(f"version {to} of {name} is the one served now")
            old = self.read_version(name, to)
            state = self.state()
            generation = state.generation + 1
            restored = replace(
                old,
                status="active",
                generation=generation,
                extra_metadata={k: v for k, v in old.extra_metadata.items() if k != "pending"},
            )
            restored = self._record_version(
                restored, "served", actor=actor, reason=reason or f"rollback to {to}", action=f"rollback to {to}"
            )
            self._log(
                {
                    "event": "rollback",
                    "skill": name,
                    "to": to,
                    "version": restored.extra_metadata[VERSION_KEY],
                    "actor": actor,
                    "reason": reason,
                    "generation": generation,
                }
            )
            self._write_state(StoreState(generation, state.version + 1))
        return restored

    def set_kind(self, name: str, kind: SkillKind, *, actor: str, reason: str = "") -> Skill:
        """Make a skill a convention (on every main turn of its tenant) or a procedure (by relevance).
        What is injected changes, so it is a new version and a new generation."""
        self.ensure()
        with self._lock:
            skill = self.read(name)
            if skill.kind == kind and skill.kind_from != "inferred":
                return skill
            state = self.state()
            generation = state.generation + 1
            updated = self._record_version(
                replace(skill, kind=kind, kind_from="metadata", generation=generation),
                "served",
                actor=actor,
                reason=reason or f"kind {skill.kind} -> {kind}",
                action="set-kind",
            )
            self._log(
                {
                    "event": "kind",
                    "skill": name,
                    "from": skill.kind,
                    "to": kind,
                    "actor": actor,
                    "reason": reason,
                    "generation": generation,
                }
            )
            self._write_state(StoreState(generation, state.version + 1))
        return updated

    # Evidence ---------------------------------------------------------------------------------
    def evidence(self) -> dict[str, float]:
        """Per skill, how much better its turns went with it than without (written by the learning side)."""
        try:
            data = json.loads(self._state_bytes("evidence.json"))
            return {str(k): float(v["score"]) for k, v in data.get("skills", {}).items()}
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return {}

    def write_evidence(self, skills: dict[str, dict[str, Any]]) -> None:
        """Replace the evidence file and tell readers to reload (no new generation: nothing a sample was
        made under changes, only the order in which conventions are kept when their budget is full)."""
        self.ensure()
        with self._lock:
            atomic_write(
                self._state_dir / "evidence.json",
                json.dumps({"at": utc_now_iso(), "skills": skills}, sort_keys=True).encode(),
            )
            state = self.state()
            self._write_state(StoreState(state.generation, state.version + 1))

    def seed_from(self, source: Path, *, actor: str = "init") -> tuple[int, int]:
        """Copy bundled skills into the library without touching skills that already exist."""
        self.ensure()
        added = kept = 0
        with self._lock:
            try:  # the source folder itself a link: refused like any pack's
                fd = safefs.open_dir(source)
                try:
                    names = sorted(os.listdir(fd))
                finally:
                    os.close(fd)
            except (OSError, SkillFormatError) as e:
                log.warning("not seeding from %s: %s", source, e)
                names = []
            for name in names:
                entry = Path(source) / name
                if entry.name.startswith("."):
                    continue
                try:  # the source's own links are refused like any pack's: nothing of their target is read
                    data = safefs.read_under(Path(source), [entry.name, "SKILL.md"], max_bytes=MAX_FILE_BYTES)
                except (FileNotFoundError, NotADirectoryError):
                    continue
                except (SkillFormatError, OSError) as e:
                    log.warning("not seeding %s: %s", entry, e)
                    continue
                target = self.root / entry.name / "SKILL.md"
                if target.exists() or target.is_symlink():
                    kept += 1
                    continue
                try:
                    parse_skill_md(data, expected_name=entry.name)
                except SkillFormatError as e:
                    log.warning("not seeding %s: %s", entry / "SKILL.md", e)
                    continue
                atomic_write(target, data)
                added += 1
            if added:
                state = self.state()
                self._write_state(StoreState(state.generation, state.version + 1))
                self._log({"event": "seed", "actor": actor, "count": added, "source": str(source)})
        return added, kept
