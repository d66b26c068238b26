#!/usr/bin/env bash
# Installs the large real npm codebases that bench/causal.sh and
# tests/e2e/causal.sh profile, pinned, from the npm registry into
# .deps/codebases/ (project local, never global; its own prefix, because
# `npm install --no-save` prunes what another --no-save install put in the
# same prefix, e.g. workerd), and prints that prefix's node_modules.
# Idempotent.  Pure JS, no install scripts, no native code:
#   typescript  the compiler (its checker: a large, polymorphic, type-heavy loop)
#   acorn       a parser (a small, tight, monomorphic tokenizer loop)
#   CODEBASE_TYPESCRIPT_VERSION, CODEBASE_ACORN_VERSION  override the pins
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
TS_VERSION=${CODEBASE_TYPESCRIPT_VERSION:-5.4.5}
ACORN_VERSION=${CODEBASE_ACORN_VERSION:-8.11.3}
DEPS=$TOP/.deps/codebases
STAMP="typescript@$TS_VERSION acorn@$ACORN_VERSION"

if [ -f "$DEPS/node_modules/typescript/lib/typescript.js" ] &&
	[ -f "$DEPS/node_modules/acorn/dist/acorn.js" ] &&
	[ "$(cat "$DEPS/.codebases-version" 2>/dev/null)" = "$STAMP" ]; then
	echo "$DEPS/node_modules"
	exit 0
fi
command -v npm >/dev/null || { echo "install-codebases: npm not found (Node.js 20 with npm is needed)" >&2; exit 1; }
mkdir -p "$DEPS"
echo "install-codebases: npm install $STAMP into $DEPS" >&2
npm install --prefix "$DEPS" --no-audit --no-fund --no-save --ignore-scripts --loglevel=error \
	"typescript@$TS_VERSION" "acorn@$ACORN_VERSION" >&2
for f in typescript/lib/typescript.js acorn/dist/acorn.js; do
	[ -f "$DEPS/node_modules/$f" ] || { echo "install-codebases: $f missing after npm install" >&2; exit 1; }
done
echo "$STAMP" >"$DEPS/.codebases-version"
echo "$DEPS/node_modules"
