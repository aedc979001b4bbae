"""``metaclaw-plugin mode [skills_only|rl|auto]``: show or change the mode at run time (no restart needed)."""

from __future__ import annotations

import click

from ..text import local_time
from .common import console, emit_json, json_option, load_settings


@click.command()
@click.argument("mode", required=False, type=click.Choice(["skills_only", "rl", "auto"]))
@json_option
@click.pass_context
def mode(ctx: click.Context, mode: str | None, as_json: bool) -> None:
    """Show the mode in effect and where it came from, or set it. A running plugin on this home picks the
    new mode up on its next scheduler tick (the local API applies it at once)."""
    from ..scheduling.attach import report
    from ..scheduling.modes import store_mode
    from ..store import open_database

    settings = load_settings(ctx)
    if mode is not None:
        db = open_database(settings)
        try:
            store_mode(db, mode)
        finally:
            db.close()
    data = report(settings, with_signals=False)
    data = {k: data[k] for k in ("mode", "source", "set_at", "configured", "training_ready", "training_blocker")}
    data["changed"] = mode is not None
    if as_json:
        emit_json(data)
        return
    where = (
        f"set at run time {local_time(data['set_at'])} (config says {data['configured']})"
        if data["source"] == "stored"
        else "from the config"
    )
    console.print(f"mode      {data['mode']} ({where})", highlight=False)
    if data["mode"] != "skills_only":
        train = "yes" if data["training_ready"] else f"no: {data['training_blocker']}; runs as skills_only"
        console.print(f"training  {train}", highlight=False)


def register(main: click.Group) -> None:
    for command in (mode,):
        main.add_command(command)
