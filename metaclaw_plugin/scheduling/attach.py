"""Building the scheduler from settings, attaching it to a running plugin, and reporting on it.

The plugin imports this module lazily in ``start()`` (the request path never imports scheduling). The scheduler
is attached whenever training can run here, whatever the mode, so a later ``metaclaw-plugin mode rl`` (from any
process on the home) is picked up on the next tick; when training cannot run, nothing pretends to train and
``status``/``doctor`` say why.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..config import SchedulerSettings, Settings
from ..protocols import PluginLike
from ..store import open_database, runtime_state
from ..store import transitions as sched_transitions
from ..store.election import LearnerElection
from ..store.postgres import PostgresDatabase
from .calendar import BusyCalendar, GoogleSource, IcsSource
from .idle import SYSTEM, IdleDetector, Runner, host_idle, run_command
from .lock import TrainerLock
from .modes import mode_in_effect
from .omls import SNAPSHOT_KEY, Omls, Trainer
from .signals import Decision, Gate, Signal
from .sleep import SleepWindow, local_zone

log = logging.getLogger("metaclaw_plugin.scheduling")
T = TypeVar("T")


def file_activity(path: Path) -> Callable[[], float]:
    def read() -> float:
        try:
            return path.stat().st_mtime
        except OSError:
            return 0.0

    return read


def build_signals(
    cfg: SchedulerSettings,
    last_activity: Callable[[], float],
    *,
    run: Runner = run_command,
    started: float | None = None,
) -> tuple[list[Signal], list[str]]:
    """The signals ``cfg`` asks for, and notes on what is off and why (for status and doctor)."""
    signals: list[Signal] = []
    notes: list[str] = []
    zone = local_zone(cfg.timezone)
    if cfg.sleep_enabled:
        signals.append(SleepWindow(cfg.sleep_start, cfg.sleep_end, list(cfg.sleep_days), zone))
    default = cfg.idle_sources is None
    sources: list[str] = ["host", *SYSTEM] if default else list(cfg.idle_sources or [])
    idle_s, present_s = cfg.idle_minutes * 60, cfg.present_minutes * 60
    for name in sources:
        fn = host_idle(last_activity, started) if name == "host" else SYSTEM[name](run)
        signals.append(IdleDetector(name, fn, idle_s, present_s, optional=default and name != "host"))
    refresh = cfg.calendar_refresh_minutes * 60
    if cfg.calendar_enabled:
        if cfg.calendar_path:
            signals.append(BusyCalendar("calendar", IcsSource(cfg.calendar_path, zone), refresh))
        if cfg.google_token_path:
            google = GoogleSource(cfg.google_token_path, cfg.google_credentials_path, cfg.google_calendar_id)
            signals.append(BusyCalendar("google", google, refresh))
        if not (cfg.calendar_path or cfg.google_token_path):
            notes.append("calendar_enabled is on but neither calendar_path nor google_token_path is set: no calendar")
    elif cfg.calendar_path or cfg.google_token_path:
        notes.append("a calendar is configured but calendar_enabled is off: it is not read")
    return signals, notes


def scheduler_trainer(settings: Settings) -> Trainer:
    from ..learning.failed_batches import feed_evolver
    from ..learning.gate_scoring import score_gate
    from ..serving import publish_in_process
    from ..training.runtime import build_trainer  # loads the base model: in the scheduler's thread, on first use

    # this process's served policy (if any) swaps at once; others poll the home's database
    built = build_trainer(settings, publish=publish_in_process(settings))
    trainer: Trainer = score_gate(feed_evolver(built, settings), settings)
    return trainer


def build(
    settings: Settings,
    trainer: Callable[[], Trainer],
    *,
    last_activity: Callable[[], float],
    run: Runner = run_command,
    clock: Callable[[], float] = time.time,
    election: LearnerElection | None = None,
) -> tuple[Omls, list[str]]:
    """The scheduler on the home's database. On PostgreSQL it trains only while this host is the elected
    learner: ``election`` (the learning loop's, so one host does both), else one of its own."""
    cfg = settings.scheduler
    db = open_database(settings)
    owns = False
    if election is None and isinstance(db, PostgresDatabase):
        election, owns = LearnerElection(db), True
    signals, notes = build_signals(cfg, last_activity, run=run, started=clock())
    omls = Omls(
        db,
        Gate(signals, cfg.min_window_minutes * 60),
        trainer,
        mode=lambda: mode_in_effect(settings.mode, db).mode,
        lock=TrainerLock(settings.home_dir, stale_s=max(120.0, 3 * cfg.interval_seconds)),
        last_activity=last_activity,
        interval_s=cfg.interval_seconds,
        clock=clock,
        election=election,
        owns_election=owns,
    )
    return omls, notes


def attach_scheduler(plugin: PluginLike, trainer: Callable[[], Trainer] | None = None) -> Omls | None:
    """Start the scheduler for ``plugin`` (a started :class:`~metaclaw_plugin.MetaClawPlugin`), or leave a note
    in ``plugin.scheduler_note`` saying why training cannot run. ``trainer`` overrides the slow loop's."""
    settings: Settings = plugin.settings
    if trainer is None:
        blocker = settings.training.off_reason()
        if blocker:
            plugin.scheduler_note = blocker
            log.info("scheduler off: %s", blocker)
            return None
        trainer = lambda: scheduler_trainer(settings)  # noqa: E731
    from_file = file_activity(settings.activity_path)
    election = (plugin.learning.election if plugin.learning is not None else None) or plugin.election
    omls, notes = build(
        settings, trainer, last_activity=lambda: max(plugin.last_request_at, from_file()), election=election
    )
    plugin.scheduler = omls
    plugin.scheduler_note = "; ".join(notes) or None
    plugin.attach_loop("scheduler", omls)
    return omls


# Reports (status, doctor, the CLI) --------------------------------------------------------------------------------
def _logged(db: Path | PostgresDatabase, read: Callable[[], T], empty: T) -> T:
    """``read()`` of the home's database; on PostgreSQL a failure is logged and reads as ``empty`` (a SQLite path is
    read read-only, never created, and reads as empty when it cannot be)."""
    try:
        return read()
    except Exception:
        if not isinstance(db, PostgresDatabase):
            raise
        log.exception("reading the scheduler's state from %s failed", db.where)
        return empty


def transitions(db: Path | PostgresDatabase, limit: int = 20) -> list[dict[str, Any]]:
    return _logged(db, lambda: sched_transitions.recent(db, limit), [])


def snapshot(db: Path | PostgresDatabase) -> dict[str, Any] | None:
    got = _logged(db, lambda: runtime_state.get(db, SNAPSHOT_KEY), None)
    return dict(got.value) if got else None


def report(settings: Settings, *, with_signals: bool = True, run: Runner = run_command) -> dict[str, Any]:
    """The mode in effect, whether training can run, the last stored state and transitions and, with
    ``with_signals``, what each signal says now and the next predicted window (from this process)."""
    now = time.time()
    home = open_database(settings)
    db: Path | PostgresDatabase = home if isinstance(home, PostgresDatabase) else settings.db_file
    try:
        mie = mode_in_effect(settings.mode, db)
        state, recent = snapshot(db), transitions(db)
    finally:
        home.close()
    blocker = settings.training.off_reason()
    out: dict[str, Any] = {
        **mie.as_dict(),
        "training_ready": blocker is None,
        "training_blocker": blocker,
        "trains": blocker is None and mie.mode != "skills_only",
        "interval_s": settings.scheduler.interval_seconds,
        "min_window_minutes": settings.scheduler.min_window_minutes,
        "state": state,
        "transitions": recent,
        "lock": TrainerLock(settings.home_dir).holder(),
    }
    if with_signals:
        signals, notes = build_signals(settings.scheduler, file_activity(settings.activity_path), run=run)
        gate = Gate(signals, settings.scheduler.min_window_minutes * 60)
        d = gate.decide(now)
        if mie.mode != "auto":  # the gate only governs auto; still show what the signals say
            d = Decision(
                mie.mode == "rl",
                f"mode {mie.mode}: the window is always {'open' if mie.mode == 'rl' else 'shut'}",
                None,
                d.readings,
            )
        out["notes"] = notes
        out["window"] = {"open": d.open, "reason": d.reason, "until": d.until}
        out["signals"] = {k: r.as_dict() for k, r in d.readings.items()}
        nxt = gate.next_window(now)
        out["next_window"] = None if nxt is None else {"start": nxt[0], "end": nxt[1], "signal": nxt[2]}
    return out
