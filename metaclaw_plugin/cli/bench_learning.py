"""``bench learning``: the slow loop's figure (see :mod:`metaclaw_plugin.bench.learning`). Its own file so that
the benchmark harness can move without touching the other bench commands."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .common import fail, json_option


def add_learning(bench: click.Group, finish: Callable[..., None], out_option: Callable[[Any], Any]) -> None:
    @bench.command("learning")
    @json_option
    @out_option
    @click.option("--arm", "arms", multiple=True, help="base, skills, rl, skills+rl (repeatable; default: all four).")
    @click.option("--family", "families", multiple=True, help="boxed, json, iso_date, file_name, french (repeatable).")
    @click.option("--days", type=int, default=4, show_default=True)
    @click.option("--per-family", type=int, default=12, show_default=True, help="Requests per family per day.")
    @click.option("--steps-per-day", type=int, default=2, show_default=True, help="Optimiser steps per window.")
    @click.option("--seed", type=int, default=0, show_default=True)
    @click.option("--model", "base_model", default="smollm2", show_default=True, help="training.base_model.")
    @click.option("--device", type=click.Choice(["cpu", "cuda", "auto"]), default="cpu", show_default=True)
    @click.option("--max-tokens", type=int, default=32, show_default=True, help="Per answer.")
    @click.option("--learning-rate", type=float, default=2e-3, show_default=True)
    @click.option("--lora-rank", type=int, default=16, show_default=True)
    @click.option("--advantage", type=click.Choice(["batch", "group", "task"]), default="task", show_default=True)
    @click.option("--kl-coef", type=float, default=0.01, show_default=True)
    @click.option("--threads", type=int, default=1, show_default=True, help="torch CPU threads (0: torch's default).")
    @click.option("--temperature", type=float, default=1.0, show_default=True, help="The policy's sampling.")
    @click.option("--run-dir", type=click.Path(file_okay=False), default=None, help="Keep the arms' homes here.")
    def learning(
        as_json: bool,
        out_dir: str | None,
        arms: tuple[str, ...],
        families: tuple[str, ...],
        run_dir: str | None,
        **kw: Any,
    ) -> None:
        """Does the served model follow its user's rules more often after the loop ran on its own traffic?
        Each day, per task family, new requests answered by metaclaw/policy, scored by the family's checker
        (the plugin's verifier path); the rl arms train in the scheduler's idle window and hot-swap."""
        from ..bench import learning as lb

        opts = lb.Options(**kw)
        if arms:
            opts.arms = list(arms)
        if families:
            opts.families = list(families)
        try:
            opts.check()
        except ValueError as e:
            fail(str(e))
        log = lambda m: click.echo(m, err=True)  # noqa: E731
        if run_dir:
            result = lb.run(opts, Path(run_dir), log)
        else:
            with tempfile.TemporaryDirectory(prefix="metaclaw-bench-learning-") as tmp:
                result = lb.run(opts, Path(tmp), log)
        finish(result, as_json, out_dir, "learning", lb.markdown(result))
