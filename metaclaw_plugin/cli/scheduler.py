"""``metaclaw-plugin scheduler status|next-window``: the OMLS state, its transitions, the signals and the next
predicted window."""

from __future__ import annotations

from typing import Any

import click

from ..text import local_time
from .common import console, emit_json, json_option, load_settings, table


def _t(ts: float | None) -> str:
    return local_time(ts, "-", "%a %Y-%m-%d %H:%M:%S")


@click.group()
def scheduler() -> None:
    """The slow loop's scheduler: trains only while the user is away (mode auto)."""


@scheduler.command("status")
@json_option
@click.pass_context
def status(ctx: click.Context, as_json: bool) -> None:
    """The mode in effect, the stored state and recent transitions, and what each signal says now."""
    from ..scheduling.attach import report

    data = report(load_settings(ctx))
    if as_json:
        emit_json(data)
        return
    st: dict[str, Any] = data["state"] or {}
    train = "yes" if data["training_ready"] else f"no ({data['training_blocker']})"
    rows = [
        ["mode", f"{data['mode']} ({data['source']})"],
        ["training can run", train],
        ["state", f"{st.get('state', 'never ran')} since {_t(st.get('since'))} (pid {st.get('pid', '-')})"],
        ["window now", f"{'open' if data['window']['open'] else 'shut'}: {data['window']['reason']}"],
        *[[f"signal {k}", ("AWAY " if r["away"] else "") + str(r["detail"])] for k, r in data["signals"].items()],
        ["trainer lock", data["lock"] or "free"],
        *[["note", n] for n in data["notes"]],
    ]
    table("scheduler", ["what", "value"], rows)
    table(
        "transitions (newest first)",
        ["at", "from", "to", "reason"],
        [[_t(r["at"]), r["from_state"], r["to_state"], r["reason"]] for r in data["transitions"]],
    )


@scheduler.command("next-window")
@json_option
@click.pass_context
def next_window(ctx: click.Context, as_json: bool) -> None:
    """When the next scheduled away window (sleep, calendar) starts and ends."""
    from ..scheduling.attach import report

    data = report(load_settings(ctx))
    out = {"now": data["window"], "next": data["next_window"], "min_window_minutes": data["min_window_minutes"]}
    if as_json:
        emit_json(out)
        return
    if data["window"]["open"]:
        console.print(f"open now, until {_t(data['window']['until'])}: {data['window']['reason']}", highlight=False)
    nxt = data["next_window"]
    if nxt is None:
        console.print("no scheduled window ahead (enable the sleep window or a calendar)", highlight=False)
    else:
        console.print(f"next      {_t(nxt['start'])} -> {_t(nxt['end'])} ({nxt['signal']})", highlight=False)


def register(main: click.Group) -> None:
    for command in (scheduler,):
        main.add_command(command)
