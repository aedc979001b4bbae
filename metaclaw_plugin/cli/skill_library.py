"""``skills export DIR`` / ``skills import DIR``: move a library between SKILL.md folders and the database.

An imported folder is someone's pack: it is read without following any link (a link anywhere refuses the import,
named, its target never read), every skill's files are screened like a skill body (a rejected one refuses the
import), and every file is redacted before it reaches the database (:class:`SharedSkillLibrary` publishes so)."""

from __future__ import annotations

import re
from pathlib import Path

import click

from ..config import Settings
from ..privacy import redactor_for
from ..skillbank.files import STATE_DIR, SkillStore
from ..skillbank.skillmd import SkillFormatError, parse_skill_md
from ..store.backend import postgres_of
from ..store.pg_library import SharedSkillLibrary, held_files, library_files
from ..store.postgres import PostgresDatabase
from ..types import Skill
from .common import console, emit_json, fail, json_option, load_settings

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _database(ctx: click.Context) -> PostgresDatabase:
    pg = postgres_of(load_settings(ctx))
    if pg is None:
        fail(
            "the skill library is in the database only with storage.backend: postgres (with sqlite it is the skills folder)"
        )
    return pg


def screen_pack(files: dict[str, bytes], settings: Settings) -> list[str]:
    """Why the pack must not be imported: each skill's SKILL.md, its versions' texts and every other file of its
    folder, screened like a skill (the rules, the secret check); empty when all pass."""
    from ..learning.screening import screen

    redactor = redactor_for(settings.privacy)
    out: list[str] = []
    for rel, data in sorted(files.items()):
        parts = rel.split("/")
        versioned = parts[:2] == [STATE_DIR, "versions"] and len(parts) == 4 and parts[3].endswith(".md")
        if parts[0] == STATE_DIR and not versioned:
            continue  # the library's own state: redacted on its way out, nothing in it reaches a prompt
        text = data.decode("utf-8", "replace")
        try:
            if versioned or parts[1:] == ["SKILL.md"]:
                skill = parse_skill_md(data, expected_name=parts[2] if versioned else parts[0])
                result = screen(skill, max_body_chars=settings.evolution.max_body_chars, redactor=redactor)
            else:  # any other file of a skill folder: its text screened as a body
                body = _CONTROL.sub(" ", text)
                part = Skill(name="pack-file", description=f"file {rel}", body=body)
                result = screen(part, max_body_chars=len(body) + 1, strict_provenance=False, redactor=redactor)
        except SkillFormatError:
            continue  # counted as a problem of the folder; never served
        if result.verdict == "rejected":
            out.append(f"{rel}: " + "; ".join(result.reasons))
    return out


@click.command("export")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@json_option
@click.pass_context
def export(ctx: click.Context, folder: Path, as_json: bool) -> None:
    """Write the database's skill library into FOLDER (SKILL.md folders, versions and history)."""
    pg = _database(ctx)
    settings = load_settings(ctx)
    if folder.is_symlink():
        pg.close()
        fail(f"{folder} is a symbolic link: not written through (links are never followed); give the folder itself")
    try:
        library = SharedSkillLibrary(pg, SkillStore(folder), "cli-export", redactor_for(settings.privacy))
        written = library.pull()
    finally:
        pg.close()
    loaded = SkillStore(folder).load()
    refused = [{"path": k, **v} for k, v in sorted(library.refused.items())]
    out = {"folder": str(folder), "files": written, "skills": len(loaded.skills), "refused": refused}
    if as_json:
        emit_json(out)
        return
    console.print(f"exported {len(loaded.skills)} skills ({written} files) to {folder}", highlight=False)
    for r in refused:
        console.print(f"[yellow]refused[/] {r['path']!r}: {r['reason']}", highlight=False)


@click.command("import")
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Write over a library the database already holds.")
@json_option
@click.pass_context
def import_(ctx: click.Context, folder: Path, force: bool, as_json: bool) -> None:
    """Put the skill library in FOLDER into the database; every host picks it up within seconds."""
    pack = library_files(folder)
    if pack.refused:
        fail(f"{folder} is not imported: " + pack.refusal())
    loaded = SkillStore(folder).load()
    if not loaded.skills:
        fail(f"{folder} holds no readable skill (<name>/SKILL.md)")
    rejected = screen_pack(pack.files, load_settings(ctx))
    if rejected:
        fail(f"{folder} is not imported: screening rejects\n  - " + "\n  - ".join(rejected))
    pg = _database(ctx)
    try:
        held = held_files(pg)
        if held and not force:
            fail(f"the database already holds a skill library ({held} files); --force writes over it")
        redactor = redactor_for(load_settings(ctx).privacy)
        n = SharedSkillLibrary(pg, SkillStore(folder), "cli-import", redactor).publish(force=True)
    finally:
        pg.close()
    out = {"folder": str(folder), "files": n, "skills": len(loaded.skills), "problems": len(loaded.problems)}
    emit_json(out) if as_json else console.print(f"imported {len(loaded.skills)} skills ({n} files) from {folder}")


def register(main: click.Group) -> None:
    group = main.commands["skills"]
    assert isinstance(group, click.Group)
    for command in (export, import_):
        group.add_command(command)
