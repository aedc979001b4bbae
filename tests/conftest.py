"""Shared fixtures: every test gets its own METACLAW_HOME so nothing leaks between tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from metaclaw_plugin import MetaClawPlugin, Settings
from metaclaw_plugin.cli import common as cli_common

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # offline: LiteLLM must not fetch its price map
# The plugin's own calls to the host's model (learning.model: host, the default) are tested where they are the
# subject (test_host_model.py sets it back); elsewhere they would add judge, evolver and extractor calls to every
# scripted upstream, proxies started by module fixtures included.
os.environ.setdefault("METACLAW_LEARNING__MODEL", "none")

# In CI the property tests draw the same examples every run (a red CI must be reproducible, not a draw of luck);
# on a developer's machine they keep exploring new ones, and what they find becomes a fixed example.
hypothesis_settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    hypothesis_settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
# The benchmark harness (metaclaw_bench) lives beside the product in benchmarks/, not in the wheel: the tests, and
# the processes they start (the CLI's ``bench``, proxies loading its CPU meter), import it from the checkout.
BENCHMARKS = str(REPO / "benchmarks")
if BENCHMARKS not in sys.path:
    sys.path.insert(0, BENCHMARKS)
os.environ["PYTHONPATH"] = os.pathsep.join(
    dict.fromkeys([BENCHMARKS, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]])
)

# The shared helpers (hosts, corpora, waiting, the skip policy) live in tests/support and are imported by their bare
# names from every folder of tests/. That folder goes first on the path, before pytest imports any test module, and
# ahead of benchmarks/, whose scripts secret_corpus.py and screening_corpus.py carry the names of two of its corpora.
SUPPORT = str(REPO / "tests" / "support")
if sys.path[0] != SUPPORT:
    sys.path.insert(0, SUPPORT)

from skip_policy import (  # noqa: E402, F401  (pytest hooks: a skip for a missing part fails the run)
    pytest_make_collect_report,
    pytest_runtest_makereport,
    pytest_sessionfinish,
    pytest_terminal_summary,
)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("metaclaw-home")
    monkeypatch.setenv("METACLAW_HOME", str(home))
    monkeypatch.delenv("METACLAW_CONFIG", raising=False)
    # The default mode is auto (hybrid where the embeddings extra is installed, as in the dev venv). Tests about
    # anything else run on keyword retrieval: deterministic and ~40 ms per request cheaper. Tests of auto or of
    # embedding retrieval set the mode themselves (constructor arguments win over the environment).
    monkeypatch.setenv("METACLAW_RETRIEVAL__MODE", "keyword")
    return home


@pytest.fixture(autouse=True)
def _wide_cli_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's rich tables wrap at the console's width, which a test run does not choose (80 columns when
    not a terminal): with a longer temporary path a cell wraps elsewhere. Tests see the tables unwrapped;
    a test about wrapping sets the width itself."""
    monkeypatch.setattr(cli_common.console, "width", 1000)
    monkeypatch.setattr(cli_common.err_console, "width", 1000)


@pytest.fixture(autouse=True)
def _fresh_log_throttle() -> None:
    """Each test sees its own log records: the throttle (logfile.THROTTLE) forgets what earlier tests logged."""
    from metaclaw_plugin.infra.logfile import THROTTLE

    THROTTLE.reset()


@pytest.fixture
def home(_isolated_home: Path) -> Path:
    return _isolated_home


@pytest.fixture
def settings(home: Path) -> Settings:
    return Settings(home=home)


@pytest.fixture
def plugin(settings: Settings):
    p = MetaClawPlugin(settings).start()
    yield p
    p.stop()


@pytest.fixture(scope="session")
def policy_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny causal LM (devtools/tinymodel.py) that the served-policy tests sample from, built once."""
    from metaclaw_plugin.devtools.tinymodel import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("policy-base") / "tiny", seed=0)
