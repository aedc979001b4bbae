"""``skills list|show|add|approve|retire|history``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from ..skillbank.skillmd import SkillFormatError, parse_skill_md
from ..skillbank.store import SkillStore
from .common import console, emit_json, fail, json_option, load_settings, table


def _store(ctx: click.Context) -> SkillStore:
    return SkillStore(load_settings(ctx).skills_path)


def register(main: click.Group) -> None:
    @main.group()
    def skills() -> None:
        """Inspect and manage the skill library."""

    @skills.command("list")
    @click.option("--status", type=click.Choice(["active", "quarantined", "retired"]), default=None)
    @json_option
    @click.pass_context
    def list_(ctx: click.Context, status: str | None, as_json: bool) -> None:
        """List skills (name, category, status, origin, generation)."""
        result = _store(ctx).load()
        items = [s for s in result.skills.values() if status is None or s.status == status]
        if as_json:
            emit_json([s.summary() for s in items])
            return
        table(f"{len(items)} skills", ["name", "category", "status", "origin", "gen", "description"],
              [[s.name, s.category, s.status, s.origin, s.generation, s.description[:90]] for s in items])
        for p, r in result.problems:
            console.print(f"[yellow]skipped[/] {p}: {r}", highlight=False)

    @skills.command()
    @click.argument("name")
    @json_option
    @click.pass_context
    def show(ctx: click.Context, name: str, as_json: bool) -> None:
        """Show one skill with its body."""
        try:
            skill = _store(ctx).read(name)
        except KeyError:
            fail(f"no skill named {name!r}")
            return
        except SkillFormatError as e:
            fail(f"skill {name!r} cannot be read: {e}")
            return
        if as_json:
            emit_json({**skill.summary(), "body": skill.body, "source_sessions": skill.source_sessions,
                       "created_at": skill.created_at})
            return
        console.print(f"[bold]{skill.name}[/]  ({skill.category}; {skill.status}; {skill.origin}; generation {skill.generation})")
        console.print(skill.description, highlight=False)
        console.print()
        console.print(skill.body, highlight=False, markup=False)

    @skills.command()
    @click.argument("path", type=click.Path(exists=True, path_type=Path))
    @json_option
    @click.pass_context
    def add(ctx: click.Context, path: Path, as_json: bool) -> None:
        """Add a skill from a folder or a SKILL.md file; it is active at once (origin: user)."""
        md = path / "SKILL.md" if path.is_dir() else path
        if not md.is_file():
            fail(f"{path}: no SKILL.md there")
        try:
            skill = parse_skill_md(md.read_bytes())
        except SkillFormatError as e:
            fail(f"{md}: {e}")
            return
        from ..screening import screen

        settings = load_settings(ctx)
        store = SkillStore(settings.skills_path)
        skill = replace(skill, origin="user", status="active", tenant=None)
        result = screen(skill, max_body_chars=settings.evolution.max_body_chars)
        if result.verdict == "rejected":
            store.ensure()
            store._log({"event": "reject", "skill": skill.name, "actor": "cli", "origin": "user",
                        "reason": f"skills add {md}", "screening": result.as_dict()})
            if as_json:
                emit_json({**skill.summary(), "status": "refused", "screening": result.as_dict()})
                raise SystemExit(1)
            fail(f"{md}: refused by screening:\n  - " + "\n  - ".join(result.reasons))
            return
        status = "active" if result.verdict == "clean" else "quarantined"
        meta = {**skill.extra_metadata, "screening": result.verdict, "promotion": "user" if status == "active" else "review"}
        skill = replace(skill, status=status, extra_metadata=meta)
        details = {skill.name: {"screening": result.as_dict(), "promotion": {"policy": "user", "decision": status}}}
        gen = store.add_batch([skill], actor="cli", reason=f"skills add {md}", details=details)
        if as_json:
            emit_json({**skill.summary(), "generation": gen, "status": status, "screening": result.as_dict()})
        elif status == "active":
            console.print(f"added [bold]{skill.name}[/] (active, generation {gen})")
        else:
            console.print(f"added [bold]{skill.name}[/] but [yellow]quarantined[/]: screening found something to check:",
                          highlight=False)
            for r in result.reasons:
                console.print(f"  - {r}", highlight=False, markup=False)
            console.print(f"read it, then `metaclaw-plugin skills approve {skill.name} --force` to activate it")
        if status != "active":
            raise SystemExit(3)

    def _set(ctx: click.Context, name: str, status: str, reason: str, as_json: bool, force: bool = False) -> None:
        store = _store(ctx)
        if status == "active":
            from ..screening import screen

            try:
                current = store.read(name)
            except KeyError:
                fail(f"no skill named {name!r}")
                return
            except SkillFormatError as e:
                fail(f"skill {name!r} cannot be read: {e}")
                return
            result = screen(current, strict_provenance=False,
                            max_body_chars=load_settings(ctx).evolution.max_body_chars)
            if result.verdict == "rejected":
                fail(f"{name}: screening refuses it; edit the skill first:\n  - " + "\n  - ".join(result.reasons))
            if result.verdict == "suspicious" and not force:
                fail(f"{name}: screening flags it (pass --force after reading it):\n  - " + "\n  - ".join(result.reasons))
            reason = f"{reason} (screening: {result.verdict})"
        try:
            skill = store.set_status(name, status, actor="cli", reason=reason, bump=status == "active")
        except KeyError:
            fail(f"no skill named {name!r}")
            return
        if as_json:
            emit_json(skill.summary())
        else:
            console.print(f"{name}: now {status}")

    @skills.command()
    @click.argument("name")
    @click.option("--reason", default="approved by a person")
    @json_option
    @click.pass_context
    @click.option("--force", is_flag=True, help="Approve although screening flags the skill as suspicious (read it first).")
    def approve(ctx: click.Context, name: str, reason: str, as_json: bool, force: bool) -> None:
        """Make a quarantined skill active (it is screened again; a rejected one is refused)."""
        _set(ctx, name, "active", reason, as_json, force)

    @skills.command()
    @click.argument("name")
    @click.option("--reason", default="retired by a person")
    @json_option
    @click.pass_context
    def retire(ctx: click.Context, name: str, reason: str, as_json: bool) -> None:
        """Stop injecting a skill (kept on disk, with its history)."""
        _set(ctx, name, "retired", reason, as_json)

    @skills.command()
    @json_option
    @click.pass_context
    def index(ctx: click.Context, as_json: bool) -> None:
        """Build the embedding index now (embedding/hybrid retrieval), with a progress bar."""
        from rich.progress import Progress

        settings = load_settings(ctx)
        active = [s for s in SkillStore(settings.skills_path).load().skills.values() if s.status == "active"]
        if settings.retrieval.mode == "keyword":
            result = {"mode": "keyword", "skills": len(active), "detail": "keyword retrieval indexes in memory at start"}
        else:
            from ..skillbank.embedding import build_embedding_index, collection_name

            with Progress(console=console, transient=True, disable=as_json) as bar:
                task = bar.add_task("embedding skills", total=None)
                try:
                    build_embedding_index(settings, active, settings.retrieval.mode,
                                          lambda done, total: bar.update(task, completed=done, total=total))
                except Exception as e:
                    fail(f"cannot build the embedding index: {e}")
            result = {"mode": settings.retrieval.mode, "skills": len(active), "index": str(settings.index_path)
                      if settings.retrieval.chroma_mode == "persistent" else f"chroma http {settings.retrieval.chroma_host}",
                      "collection": collection_name(settings)}
        if as_json:
            emit_json(result)
        else:
            console.print(f"indexed {result['skills']} active skills ({result['mode']})")

    @skills.command()
    @click.argument("name", required=False)
    @json_option
    @click.pass_context
    def history(ctx: click.Context, name: str | None, as_json: bool) -> None:
        """Who added or changed which skill, when and why."""
        events = _store(ctx).history(name)
        if as_json:
            emit_json(events)
            return
        table("skill history", ["at", "event", "skill", "actor", "details"],
              [[e.get("at"), e.get("event"), e.get("skill", ""), e.get("actor"),
                ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("at", "event", "skill", "actor"))[:120]]
               for e in events])
