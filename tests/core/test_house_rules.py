"""The house's rules (issue 46), read from the source tree: SQL lives in ``store/``, threads are started by the
service base only, nothing reaches into the plugin by name, and the test tree stays in folders."""

from __future__ import annotations

import ast
import gc
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "metaclaw_plugin"
SQL = re.compile(
    r"\b(?:SELECT\s[\w*,\s().]+\sFROM|INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+"
    r"(?:UNIQUE\s+)?(?:TABLE|INDEX)|ALTER\s+TABLE|DROP\s+TABLE)\b"
)


def _modules(under: Path) -> list[Path]:
    return sorted(p for p in under.rglob("*.py") if "__pycache__" not in p.parts)


def _parse(path: Path) -> ast.Module:
    """``ast.parse`` with the garbage collector held. On CPython 3.11.7 a finalizer that the collector runs while the
    tree is converted (a coroutine left by another test's event loop, closed) trips "AST constructor recursion depth
    mismatch" (python/cpython#106905, fixed in 3.11.8): seen once in CI on a large module."""
    held = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(path.read_text("utf-8"))
    finally:
        if held:
            gc.enable()


def _strings(path: Path) -> list[str]:
    tree = _parse(path)
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_no_sql_text_outside_the_store() -> None:
    allowed = (CORE / "store", CORE / "devtools")
    found = [
        f"{p.relative_to(ROOT)}: {s.strip()[:60]!r}"
        for p in _modules(CORE)
        if not any(a in p.parents for a in allowed)
        for s in _strings(p)
        if SQL.search(s)
    ]
    assert found == []


def test_the_check_finds_sql_where_there_is_some() -> None:
    assert SQL.search("INSERT OR REPLACE INTO jobs (id) VALUES (?)")
    assert SQL.search("SELECT id, kind FROM memories WHERE tenant = ?")
    assert any(SQL.search(s) for s in _strings(CORE / "store" / "jobs.py"))
    assert not SQL.search("Select the files from the list, then update the README set of links.")


def test_threads_are_started_in_two_modules() -> None:
    """Every background loop of the package goes through :class:`~metaclaw_plugin.infra.service.Service` (start,
    stop with a join deadline, status); the other module that makes threads is the served policy's generation pool
    (``agenerate``/``astream`` never block an event loop)."""
    starters = set()
    for p in _modules(CORE):
        tree = _parse(p)
        for n in ast.walk(tree):
            if isinstance(n, ast.Call):
                f = n.func
                name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
                if name in ("Thread", "start_new_thread", "ThreadPoolExecutor", "Timer"):
                    starters.add(str(p.relative_to(CORE)))
    assert starters == {"infra/service.py", "serving/policy.py"}


def test_nothing_reaches_into_the_plugin_by_name() -> None:
    """``getattr``/``hasattr`` on the plugin hide members its protocol lacks: the protocol says what there is."""
    pattern = re.compile(r"\b(?:getattr|hasattr)\(\s*(?:self\.)?(?:_?plugin|p|mc|owner)\b")
    found = [
        f"{p.relative_to(ROOT)}:{i}"
        for under in (CORE, ROOT / "adapters")
        for p in _modules(under)
        for i, line in enumerate(p.read_text("utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


def test_tests_live_in_folders_by_part() -> None:
    at_root = sorted(p.name for p in (ROOT / "tests").glob("*.py"))
    assert len(at_root) <= 10, at_root
    parts = {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert {"core", "store", "memory", "learning", "e2e", "support"} <= parts
