"""The core's integration base (``metaclaw_plugin.integration``): host checks, the plugin handle, fail-open,
the session-id fallback chain. No host needed, except for the checks that the adapters' declared ranges match
``pyproject.toml``, which skip when the host is absent."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import metaclaw_plugin
from metaclaw_plugin import integration
from metaclaw_plugin.integration import (
    ALLOW_UNSUPPORTED_ENV,
    DidNotEnable,
    FailOpen,
    MetaClawPlugin,
    PluginHandle,
    Settings,
    clean_session_id,
    conversation_fingerprint,
    require_host,
    session_id_from,
)

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------------------------------------
# require_host
# ------------------------------------------------------------------------------------------------
@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch):
    """Pretend that ``hostpkg`` is installed at a chosen version (None: not installed at all)."""
    state: dict[str, Any] = {"version": None, "importable": False}

    def version(name: str) -> str:
        if name == "hostpkg" and state["version"] is not None:
            return state["version"]
        raise importlib.metadata.PackageNotFoundError(name)

    def find_spec(name: str, *a: Any) -> Any:
        return object() if name == "hostpkg" and (state["importable"] or state["version"]) else None

    monkeypatch.setattr(integration.importlib.metadata, "version", version)
    monkeypatch.setattr(integration.importlib.util, "find_spec", find_spec)
    monkeypatch.delenv(ALLOW_UNSUPPORTED_ENV, raising=False)
    return state


def _check() -> str | None:
    return require_host("hostpkg", "hostpkg", "1.108.7", "1.111", adapter="metaclaw_x", install="'metaclaw-plugin[x]'")


@pytest.mark.parametrize("found", ["1.108.7", "1.108.14", "1.110.2", "1.110.99.post1", "1.109"])
def test_require_host_accepts_the_range(installed: dict[str, Any], found: str) -> None:
    installed["version"] = found
    assert _check() == found


def test_require_host_missing_says_what_and_how(installed: dict[str, Any]) -> None:
    with pytest.raises(DidNotEnable) as ei:
        _check()
    msg = str(ei.value)
    assert "metaclaw_x needs hostpkg (>=1.108.7,<1.111), which is not installed" in msg
    assert "pip install 'metaclaw-plugin[x]'" in msg
    assert isinstance(ei.value, ImportError)  # `except ImportError` around the adapter import keeps working


def test_require_host_missing_is_fatal_even_when_unsupported_is_allowed(
    installed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ALLOW_UNSUPPORTED_ENV, "1")
    with pytest.raises(DidNotEnable, match="not installed"):
        _check()


@pytest.mark.parametrize("found", ["1.108.6", "1.107.0", "0.9", "1.111.0", "1.111", "2.0.0", "1.111.0rc1"])
def test_require_host_out_of_range_names_version_range_and_fix(installed: dict[str, Any], found: str) -> None:
    installed["version"] = found
    with pytest.raises(DidNotEnable) as ei:
        _check()
    msg = str(ei.value)
    assert f"metaclaw_x supports hostpkg >=1.108.7,<1.111, but hostpkg {found} is installed" in msg
    assert "pip install 'metaclaw-plugin[x]'" in msg and f"{ALLOW_UNSUPPORTED_ENV}=1" in msg


def test_require_host_default_install_command_is_the_range(installed: dict[str, Any]) -> None:
    installed["version"] = "3.0"
    with pytest.raises(DidNotEnable, match=re.escape("pip install 'hostpkg>=1.0,<2'")):
        require_host("hostpkg", "hostpkg", "1.0", "2", adapter="a")


def test_require_host_out_of_range_only_warns_when_allowed(
    installed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    installed["version"] = "1.200.0"
    monkeypatch.setenv(ALLOW_UNSUPPORTED_ENV, "1")
    with pytest.warns(RuntimeWarning, match=r"hostpkg 1\.200\.0 is installed; running anyway"):
        assert _check() == "1.200.0"
    monkeypatch.setenv(ALLOW_UNSUPPORTED_ENV, "0")
    with pytest.raises(DidNotEnable):
        _check()


def test_require_host_without_metadata_is_unknown(installed: dict[str, Any]) -> None:
    installed["importable"] = True  # importable (vendored) but no dist metadata: the version cannot be told
    with pytest.raises(DidNotEnable, match="could not tell which version of hostpkg"):
        _check()


def test_release_parsing() -> None:
    r = integration._release
    assert r("1.108.7") == (1, 108, 7) and r("1.110.0") == (1, 110) == r("1.110") and r("v2") == (2,)
    assert r("1.77.2.post1") == (1, 77, 2) and r("junk") is None


def _extra_ranges() -> dict[str, tuple[str, str]]:
    """{dist: (min, below)} from pyproject.toml's litellm and langchain extras."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    out = {}
    for extra in ("litellm", "langchain"):
        for req in data["project"]["optional-dependencies"][extra]:
            m = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?>=([\d.]+),<([\d.]+)", req)
            assert m, f"{req!r}: declare a range '>=LOW,<HIGH', not a pin or an open end"
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def test_adapters_check_the_ranges_that_pyproject_declares() -> None:
    ranges = _extra_ranges()
    if importlib.util.find_spec("litellm") is not None:
        import metaclaw_litellm

        assert ranges["litellm"] == metaclaw_litellm.SUPPORTED_LITELLM
    if importlib.util.find_spec("langchain") is not None:
        import metaclaw_langchain

        assert ranges["langchain"] == metaclaw_langchain.SUPPORTED_LANGCHAIN
        assert ranges["langchain-core"] == metaclaw_langchain.SUPPORTED_LANGCHAIN_CORE


