"""``demo``: the whole loop, offline, in a temporary home (the logic is in devtools/demo.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from .common import console, emit_json, fail, json_option, table


@click.command()
@click.option("--model", default=None, help="The agent's model, any LiteLLM model (default: scripted).")
@click.option("--evolver-model", default=None, help="The evolver, any LiteLLM model (default: scripted).")
@click.option("--judge-model", default=None, help="The judge, any LiteLLM model (default: scripted).")
@click.option("--keep", is_flag=True, help="Keep the demo's home (for `serve` and its dashboard).")
@click.option(
    "--home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Run in this folder instead of a new temporary one (kept).",
)
@json_option
def demo(
    model: str | None,
    evolver_model: str | None,
    judge_model: str | None,
    keep: bool,
    home: Path | None,
    as_json: bool,
) -> None:
    """Watch the loop work in a couple of minutes, offline: a real LiteLLM proxy with the plugin in front of
    a scripted local endpoint; a failed round becomes a skill on trial that the next similar round carries.

    Then the slow loop: a scripted idle window opens, the real scheduler runs a local LoRA step on a tiny model
    and the served policy hot-swaps to the new LoRA weights (skipped, saying why, without the train-local extra).

    Exits 0 only when every stage did what it claims, as read back from the skills folder and the database; a
    skipped stage does not count against it.
    """
    import importlib.util

    if importlib.util.find_spec("litellm") is None or importlib.util.find_spec("metaclaw_litellm") is None:
        fail("the demo runs a LiteLLM proxy: pip install 'metaclaw-plugin[litellm]'")
    if home is not None and home.exists() and any(home.iterdir()):
        fail(f"{home} is not empty: the demo checks what it wrote, so give it a new or empty folder")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from ..devtools.demo import STAGES, DemoOptions, StageResult, run_demo, summary

    titles = {s.key: s.title for s in STAGES}
    status: Any = None

    def on_stage(key: str, res: StageResult | None) -> None:
        nonlocal status
        if as_json:
            return
        if res is None:
            status = console.status(f"[bold]{key}[/]: {titles[key]} ...")
            status.start()
            return
        status.stop()
        mark = "[yellow]skipped[/]" if res.skipped else "[green]ok[/]" if res.ok else "[bold red]FAILED[/]"
        console.print(f"{mark} [bold]{key}[/] ({res.seconds:.1f}s): ", end="")
        console.print(res.detail, markup=False, highlight=False)

    opts = DemoOptions(model=model, evolver_model=evolver_model, judge_model=judge_model, keep=keep, home=home)
    if not as_json:
        scripted = [r for r, m in (("agent", model), ("evolver", evolver_model), ("judge", judge_model)) if not m]
        if scripted:
            console.print(
                f"[yellow]scripted[/]: the {', '.join(scripted)} are played by a local scripted endpoint (no model"
                " is called; its replies start with '(scripted)'). --model/--evolver-model/--judge-model use real"
                " ones.",
                highlight=False,
            )
    result = summary(run_demo(opts, on_stage))
    if as_json:
        emit_json(result)
    else:
        _print_summary(result)
    if not result["ok"]:
        raise SystemExit(1)


def register(main: click.Group) -> None:
    for command in (demo,):
        main.add_command(command)


def _print_summary(r: dict[str, Any]) -> None:
    def counts(d: dict[str, Any] | None) -> str:
        return ", ".join(f"{k} {v}" for k, v in sorted((d or {}).items())) or "-"

    samples = r["samples"] or {}
    rows = [
        ["result", ("every stage did what it claims" if r["ok"] else "a stage FAILED") + f" in {r['seconds']}s"],
        ["skills before", counts(r["skills_before"])],
        ["skills after", counts(r["skills_after"]) + (f" (new: {r['evolved']})" if r["evolved"] else "")],
        ["generation", " -> ".join(str(g) for g in r["generation"])],
        ["rewards", counts(r["rewards"])],
        [
            "trial",
            "; ".join(
                f"{a}: {v['turns']} turns, mean reward {v['mean_reward']:+.2f}" for a, v in (r["trial"] or {}).items()
            )
            or "-",
        ],
        [
            "samples",
            f"{samples.get('queued', 0)} queued at generation {samples.get('generation', '-')}, "
            f"{samples.get('support', 0)} support, {samples.get('dropped_stale', 0)} dropped as stale"
            if samples
            else "-",
        ],
        ["training", _training_line(r["training"])],
        *([["LoRA weights", r["training"]["adapter"]]] if r["training"] and "adapter" in r["training"] else []),
        *[[k, v] for k, v in r["files"].items()],
    ]
    table("metaclaw-plugin demo", ["what", "value"], rows)
    console.print("[bold]next:[/] ", end="")
    console.print(r["next"], markup=False, highlight=False)


def _training_line(t: dict[str, Any] | None) -> str:
    if not t:
        return "-"
    if "skipped" in t:
        return f"skipped: {t['skipped']}"
    return (
        f"step {t['step']}, loss {t['loss']:.4f}, {t['samples_used']} samples used, {t['samples_dropped']} dropped; "
        f"served policy {t['served_before']} -> step {t['answer_step']}"
    )
