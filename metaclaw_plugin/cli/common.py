"""Helpers shared by the CLI modules: loading settings, JSON output, rich tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from ..config import ConfigError, Settings

console = Console()
err_console = Console(stderr=True)

config_option = click.option(
    "--config",
    "config",
    type=click.Path(dir_okay=False),
    default=None,
    help="Config file (default: $METACLAW_CONFIG, then $METACLAW_HOME/config.yaml).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


def load_settings(ctx: click.Context, **overrides: Any) -> Settings:
    path = (ctx.find_root().obj or {}).get("config")
    try:
        return Settings.load(path, **overrides)
    except ConfigError as e:
        fail(str(e))
        raise  # unreachable


def fail(message: str, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {message}", highlight=False)
    sys.exit(code)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def table(title: str, columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> None:
    t = Table(title=title, title_justify="left", show_lines=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    for r in rows:
        t.add_row(*["" if v is None else str(v) for v in r])
    console.print(t)


def with_plugin(ctx: click.Context, fn: Callable[[Any], Any], **overrides: Any) -> Any:
    """Run ``fn(plugin)`` with a started plugin, stopping it afterwards."""
    from ..plugin import MetaClawPlugin

    plugin = MetaClawPlugin(load_settings(ctx, **overrides))
    plugin.start()
    try:
        return fn(plugin)
    finally:
        plugin.stop()
