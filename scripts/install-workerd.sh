#!/usr/bin/env bash
# Installs Cloudflare's workerd from the npm registry into .deps/ (project
# local, never global) and prints the binary's path.  Idempotent.
#   WORKERD_VERSION  npm version to install (default: the one tested here)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${WORKERD_VERSION:-1.20261117.1}
DEPS=$TOP/.deps
BIN=$DEPS/node_modules/@cloudflare/workerd-linux-64/bin/workerd

if [ -x "$BIN" ] && [ "$(cat "$DEPS/.workerd-version" 2>/dev/null)" = "$VERSION" ]; then
	echo "$BIN"
	exit 0
fi
command -v npm >/dev/null || { echo "install-workerd: npm not found (Node.js 20 with npm is needed)" >&2; exit 1; }
mkdir -p "$DEPS"
echo "install-workerd: npm install workerd@$VERSION into $DEPS" >&2
npm install --prefix "$DEPS" --no-audit --no-fund --no-save --loglevel=error "workerd@$VERSION" >&2
[ -x "$BIN" ] || { echo "install-workerd: $BIN missing after npm install" >&2; exit 1; }
echo "$VERSION" >"$DEPS/.workerd-version"
echo "$BIN"
