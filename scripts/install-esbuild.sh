#!/usr/bin/env bash
# Installs esbuild, the bundler wrangler uses, pinned, from the npm registry
# into .deps/esbuild/ (project local, its own prefix: `npm install
# --no-save` prunes what another --no-save install put in the same
# prefix), and prints the path of its executable.  tests/e2e/source_maps.sh
# bundles and minifies a TypeScript worker with it, as a real deploy does.
# Idempotent.  npm installs esbuild's native binary as its platform
# package (@esbuild/linux-x64); no install script runs.
#   ESBUILD_VERSION  overrides the pin
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${ESBUILD_VERSION:-0.24.0}
DEPS=$TOP/.deps/esbuild
BIN=$DEPS/node_modules/.bin/esbuild

if [ -x "$BIN" ] && [ "$(cat "$DEPS/.esbuild-version" 2>/dev/null)" = "$VERSION" ] &&
	[ "$("$BIN" --version 2>/dev/null)" = "$VERSION" ]; then
	echo "$BIN"
	exit 0
fi
command -v npm >/dev/null || { echo "install-esbuild: npm not found (Node.js 20 with npm is needed)" >&2; exit 1; }
mkdir -p "$DEPS"
echo "install-esbuild: npm install esbuild@$VERSION into $DEPS" >&2
npm install --prefix "$DEPS" --no-audit --no-fund --no-save --ignore-scripts --loglevel=error \
	"esbuild@$VERSION" >&2
[ "$("$BIN" --version 2>/dev/null)" = "$VERSION" ] ||
	{ echo "install-esbuild: $BIN does not run after npm install" >&2; exit 1; }
echo "$VERSION" >"$DEPS/.esbuild-version"
echo "$BIN"
