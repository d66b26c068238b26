#!/usr/bin/env bash
# Runs every test: unit (cmocka, ASan+UBSan build), end-to-end (real BPF,
# real processes), and each fuzz target briefly.  Prints one result line per
# test and closes with "N passed, N failed".
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP"
export RESULTS=$(mktemp /tmp/isoprof-results.XXXXXX)
export BUILD=$TOP/build
export ISOPROF=${ISOPROF:-$TOP/build/asan/isoprof}
FUZZ_SECONDS=${FUZZ_SECONDS:-15}
ONLY=${1:-}

if [ "$(id -u)" != 0 ]; then
	echo "isoprof tests load BPF programs: run them as root" >&2
	exit 2
fi

# The real workerd, from npm, as the demo uses it.
if [ -z "${WORKERD:-}" ]; then
	WORKERD=$(bash scripts/install-workerd.sh) || { echo "cannot install workerd" >&2; exit 1; }
fi
export WORKERD

# A test that names a fixed path outside the repo passes only where that
# path was left by hand: the guard fails the run instead.
run_guards() {
	[ -n "$ONLY" ] && [[ paths != *$ONLY* ]] && return
	if bash tests/check_paths.sh; then
		echo "ok   guard: no fixed paths outside the repository and temp dirs"
		echo "pass guard: fixed paths" >>"$RESULTS"
	else
		echo "FAIL guard: fixed paths"
		echo "fail guard: fixed paths" >>"$RESULTS"
	fi
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

run_e2e() {
	local t
	for t in tests/e2e/*.sh; do
		[ -f "$t" ] || continue
		[ -n "$ONLY" ] && [[ $t != *$ONLY* ]] && continue
		echo "== $t"
		if ! bash "$t"; then
			echo "fail $(basename "$t" .sh): script exited non-zero" >>"$RESULTS"
			echo "FAIL $t exited non-zero"
		fi
	done
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
		if "$f" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
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
run_e2e
run_fuzz

passed=$(grep -c '^pass' "$RESULTS")
failed=$(grep -c '^fail' "$RESULTS")
if [ "$failed" -gt 0 ]; then
	echo
	echo "Failures:"
	grep '^fail' "$RESULTS" | sed 's/^fail /  /'
fi
rm -f "$RESULTS"
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
