"""``memory list|show|search|add|forget|history|export|import``: what the agent remembers of each user."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..learning.memory.ops import MemoryError_, MemoryOps
from ..store import open_database
from ..text import local_time
from ..types import DEFAULT_TENANT
from .common import console, emit_json, fail, json_option, load_settings, table

tenant_option = click.option("--tenant", default=DEFAULT_TENANT, show_default=True, help="The tenant.")
user_option = click.option("--user", default=None, help="One user (default: every user of the tenant).")


@contextmanager
def _ops(ctx: click.Context) -> Iterator[MemoryOps]:
    s = load_settings(ctx)
    db = open_database(s)
    try:
        yield MemoryOps(db, s)
    except MemoryError_ as e:
        fail(str(e))
    finally:
        db.close()


def _when(ts: float | None) -> str:
    return local_time(ts, fmt="%Y-%m-%d %H:%M")


def _rows(rows: list[dict[str, Any]], title: str) -> None:
    table(
        title,
        ["id", "user", "kind", "status", "said", "text"],
        [[r["id"][:12], r["user"], r["kind"], r["status"], _when(r["valid_from"]), r["text"]] for r in rows],
    )


def _out(as_json: bool, data: Any, human: Callable[[], None]) -> None:
    if as_json:
        emit_json(data)
    else:
        human()


def _full_id(ops: MemoryOps, tenant: str, memory_id: str) -> str:
    """An id as printed (its first 12 characters) or whole."""
    tenant = ops.key(tenant)[0]
    if ops.store.raw(memory_id, tenant) is not None:  # a malformed row too: it can be forgotten
        return memory_id
    hits = [m.id for m in ops.store.find(tenant, statuses=None) if m.id.startswith(memory_id)]
    if len(hits) == 1:
        return hits[0]
    raise MemoryError_(f"no memory {memory_id!r} in tenant {tenant!r}" if not hits else f"{memory_id!r} is ambiguous")


@click.group()
def memory() -> None:
    """What the agent remembers of each user: list, search, add, forget, history, export, import."""


@memory.command("list")
@tenant_option
@user_option
@click.option("--kind", default=None, help="preference, fact, project, event or summary.")
@click.option(
    "--status",
    default="active",
    show_default=True,
    help="active, superseded, forgotten, quarantined, expired, all, or malformed (rows no reader can use).",
)
@click.option("--limit", default=200, show_default=True)
@json_option
@click.pass_context
def list_(
    ctx: click.Context, tenant: str, user: str | None, kind: str | None, status: str, limit: int, as_json: bool
) -> None:
    with _ops(ctx) as ops:
        rows = ops.list_(tenant, user, kind, status, limit)
        bad = len(ops.malformed(tenant, user)) if not as_json and status != "malformed" else 0
    if status == "malformed":
        _out(
            as_json,
            rows,
            lambda: table(
                f"malformed rows of tenant {tenant}",
                ["id", "user", "status", "why"],
                [[r["id"], r["user"], r["status"], r["why"]] for r in rows],
            ),
        )
        return
    _out(as_json, rows, lambda: _rows(rows, f"memories of tenant {tenant} ({status})"))
    if bad:
        console.print(
            f"{bad} malformed row(s) skipped: `memory list --status malformed` shows them, `memory forget ID` "
            "removes one",
            highlight=False,
        )


@memory.command()
@click.argument("memory_id")
@tenant_option
@json_option
@click.pass_context
def show(ctx: click.Context, memory_id: str, tenant: str, as_json: bool) -> None:
    with _ops(ctx) as ops:
        d = ops.show(_full_id(ops, tenant, memory_id), tenant)

    def human() -> None:
        console.print(f"[bold]{d['id']}[/]  {d['kind']}  {d['status']}  user {d['user']}", highlight=False)
        console.print(d["text"] or "(erased)", markup=False)
        if d.get("screen"):
            console.print("quarantined: " + "; ".join(d["screen"].get("reasons", [])), markup=False)
        for h in d["history"]:
            console.print(f"  {_when(h['at'])}  {h['action']}  {h['detail'] or ''}", markup=False)

    _out(as_json, d, human)


@memory.command()
@click.argument("query")
@tenant_option
@user_option
@click.option("--limit", default=20, show_default=True)
@json_option
@click.pass_context
def search(ctx: click.Context, query: str, tenant: str, user: str | None, limit: int, as_json: bool) -> None:
    with _ops(ctx) as ops:
        rows = ops.search(query, tenant, user, limit)
    _out(as_json, rows, lambda: _rows(rows, f"memories matching {query!r}"))


@memory.command()
@click.argument("text")
@tenant_option
@user_option
@click.option("--kind", default=None, help="preference, fact, project, event (default: as the rules read it).")
@json_option
@click.pass_context
def add(ctx: click.Context, text: str, tenant: str, user: str | None, kind: str | None, as_json: bool) -> None:
    with _ops(ctx) as ops:
        m = ops.add(text, tenant, user, kind)
    _out(as_json, m, lambda: console.print(f"{m['status']}: {m['id']} ({m['kind']})", highlight=False))


@memory.command()
@click.argument("memory_id", required=False)
@click.option("--about", default=None, help="Forget the user's memories this text describes.")
@tenant_option
@user_option
@json_option
@click.pass_context
def forget(
    ctx: click.Context, memory_id: str | None, about: str | None, tenant: str, user: str | None, as_json: bool
) -> None:
    with _ops(ctx) as ops:
        gone = ops.forget(tenant, _full_id(ops, tenant, memory_id) if memory_id else None, user, about)
    _out(as_json, {"forgotten": gone}, lambda: console.print(f"forgotten: {len(gone)}", highlight=False))


@memory.command()
@click.argument("memory_id")
@tenant_option
@json_option
@click.pass_context
def history(ctx: click.Context, memory_id: str, tenant: str, as_json: bool) -> None:
    with _ops(ctx) as ops:
        rows = ops.history(_full_id(ops, tenant, memory_id), tenant)
    _out(
        as_json,
        rows,
        lambda: table(
            "history",
            ["at", "action", "text", "detail"],
            [[_when(h["at"]), h["action"], h["text"], h["detail"]] for h in rows],
        ),
    )


@memory.command()
@tenant_option
@user_option
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None, help="File (default: stdout).")
@click.pass_context
def export(ctx: click.Context, tenant: str, user: str | None, out: str | None) -> None:
    with _ops(ctx) as ops:
        doc = ops.export(tenant, user)
    if out:
        p = Path(out)
        p.touch(mode=0o600)
        p.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
        console.print(f"exported {len(doc['memories'])} memories to {p}", highlight=False)
    else:
        emit_json(doc)


@memory.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
@tenant_option
@click.option("--user", default=None, help="File them as this user's (default: the tenant's default user).")
@json_option
@click.pass_context
def import_(ctx: click.Context, path: str, tenant: str, user: str | None, as_json: bool) -> None:
    """Import an export: every row passes the gates of `memory add` and is filed as a statement of --tenant and
    --user (never the file's); its status and screen are not trusted; malformed rows are rejected one by one."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        fail(f"{path}: not a JSON file: {e}")
    with _ops(ctx) as ops:
        rep = ops.import_(doc, tenant, user)

    def human() -> None:
        console.print(
            f"imported {rep['imported']} memories ({rep['quarantined']} quarantined), rejected {len(rep['rejected'])}",
            highlight=False,
        )
        for r in rep["rejected"][:50]:
            console.print(f"  row {r['row']}: {r['why']}", markup=False, highlight=False)
        said = rep["passages"]
        console.print(
            f"imported {said['imported']} passages ({said['quarantined']} quarantined), rejected {len(said['rejected'])}",
            highlight=False,
        )
        for r in said["rejected"][:50]:
            console.print(f"  passage {r['row']}: {r['why']}", markup=False, highlight=False)

    _out(as_json, rep, human)


def register(main: click.Group) -> None:
    for command in (memory,):
        main.add_command(command)
