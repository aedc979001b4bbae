#!/usr/bin/env bash
# The LiteLLM adapter's tests at the high end of the supported range (.venv holds the low end, 1.108.0): a venv that
# reads .venv's packages through a path file and holds its own LiteLLM and this project's wheel, so only LiteLLM
# differs. The registry reached here has no litellm-proxy 1.110.x (the package LiteLLM's [proxy] extra pulls in from
# 1.110): the proxy runs on the low end's proxy dependencies plus semver, the one its CLI needs beyond them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
NEWEST="${METACLAW_LITELLM_NEWEST:-1.110.2}"
VENV=.venv-litellm-newest
rm -rf "$VENV"
python3 -m venv "$VENV"
base=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$VENV/bin/python" -c 'import sys, sysconfig, pathlib; p = pathlib.Path(sysconfig.get_paths()["purelib"]); (p / "zz_base_venv.pth").write_text(sys.argv[1] + "\n")' "$base"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps "litellm==$NEWEST" "semver>=3,<4"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps .
LITELLM_LOCAL_MODEL_COST_MAP=True "$VENV/bin/python" -c 'from importlib.metadata import version; import metaclaw_litellm; print("LiteLLM", version("litellm"), "adapter ok")'
"$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  tests/host_litellm/test_litellm_internals.py tests/host_litellm/test_litellm_proxy.py \
  tests/host_litellm/test_litellm_sdk.py tests/host_litellm/test_stream_capture.py \
  tests/host_litellm/test_litellm_routes.py tests/host_litellm/test_litellm_route_formats.py \
  tests/host_litellm/test_session_identity_proxy.py tests/core/test_integration.py \
  "tests/host_litellm/test_host_model.py::test_a_proxy_with_only_the_callback_line_learns_with_its_own_model"
