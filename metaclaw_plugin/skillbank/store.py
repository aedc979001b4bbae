"""The skill library on disk: ``<root>/<name>/SKILL.md`` plus a small state folder.

* Writes are atomic (temp file, fsync, rename, fsync of the folder) and made under a file lock,
  so several processes may share one library.
* ``<root>/.metaclaw/state.json`` holds the skill generation and a change counter. Readers compare
  the counter to know when to reload.
* ``<root>/.metaclaw/history.jsonl`` records who added or changed what, and why.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from filelock import FileLock

from ..types import Skill
from .skillmd import SkillFormatError, check_name, parse_skill_md, render_skill_md

log = logging.getLogger("metaclaw_plugin.skills")

STATE_DIR = ".metaclaw"


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def atomic_write(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new file, never a torn one."""
    path.parent.mkdir(parents=True, exist_ok=True)
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


@dataclass
class LoadResult:
    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(frozen=True)
class StoreState:
    generation: int = 0
    version: int = 0


class SkillStore:
    def __init__(self, root: Path | str):
        self.root = Path(root).expanduser()
        self._state_dir = self.root / STATE_DIR
        self._lock = FileLock(str(self._state_dir / "lock"), timeout=30)

    # Paths ------------------------------------------------------------------------------------
    def skill_path(self, name: str) -> Path:
        check_name(name)  # the name regex alone rules out '/', '..' and absolute paths
        path = (self.root / name / "SKILL.md").resolve()
        if path.parent.parent != self.root.resolve():
            raise SkillFormatError(f"name {name!r} escapes the skills folder")
        return path

    def ensure(self) -> None:
        self._state_dir.mkdir(parents=True, exist_ok=True, mode=0o700)

    # State ------------------------------------------------------------------------------------
    def state(self) -> StoreState:
        try:
            data = json.loads((self._state_dir / "state.json").read_text("utf-8"))
            return StoreState(int(data.get("generation", 0)), int(data.get("version", 0)))
        except (OSError, ValueError):
            return StoreState()

    @property
    def generation(self) -> int:
        return self.state().generation

    def _write_state(self, state: StoreState) -> None:
        atomic_write(self._state_dir / "state.json", json.dumps(state.__dict__).encode())

    def _log(self, event: dict[str, Any]) -> None:
        event = {"at": utc_now_iso(), **event}
        path = self._state_dir / "history.jsonl"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, (json.dumps(event, ensure_ascii=False) + "\n").encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)

    # Reading ----------------------------------------------------------------------------------
    def load(self) -> LoadResult:
        result = LoadResult()
        if not self.root.is_dir():
            return result
        for entry in sorted(self.root.iterdir()):
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            md = entry / "SKILL.md"
            if not md.is_file():
                continue
            try:
                skill = self._read_file(md, entry.name)
            except (SkillFormatError, OSError) as e:
                reason = getattr(e, "strerror", None) or str(e)
                log.warning("skipping skill file %s: %s", md, reason)
                result.problems.append((md, reason))
                continue
            result.skills[skill.name] = skill
        return result

    def _read_file(self, md: Path, expected: str) -> Skill:
        size = md.stat().st_size
        with md.open("rb") as f:
            data = f.read(min(size, 64 * 1024) + 1)
        return parse_skill_md(data, expected_name=expected)

    def read(self, name: str) -> Skill:
        path = self.skill_path(name)
        if not path.is_file():
            raise KeyError(name)
        return self._read_file(path, name)

    def history(self, name: str | None = None) -> list[dict[str, Any]]:
        path = self._state_dir / "history.jsonl"
        out: list[dict[str, Any]] = []
        try:
            lines = path.read_text("utf-8", errors="replace").splitlines()
        except OSError:
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
    ) -> int:
        """Write a batch of new or refined skills and bump the generation once. Returns the generation."""
        skills = list(skills)
        details = details or {}
        self.ensure()
        with self._lock:
            state = self.state()
            generation = state.generation + (1 if bump and skills else 0)
            for s in skills:
                existed = self.skill_path(s.name).is_file()
                s = replace(s, generation=generation, created_at=s.created_at or utc_now_iso())
                atomic_write(self.skill_path(s.name), render_skill_md(s).encode("utf-8"))
                self._log(
                    {
                        "event": "refine" if existed else "add",
                        "skill": s.name,
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

    def seed_from(self, source: Path, *, actor: str = "init") -> tuple[int, int]:
        """Copy bundled skills into the library without touching skills that already exist."""
        self.ensure()
        added = kept = 0
        with self._lock:
            for entry in sorted(Path(source).iterdir()):
                md = entry / "SKILL.md"
                if entry.name.startswith(".") or not md.is_file():
                    continue
                target = self.root / entry.name / "SKILL.md"
                if target.exists():
                    kept += 1
                    continue
                try:
                    parse_skill_md(md.read_bytes(), expected_name=entry.name)
                except SkillFormatError as e:
                    log.warning("not seeding %s: %s", md, e)
                    continue
                atomic_write(target, md.read_bytes())
                added += 1
            if added:
                state = self.state()
                self._write_state(StoreState(state.generation, state.version + 1))
                self._log({"event": "seed", "actor": actor, "count": added, "source": str(source)})
        return added, kept
