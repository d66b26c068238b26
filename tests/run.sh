#!/usr/bin/env bash
# Runs every test: the source guards, unit (cmocka, ASan+UBSan build),
# end-to-end (real BPF, real processes; the browser tests in tests/browser/
# are driven by e2e/flame.sh and e2e/serve.sh), and each fuzz target
# briefly.  Prints one result line per test and closes with
# "N passed, N failed, N skipped" and the list of what was skipped and
# why: a check this host cannot run (tests/lib.sh, needs_feature; e.g. GC
# pauses need Linux 6.6) is skipped, never failed.
#
#   tests/run.sh [ONLY]          everything (as root), or the tests whose
#                                name contains ONLY
#   tests/run.sh --check [ONLY]  the guards and unit tests only: no root,
#                                no BPF, seconds (`make check`)
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
export RESULTS=$(mktemp /tmp/isoprof-results.XXXXXX)
# Calibrated V8 layouts go to a state directory of the run's own, never to
# the host's; record calibrates nothing unless a test asks it to.
export ISOPROF_STATE_DIR=$(mktemp -d /tmp/isoprof-state.XXXXXX)
export ISOPROF_NO_CALIBRATE=1
# as root, not for the user who ran sudo (tests/lib.sh)
unset SUDO_UID SUDO_GID
export BUILD=$TOP/build
export ISOPROF=${ISOPROF:-$TOP/build/asan/isoprof}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
CHECK_ONLY=
if [ "${1:-}" = --check ]; then
	CHECK_ONLY=1
	shift
fi
ONLY=${1:-}

if [ -z "$CHECK_ONLY" ]; then
	if [ "$(id -u)" != 0 ]; then
		echo "isoprof tests load BPF programs: run them as root (or tests/run.sh --check)" >&2
		exit 2
	fi
	# The real workerd, from npm, as the demo uses it.
	if [ -z "${WORKERD:-}" ]; then
		WORKERD=$(bash scripts/install-workerd.sh) || { echo "cannot install workerd" >&2; exit 1; }
	fi
	export WORKERD
	# Real npm codebases (tests/e2e/causal.sh), pinned, also from npm; a
	# failed install fails the test that needs them, not the whole run.
	if [ -z "${CODEBASES:-}" ]; then
		CODEBASES=$(bash scripts/install-codebases.sh) || CODEBASES=
	fi
	export CODEBASES
	# The bundler a TypeScript worker is deployed with (tests/e2e/source_maps.sh).
	if [ -z "${ESBUILD:-}" ]; then
		ESBUILD=$(bash scripts/install-esbuild.sh) || ESBUILD=
	fi
	export ESBUILD
fi

# A test that names a fixed path outside the repo passes only where that
# path was left by hand: the guard fails the run instead.
# An include that goes up a layer is a failure too (tests/check_layers.sh),
# and so is a link between docs that points nowhere (tests/check_docs.sh).
run_guards() {
	local g name
	for g in paths layers docs; do
		name="guard: check_$g"
		[ -n "$ONLY" ] && [[ $name != *$ONLY* ]] && continue
		if bash "tests/check_$g.sh"; then
			echo "ok   $name"
			echo "pass $name" >>"$RESULTS"
		else
			echo "FAIL $name"
			echo "fail $name" >>"$RESULTS"
		fi
	done
}

run_unit() {
	local t name out
	for t in build/asan/tests/test_*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		[ -n "$ONLY" ] && [[ $name != *$ONLY* ]] && continue
		out=$(mktemp)
		if (cd "$TOP" && BUILD=$TOP/build/asan "$t") >"$out" 2>&1; then
			echo "ok   unit: $name ($(grep -c '\[       OK \]' "$out") cases)"
			echo "pass unit: $name" >>"$RESULTS"
		else
			cat "$out"
			echo "FAIL unit: $name"
			echo "fail unit: $name" >>"$RESULTS"
		fi
		rm -f "$out"
	done
}

# V8 writes its perf map to /tmp/perf-PID.map and never removes it: the
# maps of the runtimes a test started (new since it began, their process
# gone) are removed after it, so test runs do not fill /tmp.
perf_maps() {
	find /tmp -maxdepth 1 -name 'perf-*.map' -printf '%f\n' 2>/dev/null | sort
}

