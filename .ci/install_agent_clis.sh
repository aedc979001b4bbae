#!/usr/bin/env bash
# Install the agent CLIs the client tests drive headless against the proxy: Claude Code, Codex, qwen-code and
# opencode from npm (run with the Node 24 that .ci/install_openclaw.sh installs) and aider from PyPI (its own venv: its pinned
# dependencies must not touch the project's). Idempotent; pinned versions.
#
#   bash .ci/install_agent_clis.sh        # into <repo>/.cache/agent-clis
#
# Afterwards:  <cache>/node_modules/.bin/{claude,codex,qwen,opencode}   and   <cache>/aider/bin/aider
set -euo pipefail

CLAUDE_CODE_VERSION="${CLAUDE_CODE_VERSION:-2.1.328}"
CODEX_VERSION="${CODEX_VERSION:-0.169.0}"
QWEN_CODE_VERSION="${QWEN_CODE_VERSION:-0.24.4}"
OPENCODE_VERSION="${OPENCODE_VERSION:-1.18.33}"  # its binary comes as an optional dependency (opencode-linux-x64)
AIDER_VERSION="${AIDER_VERSION:-0.86.2}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${AGENT_CLIS_CACHE:-$REPO/.cache/agent-clis}"
PY="${PYTHON:-python3}"

log() { echo "[install_agent_clis] $*" >&2; }
mkdir -p "$CACHE"
want="@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION @openai/codex@$CODEX_VERSION @qwen-code/qwen-code@$QWEN_CODE_VERSION"
want="$want opencode-ai@$OPENCODE_VERSION"
if [ "$(cat "$CACHE/.npm-installed" 2>/dev/null)" = "$want" ]; then
  log "npm CLIs already installed"
else
  [ -f "$CACHE/package.json" ] || echo '{"name":"metaclaw-agent-clis","private":true}' > "$CACHE/package.json"
  # shellcheck disable=SC2086
  npm install --prefix "$CACHE" --no-audit --no-fund --loglevel=error $want
  echo "$want" > "$CACHE/.npm-installed"
fi
if [ "$("$CACHE/aider/bin/aider" --version 2>/dev/null)" = "aider $AIDER_VERSION" ]; then
  log "aider $AIDER_VERSION already installed"
else
  "$PY" -m venv "$CACHE/aider"
  "$CACHE/aider/bin/python" -m pip install -q --disable-pip-version-check "aider-chat==$AIDER_VERSION"
fi
log "ready: $CACHE"
