# Helpers shared by the end-to-end tests (sourced, not run).
#
# Each tests/e2e/*.sh sources this file and calls `check NAME CMD...` or
# `pass NAME` / `fail NAME WHY`, and `needs_feature FEATURE WHAT` before
# checks that need more than every supported kernel offers.  Results go to
# $RESULTS (one line each: pass, fail or skip), which tests/run.sh counts.
# Tests use $ISOPROF (the ASan+UBSan build by default) and $BUILD for
# fixtures.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
ISOPROF=$(realpath "${ISOPROF:-$TOP/build/asan/isoprof}")
FIXTURES=${FIXTURES:-$BUILD/fixtures}
RESULTS=${RESULTS:-/dev/null}
TEST_TMP=${TEST_TMP:-$(mktemp -d /tmp/isoprof-test.XXXXXX)}
# ASan: leaks are errors; UBSan already aborts (-fno-sanitize-recover)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Tests run as root.  Under sudo, isoprof writes for the user who ran it and
# its file tools become that user (docs/security.md): a test that wants
# that sets SUDO_UID and SUDO_GID itself (tests/e2e/output_owner.sh).
unset SUDO_UID SUDO_GID

_suite=$(basename "${BASH_SOURCE[1]:-$0}" .sh)

pass() {
	echo "ok   $_suite: $1"
	echo "pass $_suite: $1" >>"$RESULTS"
}

fail() {
	echo "FAIL $_suite: $1: $2"
	echo "fail $_suite: $1: $2" >>"$RESULTS"
}

# skip NAME WHY: NAME was not checked on this host, and why; never a failure
skip() {
	echo "skip $_suite: $1: $2"
	echo "skip $_suite: $1: $2" >>"$RESULTS"
}

# needs_feature FEATURE WHAT: true when this host has FEATURE, a key of
# `isoprof check --json`'s "features" (the probes record itself uses:
# user/capture/host_features.h).  Otherwise WHAT is skipped with what the
# host lacks ("skip SUITE: WHAT: needs Linux 6.6 (uprobe_multi)") and it
# returns 1, so the test leaves out the checks that need it:
#   needs_feature uprobe_multi "GC pauses" || exit 0
# check runs once per run (tests/run.sh passes its answer in
# $ISOPROF_FEATURES), or once per test run alone.  A FEATURE check does
# not know is a failure: a misspelt name must not skip silently.
_features_json=
needs_feature() {
	local feature=$1 what=$2 answer
	if [ -z "$_features_json" ]; then
		if [ -s "${ISOPROF_FEATURES:-}" ]; then
			_features_json=$(cat "$ISOPROF_FEATURES")
		else
			_features_json=$("$ISOPROF" check --json 2>/dev/null)
		fi
	fi
	answer=$(python3 -c '
import json, sys
try:
    f = json.loads(sys.stdin.read())["features"][sys.argv[1]]
except Exception as e:
    print("error", type(e).__name__, e)
    sys.exit()
print("yes" if f["ok"] is True else "no " + (f["fix"] or "not known on this host"))' \
		"$feature" <<<"$_features_json")
	case $answer in
	yes) return 0 ;;
	no\ *) skip "$what" "${answer#no } ($feature)" ;;
	*) fail "$what" "isoprof check --json has no answer for '$feature': ${answer#error }" ;;
	esac
	return 1
}

# check NAME CMD...: pass when CMD exits 0
check() {
	local name=$1
	shift
	if "$@"; then pass "$name"; else fail "$name" "command failed: $*"; fi
}

# A sanitizer report is a failure whatever the exit status was.
no_sanitizer_report() {
	! grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$1"
}

# pprof_top FILE [ARGS...]: go tool pprof's -top, the third-party reader
pprof_top() {
	local f=$1
	shift
	HOME=${HOME:-/root} go tool pprof -top "$@" "$f" 2>&1
}

# share_of NAME TOPFILE: the flat% of function NAME in a pprof -top listing
share_of() {
	awk -v fn="$1" '$6 == fn { sub("%", "", $2); print $2; found = 1; exit } END { if (!found) print 0 }' "$2"
}

# services_config DIR PORT_ALPHA PORT_COUNTER PORT_ALLOC: the three-service
# workerd fixture (tests/fixtures/services/) in DIR, code logs in DIR/v8logs,
# its config as DIR/config.capnp
services_config() {
	local dir=$1
	mkdir -p "$dir/v8logs"
	cp -r "$TOP/tests/fixtures/services/alpha" "$TOP/tests/fixtures/services/counter" \
		"$TOP/tests/fixtures/services/alloc" "$dir/"
	sed -e "s|@LOGDIR@|$dir/v8logs|" -e "s|@PORT_ALPHA@|$2|" -e "s|@PORT_COUNTER@|$3|" \
		-e "s|@PORT_ALLOC@|$4|" "$TOP/tests/fixtures/services/config.capnp.in" \
		>"$dir/config.capnp"
}

# services_start DIR PORT_ALPHA: workerd on DIR/config.capnp (services_config;
# needs scripts/demo-lib.sh), its pid in WORKERD_PID and PIDS, up once alpha
# answers; 1 (the log's tail printed) when it does not
services_start() {
	(cd "$1" && exec "$(demo_workerd_bin)" serve config.capnp) >"$1/workerd.log" 2>&1 &
	WORKERD_PID=$!
	PIDS+=("$WORKERD_PID")
	demo_wait_http "http://127.0.0.1:$2/" && return 0
	tail -5 "$1/workerd.log"
	return 1
}

# heap_config DIR PORT_INSTR PORT_BUFFERS [V8FLAG...]: the allocation
# fixture (tests/fixtures/heap/, its ground truth at the top of its config)
# in DIR, code logs in DIR/v8logs, its config as DIR/config.capnp; each
# V8FLAG (--no-turbo-inlining) goes before the perf map's flags
heap_config() {
	local dir=$1 pi=$2 pb=$3 extra='' flag
	shift 3
	for flag in "$@"; do
		extra+="\"$flag\", "
	done
	mkdir -p "$dir/v8logs"
	cp "$TOP/tests/fixtures/heap/instr.js" "$TOP/tests/fixtures/heap/buffers.js" "$dir/"
	sed -e "s|@LOGDIR@|$dir/v8logs|" -e "s|@PORT_INSTR@|$pi|" -e "s|@PORT_BUFFERS@|$pb|" \
		-e "s|@EXTRA_V8FLAGS@|$extra|" "$TOP/tests/fixtures/heap/config.capnp.in" \
		>"$dir/config.capnp"
}