remove_new_perf_maps() {
	local before=$1 f pid
	perf_maps | comm -13 "$before" - | while read -r f; do
		pid=${f#perf-}
		pid=${pid%.map}
		[[ $pid =~ ^[0-9]+$ ]] || continue
		[ -d "/proc/$pid" ] || rm -f "/tmp/perf-$pid.map"
	done
}

# What this host offers isoprof, asked once for the whole run: printed for
# the log, and its JSON handed to every test (tests/lib.sh, needs_feature).
host_features() {
	local rc
	ISOPROF_FEATURES=$(mktemp /tmp/isoprof-features.XXXXXX)
	export ISOPROF_FEATURES
	echo "== $ISOPROF check"
	"$ISOPROF" check
	"$ISOPROF" check --json >"$ISOPROF_FEATURES"
	rc=$?
	# 5: record cannot run here: the tests that record fail, and the table says why
	if [ $rc -eq 5 ]; then
		echo "isoprof check: record cannot run on this host (see above): the tests that record will fail"
	elif [ $rc -ne 0 ]; then
		echo "fail isoprof check --json: exit $rc" >>"$RESULTS"
		echo "FAIL isoprof check --json exited $rc"
		: >"$ISOPROF_FEATURES"
	fi
}

run_e2e() {
	local t before lines tests=()
	for t in tests/e2e/*.sh; do
		[ -f "$t" ] || continue
		[ -n "$ONLY" ] && [[ $t != *$ONLY* ]] && continue
		tests+=("$t")
	done
	[ ${#tests[@]} -gt 0 ] || return 0
	host_features
	before=$(mktemp)
	for t in "${tests[@]}"; do
		echo "== $t"
		perf_maps >"$before"
		lines=$(wc -l <"$RESULTS")
		if ! bash "$t"; then
			echo "fail $(basename "$t" .sh): script exited non-zero" >>"$RESULTS"
			echo "FAIL $t exited non-zero"
		fi
		# what this host could not check, and why, under the suite's name
		tail -n +$((lines + 1)) "$RESULTS" | grep '^skip ' | sed "s|^skip |-- skipped: |"
		remove_new_perf_maps "$before"
	done
	rm -f "$before" "$ISOPROF_FEATURES"
}

run_fuzz() {
	local f name corpus log
	for f in build/fuzz/fuzzers/fuzz_*; do
		[ -x "$f" ] || continue
		name=$(basename "$f")
		[ -n "$ONLY" ] && [[ $name != *$ONLY* ]] && continue
		corpus=$(mktemp -d)
		[ -d "tests/fuzz/corpus/$name" ] && cp -r "tests/fuzz/corpus/$name/." "$corpus/"
		log=$(mktemp)
		# Parsers of whole files get inputs big enough to show quadratic
		# work (a deep .cpuprofile chain, a code log of many moves); any
		# input that takes over 10 s is a failure, not a slow run.
		case $name in
		fuzz_cpuprofile | fuzz_heapprofile | fuzz_profile_file | fuzz_v8log) max_len=1048576 ;;
		*) max_len=65536 ;;
		esac
		if "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -max_len=$max_len -timeout=10 \
			-print_final_stats=1 \
			"$corpus" >"$log" 2>&1; then
			echo "ok   fuzz: $name ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}') runs)"
			echo "pass fuzz: $name" >>"$RESULTS"
		else
			tail -40 "$log"
			echo "FAIL fuzz: $name"
			echo "fail fuzz: $name" >>"$RESULTS"
		fi
		rm -rf "$corpus" "$log"
	done
}

run_guards
run_unit
if [ -z "$CHECK_ONLY" ]; then
	run_e2e
	run_fuzz
fi

passed=$(grep -c '^pass' "$RESULTS")
failed=$(grep -c '^fail' "$RESULTS")
skipped=$(grep -c '^skip' "$RESULTS")
if [ "$skipped" -gt 0 ]; then
	echo
	echo "Skipped (this host lacks what they need):"
	grep '^skip' "$RESULTS" | sed 's/^skip /  /'
fi
if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:"
	grep '^fail' "$RESULTS" | sed 's/^fail /  /'
fi
rm -f "$RESULTS"
rm -rf "$ISOPROF_STATE_DIR"
echo
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ $((passed + skipped)) -gt 0 ]
