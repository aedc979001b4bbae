"""A skip for a missing part fails the run: the README's test command must not go green on a machine where
Chromium, PostgreSQL, Node/OpenClaw or an extra is missing and the tests that need it skipped.

A test skipped for a missing part is reported as failed (with what is missing and how to set it up); a module
skipped at collection for one (``pytest.importorskip`` at the top of a file) fails the session's exit status
and is listed at the end. Skips for other reasons (a test that needs an earlier test's state) stay skips.
Set ``METACLAW_ALLOW_SKIPS=1`` to allow the skips on a machine that is deliberately partial.
Imported by ``conftest.py`` (its hooks are pytest hooks there).
"""

from __future__ import annotations

import os
import re
from typing import Any

import pytest

ALLOW_ENV = "METACLAW_ALLOW_SKIPS"
# What a skip for a missing part says: pytest.importorskip's own message, our "needs the ... extra",
# "NO POSTGRESQL", "SKIPPED LOUDLY: no Chromium", "needs Node 24 and openclaw@...", "... is not installed".
MISSING_PART = re.compile(
    r"could not import|no module named|not installed|\bextras?\b|no postgresql|postgres|chromium|playwright|"
    r"skipped loudly|\bnode\b|openclaw|smollm2|\bgguf\b|setuptools|\bgpu\b|\bcuda\b",
    re.IGNORECASE,
)
HOW = "run `bash scripts/setup.sh` (or set {env}=1 to allow skips on a partial machine)"
COLLECT_SKIPS = pytest.StashKey[list[tuple[str, str]]]()


def _allowed() -> bool:
    return os.environ.get(ALLOW_ENV) == "1"


def skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr or "")


def for_missing_part(reason: str) -> bool:
    return bool(MISSING_PART.search(reason))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    rep = outcome.get_result()
    if not rep.skipped or hasattr(rep, "wasxfail") or _allowed():
        return
    reason = skip_reason(rep)
    if for_missing_part(reason):
        rep.outcome = "failed"
        rep.longrepr = f"skipped for a missing part: {reason}\n{HOW.format(env=ALLOW_ENV)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):
    outcome = yield
    rep = outcome.get_result()
    if rep.skipped and not _allowed():
        reason = skip_reason(rep)
        if for_missing_part(reason):
            collector.config.stash.setdefault(COLLECT_SKIPS, []).append((rep.nodeid, reason))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if session.config.stash.get(COLLECT_SKIPS, []) and exitstatus in (0, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    skips = config.stash.get(COLLECT_SKIPS, [])
    if not skips:
        return
    terminalreporter.section("skipped for a missing part (fails the run)", red=True)
    for nodeid, reason in skips:
        terminalreporter.line(f"{nodeid}: {reason}")
    terminalreporter.line(HOW.format(env=ALLOW_ENV))
