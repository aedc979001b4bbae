"""Helpers shared by the CLI modules: loading settings, JSON output, rich tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..config import ConfigError, Settings
from ..requestpath.bounds import finite_json

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
# The HTTP servers' (serve, mcp --http) uvicorn log level.
log_level_option = click.option(
    "--log-level",
    default="warning",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)


def load_settings(ctx: click.Context, **overrides: Any) -> Settings:
    path = (ctx.find_root().obj or {}).get("config")
    try:
        return Settings.load(path, **overrides)
    except ConfigError as e:
        fail(str(e))
        raise  # unreachable


def fail(message: str, code: int = 1) -> NoReturn:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    sys.exit(code)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(finite_json(data), indent=2, ensure_ascii=False, default=str))  # JSON has no Infinity


def table(title: str, columns: Iterable[str], rows: Iterable[Iterable[Any]]) -> None:
    """Cells are plain text (``[train-local]`` is not markup). Columns are kept as wide as their longest word
    (names such as ``detect-csv-delimiter``, at most 32 characters), from the first column on, as far as the
    terminal allows; the last columns (free text) take what is left and wrap."""
    cols = list(columns)
    data = [["" if v is None else str(v) for v in r] for r in rows]
    mins = [
        min(32, max([len(c), *(len(w) for r in data if i < len(r) for w in r[i].split())])) for i, c in enumerate(cols)
    ]
    room = console.width - (3 * len(cols) + 1)  # borders and padding
    while sum(m or 5 for m in mins) > room and any(mins[1:]):  # a column given no minimum still needs ~5
        mins[max(i for i, m in enumerate(mins) if m)] = 0
    t = Table(title=title, title_justify="left", show_lines=False)
    for c, m in zip(cols, mins, strict=True):
        t.add_column(c, overflow="fold", min_width=m or None)
    for r in data:
        t.add_row(*[Text(v) for v in r])
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
