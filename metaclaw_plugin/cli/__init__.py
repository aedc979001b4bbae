"""The ``metaclaw-plugin`` command. Each command group lives in its own module, listed below."""

from __future__ import annotations

import importlib

import click

from ..infra.mlimport import quiet_third_party
from .common import config_option

# Modules that each define ``register(main)``; imported lazily-cheap (no heavy deps at import).
_COMMAND_MODULES = [
    "core",
    "skills",
    "skill_library",
    "sessions",
    "serve",
    "proxy",
    "evolve",
    "train",
    "bench",
    "demo",
    "mode",
    "scheduler",
    "memory",
    "mcp_server",
]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@config_option
@click.version_option(package_name="metaclaw-plugin")
@click.pass_context
def main(ctx: click.Context, config: str | None) -> None:
    """Make the agent you already run learn from its own use."""
    quiet_third_party()  # stderr is for our messages, not the ML stack's progress bars and warnings
    ctx.ensure_object(dict)
    ctx.obj["config"] = config


for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}").register(main)
