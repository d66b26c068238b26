#!/usr/bin/env bash
# The fixed-path guard: a test, script or build file that names a path
# outside the repository and the temp dirs it makes itself passes on the
# machine where that path was left by hand and fails on every fresh host.
#
# Flags literals such as /tmp/<name>, /var/tmp/<name>, /dev/shm/<name> or /home/<user> in
# the repository's code (tests, scripts, bench, build and CI files).
# Allowed: mktemp templates (XXXXXX), and /tmp/perf-PID.map, which is where
# V8 itself writes its perf map (tests remove the maps of the runtimes they
# started).  Recorded inputs (fuzz corpora, captured profiles) are data,
# never opened by the path they mention, and are not read.
#
# Prints one line per offending literal; exits 1 when there is any.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2

files() {
	find tests scripts bench .ci Makefile -type f \
		\( -name '*.sh' -o -name '*.c' -o -name '*.h' -o -name '*.js' -o -name '*.py' \
		-o -name '*.in' -o -name '*.capnp' -o -name Makefile -o -path '.ci/*' \) \
		-not -path 'tests/fuzz/corpus/*' -not -path '*/node_modules/*' 2>/dev/null | sort
}

bad=$(files | xargs grep -nE '(/tmp|/var/tmp|/dev/shm)/[A-Za-z0-9_@$.{-]|/home/[A-Za-z0-9_]' 2>/dev/null |
	grep -vE 'XXXXXX|/tmp/perf-' |
	grep -v '^tests/check_paths.sh:')
if [ -n "$bad" ]; then
	echo "fixed paths outside the repository and the test's own temp dirs:"
	echo "$bad" | cut -c1-200 | sed 's/^/  /'
	echo "make what the test needs from the repository into a temp dir (mktemp -d)"
	exit 1
fi
exit 0
