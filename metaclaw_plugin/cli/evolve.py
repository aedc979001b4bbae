"""``evolve``: run skill evolution now (all pending work, or one session), optionally as a dry run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from .common import console, emit_json, fail, json_option, table, with_plugin

if TYPE_CHECKING:
    from ..plugin import MetaClawPlugin


@click.command()
@click.option(
    "--session",
    "session_id",
    default=None,
    help="Evolve from this session's failed turns (all its main turns if none failed).",
)
@click.option("--tenant", default=None, help="The session's tenant, when the same id exists in several.")
@click.option("--dry-run", is_flag=True, help="Call the evolver and screen its candidates, but write nothing.")
@json_option
@click.pass_context
def evolve(ctx: click.Context, session_id: str | None, tenant: str | None, dry_run: bool, as_json: bool) -> None:
    """Run skill evolution now, in the foreground.

    Without --session it scores pending turns, reviews ended sessions and runs the queued
    evolution jobs. The evolver and judge calls count against the daily budget, dry run included."""

    def run(plugin: MetaClawPlugin) -> list[dict[str, Any]]:
        loop = plugin.learning
        if loop is None:
            fail("the fast loop is not available (see `metaclaw-plugin doctor` and the log)")
        reason = loop.evolver.available()
        if reason:
            fail(f"cannot evolve: {reason}. Set evolution.model (and api_base/api_key) in the config.")
        try:
            # the ids as the hooks stored them (a long or secret-bearing one as its keyed hash)
            sid = plugin.ids.joinable(session_id, "session_id") if session_id else None
            t = plugin.ids.joinable(tenant, "tenant") if tenant else None
            return loop.evolve_now(sid, tenant=t, dry_run=dry_run)
        except KeyError:
            fail(f"no session {session_id!r}")
            return []

    reports = with_plugin(ctx, run)
    if as_json:
        emit_json({"dry_run": dry_run, "reports": reports})
        return
    if not reports:
        console.print("nothing to evolve" + (" (dry run)" if dry_run else ""))
        return
    for rep in reports:
        head = f"support: {len(rep['support'])} turn(s)"
        if rep.get("support_kind"):
            head += f" ({rep['support_kind']})"
        head += f"; generation {rep['generation_before']} -> {rep['generation_after']}"
        head += f"; evolver calls {rep['calls']}, tokens {rep['tokens']}"
        if rep.get("dry_run"):
            head += "; DRY RUN, nothing written"
        console.print(head, highlight=False)
        if rep.get("error"):
            console.print(f"[red]{rep['error']}[/]", highlight=False)
        table(
            "candidates",
            ["skill", "action", "screening", "decision", "reasons"],
            [
                [d["name"], d["action"], d["verdict"], d["decision"], "; ".join(d["reasons"])[:160]]
                for d in rep["decisions"]
            ],
        )
        for bad in rep.get("invalid", []):
            console.print(f"[yellow]invalid[/] {bad}", highlight=False)


def register(main: click.Group) -> None:
    for command in (evolve,):
        main.add_command(command)
