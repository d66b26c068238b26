#!/usr/bin/env bash
# Installs playwright-core (the browser driver only, no bundled browsers)
# from the npm registry into .deps/playwright/ (project local, never global;
# its own prefix, because `npm install --no-save` prunes what another
# --no-save install put in the same prefix, e.g. workerd) and prints the
# node_modules directory to put on NODE_PATH.  Idempotent.  The browser it drives is
# Debian's chromium (/usr/bin/chromium, from scripts/setup.sh).
#   PLAYWRIGHT_VERSION  npm version to install (default: the one tested here)
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${PLAYWRIGHT_VERSION:-1.65.1}
DEPS=$TOP/.deps/playwright
MOD=$DEPS/node_modules/playwright-core

if [ -f "$MOD/package.json" ] && [ "$(cat "$DEPS/.playwright-version" 2>/dev/null)" = "$VERSION" ]; then
	echo "$DEPS/node_modules"
	exit 0
fi
command -v npm >/dev/null || { echo "install-playwright: npm not found (Node.js 20 with npm is needed)" >&2; exit 1; }
mkdir -p "$DEPS"
echo "install-playwright: npm install playwright-core@$VERSION into $DEPS" >&2
# playwright-core downloads no browser; PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD makes sure of it.
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --prefix "$DEPS" --no-audit --no-fund --no-save \
	--loglevel=error "playwright-core@$VERSION" >&2
[ -f "$MOD/package.json" ] || { echo "install-playwright: $MOD missing after npm install" >&2; exit 1; }
echo "$VERSION" >"$DEPS/.playwright-version"
echo "$DEPS/node_modules"
