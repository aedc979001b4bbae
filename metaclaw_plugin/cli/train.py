"""``train``: train the policy now on the buffered samples, in the foreground; ``train rollback``: serve earlier
LoRA weights."""

from __future__ import annotations

from typing import Any

import click

from .common import console, emit_json, fail, json_option, load_settings, table


@click.group(invoke_without_command=True)
@click.option("--steps", type=click.IntRange(min=1), default=None, help="At most this many optimiser steps.")
@click.option("--backend", type=click.Choice(["local", "tinker"]), default=None, help="Override training.backend.")
@json_option
@click.pass_context
def train(ctx: click.Context, steps: int | None, backend: str | None, as_json: bool) -> None:
    """Train the policy now on the fresh buffered samples (batches of training.batch_size).

    Each step publishes new sampler weights; it stops when no fresh batch is left or after --steps. It holds
    the home's trainer lock meanwhile: a scheduler (mode rl/auto) in another process does not train at once."""
    if ctx.invoked_subcommand is not None:
        return
    from ..config import ConfigError
    from ..scheduling.lock import TrainerLock

    settings = load_settings(ctx)
    if backend is not None:
        settings.training.backend = backend  # type: ignore[assignment]
    lock = TrainerLock(settings.home_dir)
    if not lock.acquire():
        h = lock.holder() or {}
        fail(
            f"another process trains this home (pid {h.get('pid')} on {h.get('host')}); "
            "one trainer per home: try again when it has finished"
        )
    try:
        try:
            from ..learning.failed_batches import feed_evolver
            from ..learning.gate_scoring import score_gate
            from ..training.runtime import build_trainer

            trainer = score_gate(feed_evolver(build_trainer(settings), settings), settings)
        except ConfigError as e:
            fail(str(e))
        report = trainer.run(lock.heartbeat, max_steps=steps)  # stops if the lock was taken over
    finally:
        lock.release()
    from ..training.trainer import last_steps

    data: dict[str, Any] = {
        "backend": settings.training.backend,
        "base_model": settings.training.base_model,
        "resumed_from": trainer.resumed_from,
        "resume_error": trainer.resume_error,
        **report.as_dict(),
        "last": last_steps(trainer.db, report.steps),
    }
    if as_json:
        emit_json(data)
        return
    if trainer.resume_error:
        console.print(f"[yellow]{trainer.resume_error}[/]; trained from the base model", highlight=False)
    console.print(
        f"{report.steps} step(s) on {data['backend']} ({report.reason}); step {report.step}, "
        f"samples used {report.samples_used}, dropped {report.samples_dropped}",
        highlight=False,
    )
    if data["last"]:
        table(
            "training steps",
            ["step", "loss", "mean reward", "seconds", "tokens/s", "weights"],
            [
                [
                    r["step"],
                    f"{r['loss']:.4g}",
                    f"{r['mean_reward']:.3g}",
                    f"{r['step_seconds']:.2f}",
                    f"{r['tokens_per_s'] or 0:.0f}",
                    r["weights"],
                ]
                for r in reversed(data["last"])
            ],
        )


@train.command("rollback")
@click.option("--to", "to", type=click.IntRange(min=1), default=None, help="The step (default: the one before).")
@click.option(
    "--tenant",
    default=None,
    help="Whose weights go back (training.scope tenant; default: the one tenant with weights). Others' stay.",
)
@json_option
@click.pass_context
def rollback_cmd(ctx: click.Context, to: int | None, tenant: str | None, as_json: bool) -> None:
    """Serve an earlier step's weights: served policies swap to them (requests in flight finish on theirs) and
    the trainer trains on from them. The steps after it are abandoned (kept in the training.rollbacks record).
    With training.scope tenant, only that tenant's weights go back."""
    from ..store import open_database
    from ..training.rollback import RollbackError, rollback, whose

    settings = load_settings(ctx)
    keep = None
    if settings.training.backend == "tinker":
        from ..training.backends.tinker import keep_checkpoints

        keep = keep_checkpoints
    db = open_database(settings)
    try:
        done = rollback(db, to, keep, whose(db, settings.training.scope_in_effect()[0], tenant))
    except RollbackError as e:
        fail(str(e))
    finally:
        db.close()
    if as_json:
        emit_json(done)
        return
    whom = f"tenant {done['tenant']!r} " if done["tenant"] is not None else ""
    console.print(
        f"rolled back {whom}from step {done['from']} to step {done['to']} ({done['weights']['path']}); "
        f"abandoned steps: {', '.join(map(str, done['abandoned_steps'])) or 'none'}",
        highlight=False,
    )


def register(main: click.Group) -> None:
    for command in (train,):
        main.add_command(command)
