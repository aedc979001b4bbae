"""``skills list|show|add|approve|retire|history|rollback|index``."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from ..config import Settings
from ..learning.approval import ApprovalRefused, trial_evidence
from ..learning.approval import approve as approve_skill
from ..learning.approval import label as skill_label
from ..privacy import redactor_for
from ..skillbank.files import SkillStore
from ..skillbank.safefs import LinkRefused, read_under
from ..skillbank.skillmd import MAX_FILE_BYTES, SkillFormatError, kind_reason, parse_skill_md, render_skill_md
from ..store import open_database
from ..store.backend import reading_home
from ..types import Skill, SkillKind, SkillStatus
from .common import console, emit_json, err_console, fail, json_option, load_settings, table


def _store(ctx: click.Context) -> SkillStore:
    return SkillStore(load_settings(ctx).skills_path)


@contextmanager
def _skill_errors(name: str) -> Iterator[None]:
    """A missing or unreadable skill becomes the CLI's plain error."""
    try:
        yield
    except KeyError:
        fail(f"no skill named {name!r}")
    except SkillFormatError as e:
        fail(f"skill {name!r} cannot be read: {e}")


@click.group()
def skills() -> None:
    """Inspect and manage the skill library."""


@skills.command("list")
@click.option("--status", type=click.Choice(["active", "quarantined", "trial", "retired"]), default=None)
@json_option
@click.pass_context
def list_(ctx: click.Context, status: str | None, as_json: bool) -> None:
    """List skills (name, category, status, origin, version, generation). A skill on shadow trial
    shows as ``trial`` with its arm share and evidence; a new version waiting for its trial or
    review shows next to the version being served."""
    settings = load_settings(ctx)
    result = SkillStore(settings.skills_path).load()
    with reading_home(settings) as query:
        evidence = trial_evidence(result, query)
    share = settings.evolution.shadow_fraction
    rows = []
    for s in result.skills.values():
        label = skill_label(s, result.pending.get(s.name))
        if status is not None and label.split(" ")[0] != status:
            continue
        item: dict[str, Any] = {**s.summary(), "label": label, "version": s.extra_metadata.get("version", 1)}
        pend = result.pending.get(s.name)
        if pend is not None:
            item["pending"] = {
                "version": pend.extra_metadata.get("version"),
                "state": pend.extra_metadata.get("pending"),
            }
        if s.name in evidence:
            item["trial"] = {"arm_share": share, **evidence[s.name]}
        rows.append(item)
    if as_json:
        emit_json(rows)
        for p, r in result.problems:  # the JSON keeps its shape; what could not be listed goes to stderr
            err_console.print(f"skipped {p}: {r}", highlight=False, markup=False, soft_wrap=True)
        return

    def trial_text(item: dict[str, Any]) -> str:
        t = item.get("trial")
        if not t:
            return ""
        return (
            f"{t['arm_share']:.0%} of matches; with {t['s_with']}/{t['n_with']} ok, "
            f"without {t['s_without']}/{t['n_without']} ok, P(better) {t['p_better']:.2f}"
        )

    columns = ["name", "kind", "category", "status", "origin", "ver", "gen", "trial", "description"]
    cells = [
        [
            i["name"],
            i["kind"],
            i["category"],
            i["label"],
            i["origin"],
            i["version"],
            i["generation"],
            trial_text(i),
            i["description"][:70],
        ]
        for i in rows
    ]
    if console.width < 120:  # nine columns do not fit: keep the name whole and drop the free text
        keep = [columns.index(c) for c in ("name", "status", "origin", "ver", "gen")]
        columns, cells = [columns[k] for k in keep], [[r[k] for k in keep] for r in cells]
    table(f"{len(rows)} skills", columns, cells)
    if len(columns) < 9:
        console.print("(kind, category, trial and description: a wider terminal, or --json)", highlight=False)
    for p, r in result.problems:
        console.print(f"[yellow]skipped[/] {p}: {r}", highlight=False)


