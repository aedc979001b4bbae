"""``skills export DIR`` / ``skills import DIR``: move a library between SKILL.md folders and the database."""

from __future__ import annotations

from pathlib import Path

import click

from ..skillbank.store import SkillStore
from ..store.backend import postgres_of
from ..store.postgres import PostgresDatabase
from ..store.skill_library import SharedSkillLibrary
from .common import console, emit_json, fail, json_option, load_settings


def _database(ctx: click.Context) -> PostgresDatabase:
    pg = postgres_of(load_settings(ctx))
    if pg is None:
        fail(
            "the skill library is in the database only with storage.backend: postgres (with sqlite it is the skills folder)"
        )
    return pg


def register(main: click.Group) -> None:
    skills = main.commands["skills"]
    assert isinstance(skills, click.Group)

    @skills.command("export")
    @click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
    @json_option
    @click.pass_context
    def export(ctx: click.Context, folder: Path, as_json: bool) -> None:
        """Write the database's skill library into FOLDER (SKILL.md folders, versions and history)."""
        pg = _database(ctx)
        try:
            written = SharedSkillLibrary(pg, SkillStore(folder)).pull()
        finally:
            pg.close()
        loaded = SkillStore(folder).load()
        out = {"folder": str(folder), "files": written, "skills": len(loaded.skills)}
        emit_json(out) if as_json else console.print(
            f"exported {len(loaded.skills)} skills ({written} files) to {folder}"
        )

    @skills.command("import")
    @click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
    @click.option("--force", is_flag=True, help="Write over a library the database already holds.")
    @json_option
    @click.pass_context
    def import_(ctx: click.Context, folder: Path, force: bool, as_json: bool) -> None:
        """Put the skill library in FOLDER into the database; every host picks it up within seconds."""
        loaded = SkillStore(folder).load()
        if not loaded.skills:
            fail(f"{folder} holds no readable skill (<name>/SKILL.md)")
        pg = _database(ctx)
        try:
            held = int(pg.query("SELECT COUNT(*) FROM skill_files WHERE deleted = 0")[0][0])
            if held and not force:
                fail(f"the database already holds a skill library ({held} files); --force writes over it")
            n = SharedSkillLibrary(pg, SkillStore(folder), host="cli-import").publish(force=True)
        finally:
            pg.close()
        out = {"folder": str(folder), "files": n, "skills": len(loaded.skills), "problems": len(loaded.problems)}
        emit_json(out) if as_json else console.print(f"imported {len(loaded.skills)} skills ({n} files) from {folder}")
