"""Polling with a deadline: the tests wait on conditions, never on fixed sleeps (CI is a loaded 2-core machine)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    cond: Callable[[], Any],
    timeout: float = 20.0,
    what: str | Callable[[], Any] = "",
    step: float = 0.05,
    *,
    ignore: type[BaseException] | tuple[type[BaseException], ...] = (),
    stop: Callable[[], Any] | None = None,
) -> Any:
    """``cond()``'s first truthy value, polled every ``step`` seconds; AssertionError after ``timeout``.

    ``ignore``: exceptions from ``cond`` that mean "not yet" (the last one is in the failure message).
    ``stop``: checked before each poll; a truthy value (a process that exited, with its log) fails the wait at
    once. ``what``: the failure message, or a callable that builds it then (the state worth seeing)."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        if stop is not None:
            ended = stop()
            if ended:
                raise AssertionError(f"stopped waiting for {_say(what, cond)}: {ended}")
        try:
            v = cond()
            if v:
                return v
        except ignore as e:
            last = e
        if time.monotonic() >= deadline:
            break
        time.sleep(step)
    raise AssertionError(
        f"timed out after {timeout}s waiting for {_say(what, cond)}" + (f" ({last!r})" if last else "")
    )


def exited(proc: Any, log: Any = None, tail: int = 3000) -> Callable[[], str | None]:
    """A ``stop`` check for :func:`wait_for`: the exit code of ``proc`` (a Popen) and the tail of its ``log`` (a
    path) once it has exited, else None."""

    def check() -> str | None:
        code = proc.poll()
        if code is None:
            return None
        text = ""
        try:
            text = log.read_text(errors="replace")[-tail:] if log is not None else ""
        except OSError:
            pass
        return f"the process exited with {code}\n{text}"

    return check


def _say(what: str | Callable[[], Any], cond: Callable[[], Any]) -> str:
    if callable(what):
        try:
            return str(what())
        except Exception as e:  # the message must not hide the timeout
            return f"{cond} (and describing it failed: {e!r})"
    return what or str(cond)


async def async_wait_for(cond: Callable[[], Any], timeout: float = 20.0, what: str = "", step: float = 0.05) -> Any:
    """:func:`wait_for` inside a running event loop: sleeps with ``asyncio.sleep`` so the loop's tasks go on."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        v = cond()
        if v:
            return v
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or cond}")
        await asyncio.sleep(step)