@skills.command()
@click.argument("name")
@json_option
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Show one skill with its body."""
    store = _store(ctx)
    with _skill_errors(name):
        skill = store.read(name)
    evidence = screening_evidence(store, skill)
    if as_json:
        emit_json(
            {
                **skill.summary(),
                "body": skill.body,
                "source_sessions": skill.source_sessions,
                "created_at": skill.created_at,
                "kind_reason": kind_reason(skill),
                **evidence,
            }
        )
        return
    console.print(
        f"[bold]{skill.name}[/]  ({skill.category}; {skill.status}; {skill.origin}; generation {skill.generation})"
    )
    console.print(skill.description, highlight=False)
    why = kind_reason(skill)
    inferred = f" (inferred: {why}; `skills set-kind` or metadata.kind overrides it)" if why else ""
    console.print(f"kind: {skill.kind}{inferred}", highlight=False, markup=False)
    scr = evidence["screening"]
    console.print(f"screening: {scr.get('verdict') or 'not recorded'}", highlight=False, markup=False)
    for r in scr.get("reasons") or []:
        console.print(f"  - {r}", highlight=False, markup=False)
    rev = evidence["review"]
    if rev:
        console.print(
            f"model review: {rev.get('verdict')} ({rev.get('model') or 'unknown model'})",
            highlight=False,
            markup=False,
        )
        for r in rev.get("reasons") or []:
            console.print(f"  - {r}", highlight=False, markup=False)
    else:
        console.print("model review: none recorded", highlight=False, markup=False)
    if evidence["trusted"]:
        console.print("trusted: yes (added with --trust; the model review was skipped)", highlight=False)
    console.print()
    console.print(skill.body, highlight=False, markup=False)


@skills.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--trust",
    is_flag=True,
    help="The skill is your own: skip the model review (the deterministic screen still applies).",
)
@click.option(
    "--replace",
    "replace_existing",
    is_flag=True,
    help="A skill of that name exists: add this as its new version (the old one is kept in history).",
)
@json_option
@click.pass_context
def add(ctx: click.Context, path: Path, trust: bool, replace_existing: bool, as_json: bool) -> None:
    """Add a skill from a folder or a SKILL.md file (origin: user). It is screened by the rules and,
    when a judge or evolver model is configured, reviewed by that model; it is active at once only
    when both pass, else it is quarantined for a person (or refused when the rules reject it)."""
    md = path / "SKILL.md" if path.is_dir() and not path.is_symlink() else path
    try:  # no link is followed: neither PATH itself nor its SKILL.md
        data = read_under(md.parent, [md.name], max_bytes=MAX_FILE_BYTES)
        skill = parse_skill_md(data)
    except (FileNotFoundError, IsADirectoryError):
        fail(f"{path}: no SKILL.md there")
        return
    except LinkRefused as e:
        fail(f"refused: {e}")
        return
    except SkillFormatError as e:
        fail(f"{md}: {e}")
        return
    except OSError as e:
        fail(f"{md}: cannot be read: {e.strerror or e}")
        return
    from ..learning.screening import screen

    settings = load_settings(ctx)
    store = SkillStore(settings.skills_path)
    if not replace_existing and (store.root / skill.name / "SKILL.md").is_file():
        fail(
            f"a skill named {skill.name!r} exists already; pass --replace to add this as its new version "
            f"(`metaclaw-plugin skills history` keeps the old one, `skills rollback {skill.name}` restores it)",
            code=2,
        )
    skill = replace(skill, origin="user", status="active", tenant=None)
    result = screen(
        skill,
        max_body_chars=settings.evolution.max_body_chars,
        redactor=redactor_for(settings.privacy),
    )
    if result.verdict == "rejected":
        # --trust does not lift this: what the rules reject (an override, an exfiltration, a hidden
        # payload) has no place in a prompt whoever wrote it; edit the skill instead.
        store.ensure()
        store._log(
            {
                "event": "reject",
                "skill": skill.name,
                "actor": "cli",
                "origin": "user",
                "reason": f"skills add {md}",
                "trusted": trust,
                "screening": result.as_dict(),
            }
        )
        if as_json:
            emit_json({**skill.summary(), "status": "refused", "screening": result.as_dict()})
            raise SystemExit(1)
        fail(f"{md}: refused by screening:\n  - " + "\n  - ".join(result.reasons))
        return
    review, review_note = _model_review(settings, skill, trust, result.verdict)
    passed = result.verdict == "clean" and (review is None or review["verdict"] == "safe")
    status: SkillStatus = "active" if passed else "quarantined"
    meta: dict[str, Any] = {
        **skill.extra_metadata,
        "screening": result.verdict,
        "promotion": "user" if status == "active" else "review",
    }
    meta.pop("trusted", None)
    meta.pop("review", None)
    if review is not None:
        meta["review"] = review
    if trust:
        meta["trusted"] = True
    skill = replace(skill, status=status, extra_metadata=meta)
    details: dict[str, dict[str, Any]] = {
        skill.name: {
            "screening": result.as_dict(),
            "review": review or {"verdict": "skipped", "why": review_note},
            "trusted": trust,
            "promotion": {"policy": "user", "decision": status},
        }
    }
    gen = store.add_batch([skill], actor="cli", reason=f"skills add {md}", details=details)
    if as_json:
        emit_json(
            {
                **skill.summary(),
                "generation": gen,
                "status": status,
                "screening": result.as_dict(),
                "review": review or {"verdict": "skipped", "why": review_note},
                "trusted": trust,
            }
        )
    else:
        if review is None:
            console.print(f"model review: {review_note}", highlight=False, markup=False)
        if status == "active":
            console.print(f"added [bold]{skill.name}[/] (active, generation {gen})")
        else:
            console.print(
                f"added [bold]{skill.name}[/] but [yellow]quarantined[/]: screening found something to check:",
                highlight=False,
            )
            for r in result.reasons:
                console.print(f"  - {r}", highlight=False, markup=False)
            if review is not None and review["verdict"] != "safe":
                console.print(f"  - model review ({review['model']}): {review['verdict']}", highlight=False)
                for r in review["reasons"]:
                    console.print(f"    - {r}", highlight=False, markup=False)
            console.print(f"read it, then `metaclaw-plugin skills approve {skill.name} --force` to activate it")
    if status != "active":
        raise SystemExit(3)


def _set(ctx: click.Context, name: str, status: str, reason: str, as_json: bool, force: bool = False) -> None:
    store = _store(ctx)
    try:
        if status == "active":
            with _skill_errors(name):
                skill = approve_skill(
                    store,
                    name,
                    max_body_chars=load_settings(ctx).evolution.max_body_chars,
                    redactor=redactor_for(load_settings(ctx).privacy),
                    actor="cli",
                    reason=reason,
                    force=force,
                )
        else:
            skill = store.set_status(name, status, actor="cli", reason=reason)
    except ApprovalRefused as e:
        fail(str(e).replace("approve with force", "pass --force"))
        return
    except KeyError:
        fail(f"no skill named {name!r}")
        return
    version = skill.extra_metadata.get("version", 1)
    if as_json:
        emit_json({**skill.summary(), "version": version})
    else:
        console.print(f"{name}: now {status} (version {version})")


@skills.command()
@click.argument("name")
@click.option("--reason", default="approved by a person")
@json_option
@click.pass_context
@click.option("--force", is_flag=True, help="Approve although screening flags the skill as suspicious (read it first).")
def approve(ctx: click.Context, name: str, reason: str, as_json: bool, force: bool) -> None:
    """Make a quarantined skill active, or serve the new version waiting for review or trial (it is
    screened again; a rejected one is refused)."""
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
        result = {
            "mode": "keyword",
            "skills": len(active),
            "detail": "keyword retrieval indexes in memory at start",
        }
    else:
        from ..skillbank.embedding import build_embedding_index, collection_name

        with Progress(console=console, transient=True, disable=as_json) as bar:
            task = bar.add_task("embedding skills", total=None)
            try:
                build_embedding_index(
                    settings,
                    active,
                    settings.retrieval.mode,
                    lambda done, total: bar.update(task, completed=done, total=total),
                )
            except Exception as e:
                fail(f"cannot build the embedding index: {e}")
        from ..skillbank.embedding import is_static

        result = {"mode": settings.retrieval.mode, "skills": len(active)}
        if is_static(settings.retrieval.embedding_model):  # vectors in memory, encoded at start: nothing kept
            result["index"] = f"in memory ({settings.retrieval.embedding_model}, encoded at start)"
        else:
            result["index"] = (
                str(settings.index_path)
                if settings.retrieval.chroma_mode == "persistent"
                else f"chroma http {settings.retrieval.chroma_host}"
            )
            result["collection"] = collection_name(settings)
    if as_json:
        emit_json(result)
    else:
        console.print(f"indexed {result['skills']} active skills ({result['mode']})")


@skills.command()
@click.argument("name", required=False)
@json_option
@click.pass_context
def history(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """Who added or changed which skill, when and why. With NAME: its versions, each with the
    diff from the version before it."""
    store = _store(ctx)
    events = store.history(name)
    if name is None:
        if as_json:
            emit_json(events)
            return
        table("skill history", ["at", "event", "skill", "actor", "details"], [_event_row(e) for e in events])
        return
    versions = store.versions(name)
    if not versions and not events:
        fail(f"no skill named {name!r}")
    out, before = [], ""
    for v in versions:
        try:
            text = render_skill_md(store.read_version(name, v["version"]))
        except (KeyError, SkillFormatError, OSError) as e:
            text = f"(unreadable: {e})\n"
        diff = "".join(
            difflib.unified_diff(
                before.splitlines(True),
                text.splitlines(True),
                f"{name} v{v['version'] - 1}" if before else "/dev/null",
                f"{name} v{v['version']}",
            )
        )
        out.append({**v, "diff": diff})
        before = text
    if as_json:
        emit_json({"skill": name, "versions": out, "events": events})
        return
    table(
        f"{name}: {len(out)} version(s)",
        ["version", "state", "at", "actor", "action", "gen"],
        [
            [
                v["version"],
                v.get("state"),
                v.get("at") or "",
                v.get("actor") or "",
                v.get("action") or "",
                v.get("generation", ""),
            ]
            for v in out
        ],
    )
    for v in out[1:]:
        console.print(f"[bold]v{v['version'] - 1} -> v{v['version']}[/]")
        console.print(v["diff"] or "(no change)", highlight=False, markup=False)
    table("events", ["at", "event", "skill", "actor", "details"], [_event_row(e) for e in events])


@skills.command("set-kind")
@click.argument("name")
@click.argument("kind", type=click.Choice(["convention", "procedure"]))
@click.option("--reason", default="set by a person")
@json_option
@click.pass_context
def set_kind(ctx: click.Context, name: str, kind: SkillKind, reason: str, as_json: bool) -> None:
    """Make a skill a convention (a standing rule, injected on every main turn of its tenant within
    injection.convention_tokens) or a procedure (task knowledge, injected when a request needs it)."""
    with _skill_errors(name):
        skill = _store(ctx).set_kind(name, kind, actor="cli", reason=reason)
    if as_json:
        emit_json({**skill.summary(), "version": skill.extra_metadata.get("version", 1)})
    else:
        console.print(f"{name}: now a {kind} (generation {skill.generation})")


@skills.command()
@click.argument("name")
@click.option("--to", "to", type=int, default=None, help="The version to serve again (default: the one before).")
@click.option("--reason", default="rolled back by a person")
@json_option
@click.pass_context
def rollback(ctx: click.Context, name: str, to: int | None, reason: str, as_json: bool) -> None:
    """Serve an earlier version of a skill again (kept as a new version, active, new generation)."""
    store = _store(ctx)
    try:
        skill = store.rollback(name, to, actor="cli", reason=reason)
    except KeyError as e:
        fail(f"no skill named {name!r}" if str(e).strip("'") == name else str(e).strip("'\""))
        return
    except ValueError as e:
        fail(str(e))
        return
    version = skill.extra_metadata.get("version")
    if as_json:
        emit_json({**skill.summary(), "version": version, "restored": to or "previous"})
    else:
        console.print(
            f"{name}: version {version} now served (restored from "
            f"{'v' + str(to) if to else 'the previous version'}), generation {skill.generation}"
        )


def register(main: click.Group) -> None:
    for command in (skills,):
        main.add_command(command)


def _event_row(e: dict[str, Any]) -> list[Any]:
    return [
        e.get("at"),
        e.get("event"),
        e.get("skill", ""),
        e.get("actor"),
        ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("at", "event", "skill", "actor"))[:120],
    ]


def _model_review(settings: Settings, skill: Skill, trust: bool, screening: str) -> tuple[dict[str, Any] | None, str]:
    """The model review of a skill added from outside: (its record, or None when skipped; why skipped)."""
    if trust:
        return None, "skipped: trusted by the user (--trust)"
    from ..learning.screening_model import reviewer_from_settings

    budget = None
    try:
        from ..learning.llm import Budget

        if settings.storage.backend == "postgres" or settings.db_file.parent.is_dir():
            budget = Budget(
                open_database(settings),
                {
                    "judge": (settings.reward.daily_calls, settings.reward.daily_tokens),
                    "evolver": (settings.evolution.daily_calls, settings.evolution.daily_tokens),
                },
            )
    except Exception:  # no database: the call is still redacted, just not counted
        budget = None
    reviewer = reviewer_from_settings(settings, budget=budget)
    if reviewer is None:
        return None, "off (no reward.model or evolution.model configured; deterministic screening only)"
    try:
        return reviewer.review(skill).as_dict(), ""
    finally:
        if budget is not None:
            budget.close()


def screening_evidence(store: SkillStore, skill: Skill) -> dict[str, Any]:
    """What the screening said about a skill: from its metadata, and the reasons from the latest history
    event that carries a screening record."""
    ev = next((e for e in reversed(store.history(skill.name)) if isinstance(e.get("screening"), dict)), None)
    screening: dict[str, Any] = {"verdict": skill.extra_metadata.get("screening"), "reasons": [], "codes": []}
    if ev is not None:
        screening = {**screening, **ev["screening"]}
        if skill.extra_metadata.get("screening") is None:
            screening["verdict"] = ev["screening"].get("verdict")
    review = skill.extra_metadata.get("review")
    if not isinstance(review, dict) and ev is not None and isinstance(ev.get("review"), dict):
        review = ev["review"]
    out: dict[str, Any] = {"screening": screening, "review": review if isinstance(review, dict) else None}
    trusted = bool(skill.extra_metadata.get("trusted")) or bool(ev and ev.get("trusted"))
    out["trusted"] = trusted
    if ev is not None:
        out["screened_at"] = ev.get("at")
        out["screened_by"] = ev.get("actor")
    return out
