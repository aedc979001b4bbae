"""The background worker: one thread that runs slow jobs and periodic ticks, and never lets an
exception escape. Whatever it runs (reloading skills, ending idle sessions, and later the judge,
the evolver and the trainer) fails open: logged and counted, never raised into the host.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .service import Service

log = logging.getLogger("metaclaw_plugin.worker")


@dataclass
class _Periodic:
    name: str
    every: float
    fn: Callable[[], Any]
    next_at: float = 0.0


class BackgroundWorker:
    def __init__(self, name: str = "metaclaw-worker", queue_max: int = 10_000, tick: float = 0.25):
        self.name = name
        self._jobs: queue.Queue[tuple[str, Callable[..., Any], tuple[Any, ...]] | None] = queue.Queue(queue_max)
        self._periodic: list[_Periodic] = []
        self._tick = tick
        self.service = Service(name, self._run, wake=lambda: self._jobs.put(None))
        # Jobs that may wait for the worker's next pass (posted): appended without waking the thread.
        self._later: deque[tuple[str, Callable[..., Any], tuple[Any, ...]]] = deque()
        self._later_max = queue_max
        self._later_running = 0
        self.failures: Counter[str] = Counter()
        self.dropped = 0
        self.done = 0
        self._coalesced: dict[str, str] = {}  # name -> "queued", "running" or "again" (:meth:`coalesce`); idle: absent
        self._coalesce_lock = threading.Lock()

    def every(self, seconds: float, name: str, fn: Callable[[], Any]) -> None:
        self._periodic.append(_Periodic(name, seconds, fn, time.monotonic() + seconds))

    def submit(self, name: str, fn: Callable[..., Any], *args: Any) -> bool:
        try:
            self._jobs.put_nowait((name, fn, args))
            return True
        except queue.Full:
            self.dropped += 1
            log.warning("background queue full; dropped job %s", name)
            return False

    def coalesce(self, name: str, fn: Callable[[], Any]) -> None:
        """Run ``fn`` now (queued, waking the thread), once for all the calls made before it starts; a call while it
        runs runs it once more right after. A burst costs one run more than it takes, and nothing waits for a
        tick: the memory view's refresh after each write (a refresh per write was 0.4 ms of the host's CPU a
        turn). A full queue drops the call, like :meth:`submit`; the next call queues it again."""
        with self._coalesce_lock:
            state = self._coalesced.get(name)
            if state is None:
                if self.submit(name, self._run_coalesced, name, fn):
                    self._coalesced[name] = "queued"
            elif state == "running":
                self._coalesced[name] = "again"

    def _run_coalesced(self, name: str, fn: Callable[[], Any]) -> None:
        with self._coalesce_lock:
            self._coalesced[name] = "running"
        try:
            while True:
                fn()
                with self._coalesce_lock:  # a call during it asked for another: run it now, else done
                    if self._coalesced[name] != "again":
                        del self._coalesced[name]
                        return
                    self._coalesced[name] = "running"
        except BaseException:  # counted and logged by _call; the next call queues it again
            with self._coalesce_lock:
                self._coalesced.pop(name, None)
            raise

    def post(self, name: str, fn: Callable[..., Any], *args: Any) -> bool:
        """Queue a job that can wait for the worker's next pass (at most one tick, ``tick`` seconds), in order with
        the other posted jobs, without waking the thread: the per-turn event deliveries. Woken on every turn, the
        thread cost the host's process more CPU in the wake-up (the GIL handed over and back) than in the job."""
        if len(self._later) >= self._later_max:
            self.dropped += 1
            log.warning("background queue full; dropped job %s", name)
            return False
        self._later.append((name, fn, args))
        return True

    def start(self) -> None:
        self.service.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Run what was queued before the stop, then end (``timeout``: the deadline)."""
        self.service.stop(timeout)

    def services(self) -> list[Service]:
        return [self.service]

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until queued and posted jobs are done (tests and the CLI use this); posted ones are run now."""
        deadline = time.monotonic() + timeout
        nudged = False
        while time.monotonic() < deadline:
            if self._later and not nudged:
                nudged = self.submit("worker.posted", _nothing)  # wakes the thread, which runs them next
            if self._jobs.unfinished_tasks == 0 and not self._later and not self._later_running:
                return True
            time.sleep(0.005)
        return False

    def _call(self, name: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            fn(*args)
        except Exception:
            self.failures[name] += 1
            log.exception("background job %s failed (the host is unaffected)", name)

    def _run(self, _stop: threading.Event) -> None:
        while True:
            item: tuple[str, Callable[..., Any], tuple[Any, ...]] | tuple[()] | None
            try:
                item = self._jobs.get(timeout=self._tick)
            except queue.Empty:
                item = ()
            if item is None:
                self._jobs.task_done()
                # Finish what was queued before the stop, then leave.
                while True:
                    self._run_posted()
                    try:
                        rest = self._jobs.get_nowait()
                    except queue.Empty:
                        return
                    if rest:
                        self._call(*rest)
                    self._jobs.task_done()
            self._run_posted()
            if item:
                self._call(*item)
                self.done += 1
                self._jobs.task_done()
            now = time.monotonic()
            for p in self._periodic:
                if now >= p.next_at:
                    p.next_at = now + p.every
                    self._call(p.name, p.fn, ())

    def _run_posted(self) -> None:
        """The posted jobs, oldest first (what is posted meanwhile waits for the next pass)."""
        for _ in range(len(self._later)):
            self._later_running = 1
            try:
                job = self._later.popleft()
            except IndexError:
                break
            try:
                self._call(*job)
                self.done += 1
            finally:
                self._later_running = 0


def _nothing() -> None:
    """A job that only wakes the worker."""