def test_adapter_import_raises_did_not_enable_for_an_unsupported_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """The real adapter modules run the check at import (not just the helper)."""
    import sys

    pytest.importorskip("litellm")
    real = importlib.metadata.version
    monkeypatch.setattr(
        integration.importlib.metadata, "version", lambda name: "1.99.0" if name == "litellm" else real(name)
    )
    monkeypatch.delenv(ALLOW_UNSUPPORTED_ENV, raising=False)
    saved = {k: v for k, v in sys.modules.items() if k == "metaclaw_litellm" or k.startswith("metaclaw_litellm.")}
    for k in saved:
        del sys.modules[k]
    try:
        with pytest.raises(DidNotEnable, match=r"litellm 1\.99\.0 is installed"):
            import metaclaw_litellm  # noqa: F401
    finally:
        for k in [k for k in sys.modules if k == "metaclaw_litellm" or k.startswith("metaclaw_litellm.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_did_not_enable_is_a_public_name() -> None:
    assert metaclaw_plugin.DidNotEnable is DidNotEnable and "DidNotEnable" in metaclaw_plugin.__all__


# ------------------------------------------------------------------------------------------------
# FailOpen
# ------------------------------------------------------------------------------------------------
class _Owner:
    def __init__(self) -> None:
        self.errors: Counter[str] = Counter()


def test_fail_open_logs_counts_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    fail = FailOpen(logging.getLogger("t.fail"), "metaclaw_t", what="the run", prefix="t.")
    owner = _Owner()
    with caplog.at_level(logging.ERROR, logger="t.fail"):
        for _ in range(2):
            try:
                raise ValueError("boom")
            except Exception:
                fail("hook", owner)
        try:
            raise KeyError("x")
        except Exception:
            fail("other", None)  # no owner: logged, not counted, no error
    assert owner.errors == Counter({"t.hook": 2})
    assert [r.getMessage() for r in caplog.records] == ["metaclaw_t hook failed; the run continues unchanged"] * 2 + [
        "metaclaw_t other failed; the run continues unchanged"
    ]
    assert caplog.records[0].exc_info is not None and caplog.records[0].exc_info[0] is ValueError


def test_fail_open_survives_a_broken_counter() -> None:
    class Broken:
        errors = None  # no counter

    class Raising:
        @property
        def errors(self) -> Any:
            raise RuntimeError("no")

    fail = FailOpen(logging.getLogger("t.fail"), "x")
    fail("a", Broken())
    fail("a", Raising())  # the helper itself must not raise into the host


def test_fail_open_guard_swallows_exceptions_not_cancellation() -> None:
    fail = FailOpen(logging.getLogger("t.fail"), "x")
    owner = _Owner()
    with fail.guard("g", owner):
        raise RuntimeError("swallowed")
    assert owner.errors["g"] == 1
    with pytest.raises(KeyboardInterrupt), fail.guard("g", owner):
        raise KeyboardInterrupt
    with fail.guard("g", owner):
        pass
    assert owner.errors["g"] == 1


# ------------------------------------------------------------------------------------------------
# PluginHandle
# ------------------------------------------------------------------------------------------------
class _Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_handle_retries_a_failed_build_after_the_delay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = Settings(home=tmp_path / "home")
    calls = {"n": 0}
    real = integration.MetaClawPlugin

    def flaky(*a: Any, **k: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk not ready")
        return real(*a, **k)

    monkeypatch.setattr(integration, "MetaClawPlugin", flaky)
    clock, errors = _Clock(), Counter()
    h = PluginHandle(
        settings=settings,
        host="TestHost",
        errors=errors,
        retry_after=30.0,
        clock=clock,
        logger=logging.getLogger("t.handle"),
    )
    with caplog.at_level(logging.ERROR, logger="t.handle"):
        assert h.get() is None
    assert h.error == "OSError: disk not ready" and errors["plugin_start"] == 1 and h.failures == 1
    assert (
        "could not start (OSError: disk not ready); TestHost requests pass through unchanged, retrying in 30s"
        in caplog.text
    )
    clock.t += 29.0
    assert h.get() is None and calls["n"] == 1  # within the delay: no rebuild, no cost
    clock.t += 1.5
    p = h.get()
    try:
        assert p is not None and p.started and calls["n"] == 2 and h.error is None
        assert h.get() is p and h.plugin is p and calls["n"] == 2  # built once
    finally:
        p.stop()


def test_handle_start_false_builds_without_starting(tmp_path: Path) -> None:
    h = PluginHandle(settings=Settings(home=tmp_path / "home"), start=False)
    assert h.plugin is None
    p = h.get()
    assert p is not None and not p.started and h.get() is p


def test_handle_with_an_explicit_plugin_starts_it_and_never_builds(tmp_path: Path) -> None:
    p = metaclaw_plugin.MetaClawPlugin(Settings(home=tmp_path / "home"))
    h = PluginHandle(p)
    try:
        assert h.plugin is p and not p.started
        assert h.get() is p and p.started
    finally:
        p.stop()


def test_default_plugin_is_shared_per_config_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("METACLAW_CONFIG", raising=False)
    monkeypatch.setenv("METACLAW_HOME", str(tmp_path / "a"))
    a1 = PluginHandle(start=False).get()
    a2 = PluginHandle(start=False).get()
    monkeypatch.setenv("METACLAW_HOME", str(tmp_path / "b"))
    b = PluginHandle(start=False).get()
    assert a1 is a2 and a1 is not None and b is not a1 and b is not None
    assert a1.settings.home_dir == tmp_path / "a" and b.settings.home_dir == tmp_path / "b"


def test_default_plugin_that_fails_to_start_is_rebuilt_on_retry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken home is fixed while the host runs: the retry re-reads the config instead of reusing the
    default plugin that failed."""
    monkeypatch.delenv("METACLAW_CONFIG", raising=False)
    home = tmp_path / "home"
    home.write_text("a file where the home folder should be")
    monkeypatch.setenv("METACLAW_HOME", str(home))
    clock = _Clock()
    h = PluginHandle(clock=clock, logger=logging.getLogger("t.handle"))
    assert h.get() is None and h.error
    home.unlink()
    clock.t += integration.RETRY_PLUGIN_AFTER
    p = h.get()
    try:
        assert p is not None and p.started and h.error is None
    finally:
        if p is not None:
            p.stop()


# ------------------------------------------------------------------------------------------------
# Session ids
# ------------------------------------------------------------------------------------------------
MSGS = [{"role": "system", "content": "sys"}, {"role": "user", "content": "first"}]


def test_session_chain_order(home: Path) -> None:
    assert conversation_fingerprint(None, MSGS) is None  # nothing to key it with
    fp = conversation_fingerprint(MetaClawPlugin(Settings(home=home)), MSGS, "acme", "ann")
    assert fp is not None and fp.startswith("fp-")
    full = {"header": "h-1", "metadata": "m-1", "fingerprint": fp}
    assert session_id_from(**full) == ("h-1", "header")
    assert session_id_from(**{**full, "header": None}) == ("m-1", "metadata")
    assert session_id_from(**{**full, "header": "  ", "metadata": ""}) == (fp, "fingerprint")
    assert session_id_from() == (None, "none")


def test_session_chain_tuples_and_lazy_steps() -> None:
    called: list[str] = []

    def lazy(name: str, value: Any) -> Any:
        def f() -> Any:
            called.append(name)
            return value

        return f

    assert session_id_from(header=(None, lazy("hdr", "raw-header")), fingerprint=lazy("fp", "fp-x")) == (
        "raw-header",
        "header",
    )
    assert called == ["hdr"]  # the fingerprint was never computed
    called.clear()
    assert session_id_from(metadata=(None, "", 42), fingerprint=lazy("fp", "fp-x")) == ("42", "metadata")
    assert called == []
    assert session_id_from(header=lazy("hdr", None), fingerprint=lazy("fp", "fp-x")) == ("fp-x", "fingerprint")
    assert called == ["hdr", "fp"]


def test_clean_session_id() -> None:
    import uuid

    u = uuid.uuid4()
    assert clean_session_id("  s-1 ") == "s-1" and clean_session_id(7) == "7" and clean_session_id(u) == str(u)
    for bad in (None, True, "", "   ", {"a": 1}, ["x"]):
        assert clean_session_id(bad) is None
    long = "x" * 500
    assert clean_session_id(long) == clean_session_id(long) and clean_session_id(long).startswith("h-")
    assert len(clean_session_id(long)) < 200 and clean_session_id(long) != clean_session_id("y" * 500)
