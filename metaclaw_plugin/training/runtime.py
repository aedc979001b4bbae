"""Building a :class:`~.trainer.Trainer` from the settings: the backend they name, the home's database (SQLite, or
PostgreSQL shared by hosts: buffer, trajectories, steps and weights all go through ``open_database``)."""

from __future__ import annotations

from collections.abc import Callable

from ..config import ConfigError, Settings
from ..skillbank.files import SkillStore
from ..store import open_database
from ..store.postgres import PostgresDatabase
from ..store.trajectories import TrajectoryStore
from .backends import Backend, Hyper
from .buffer import SampleBuffer
from .gate import BehaviourGate, GateOptions
from .groups import GroupSampler
from .trainer import Trainer, TrainerOptions
from .watchdog import LiveWatch, WatchOptions
from .weights import WeightsRef


def make_backend(settings: Settings) -> tuple[Backend, object]:
    """(backend, tokenizer) for ``settings.training``; a clear error when it cannot run here."""
    t = settings.training
    off = settings.training.off_reason()
    if off:
        raise ConfigError(f"training is off: {off}")
    assert t.base_model is not None
    if t.backend == "local":
        from .backends.local import LocalBackend

        local = LocalBackend(t.base_model, settings.training_dir, device=t.device, hyper=Hyper.from_settings(t))
        return local, local.tokenizer
    from .backends.tinker import TinkerBackend

    remote = TinkerBackend(t.base_model, hyper=Hyper.from_settings(t))
    return remote, remote.tokenizer()


def build_trainer(
    settings: Settings,
    publish: Callable[[WeightsRef], None] | None = None,
    backend: tuple[Backend, object] | None = None,
) -> Trainer:
    """A trainer on the home's sample buffer and trajectories; it resumes from the last full state."""
    t = settings.training
    db = open_database(settings)
    skills = SkillStore(settings.skills_path)
    buffer = SampleBuffer(db, generation_fn=lambda: skills.generation)
    chosen, tokenizer = backend or make_backend(settings)
    teacher = None
    if settings.opd.teacher_model:
        from .opd import Teacher

        teacher = Teacher(settings.opd)
    trajectories = TrajectoryStore(settings.db_file, database=db if isinstance(db, PostgresDatabase) else None)
    g = t.gate
    gate = (
        BehaviourGate(GateOptions.from_settings(g), db, trajectories, tokenizer, max_prompt_tokens=t.max_tokens)
        if g.enabled
        else None
    )
    watch = None
    if g.watch:
        keep = getattr(chosen, "keep", None)  # tinker: the rollback target's checkpoints are kept on the service
        watch = LiveWatch(WatchOptions.from_settings(g), db, buffer, trajectories, tokenizer, chosen.name, keep)
    return Trainer(
        chosen,
        buffer,
        trajectories,
        db,
        tokenizer=tokenizer,
        options=TrainerOptions(
            batch_size=t.batch_size,
            micro_batch_size=t.micro_batch_size,
            micro_batch_tokens=t.micro_batch_tokens,
            max_tokens=t.max_tokens,
            loss_fn=t.loss_fn,
            checkpoint_every=t.checkpoint_every,
            advantage=t.advantage,
            group_tolerance=t.group_tolerance,
            off_policy=t.off_policy,
            max_staleness=t.max_staleness,
            validation_size=t.validation_size,
            validation_tolerance=t.validation_tolerance,
            scope=t.scope_in_effect()[0],  # tinker: global, and status says why
        ),
        publish=publish,
        teacher=teacher,
        gate=gate,
        watch=watch,
        groups=GroupSampler(t.group_size, db, tokenizer, max_tokens=t.max_tokens),
    )
