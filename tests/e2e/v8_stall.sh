#!/usr/bin/env bash
# record --v8 when V8's side does not answer: node's main thread stops
# serving its inspector in the middle of the window, blocked off-CPU
# (execSync) or busy in native code (pbkdf2Sync), for longer than the
# window and the wait after it.  isoprof must end within its bound of the
# window (a quarter of it, 2 s at least: docs/v8-profiler.md), write its own
# profile with the window's duration (go tool pprof), say in text and
# --json that V8's profiler did not answer and why, skip the cross-check
# (with --json, stdout is the JSON document alone and the text goes to
# stderr), and leave the runtime usable for the next capture.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/v8_stall.XXXXXX")
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT
JS=$TOP/tests/fixtures/js/block_main.js
WINDOW_MS=4000

# json_summary FILE EXPR: EXPR over `d`, the --json summary, which is all of FILE
json_summary() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(eval(sys.argv[2]))' "$1" "$2"
}

# profiler_started PID: wait until V8's CPU profiler runs in PID (its sampling thread exists)
profiler_started() {
	for _ in $(seq 100); do
		grep -qs 'ProfEvntProc' /proc/"$1"/task/*/comm && return 0
		sleep 0.1
	done
	return 1
}

# stall MODE PORT: one capture of a node that blocks (MODE) once V8's profiler started
stall() {
	local mode=$1 port=$2 np rc start end elapsed dur mine
	node --perf-basic-prof --inspect=127.0.0.1:"$port" "$JS" "$mode" 12 2>"$T/$mode-node.err" &
	np=$!
	PIDS+=($np)
	sleep 1.5
	start=$(date +%s.%N)
	"$ISOPROF" record --json --pid "$np" --v8 --duration-ms $WINDOW_MS --out-dir "$T/$mode" \
		>"$T/$mode.out" 2>"$T/$mode.err" &
	rc=$!
	if profiler_started "$np"; then
		kill -USR2 "$np"
	else
		fail "$mode: V8's profiler" "never started in pid $np"
	fi
	wait $rc
	rc=$?
	end=$(date +%s.%N)
	elapsed=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
	cat "$T/$mode.err"
	echo "   $mode: record --v8 took $elapsed s for a $WINDOW_MS ms window, exit $rc"
	no_sanitizer_report "$T/$mode.err" || fail "$mode: sanitizers" "a report in stderr"
	# arming (~1-2 s under ASan), the window, the 2 s bound, teardown (1 s at most), writing
	if awk -v e="$elapsed" -v w=$WINDOW_MS 'BEGIN { exit !(e < w / 1000 + 9) }'; then
		pass "$mode: record --v8 ended ${elapsed} s after it started (window $((WINDOW_MS / 1000)) s)"
	else
		fail "$mode: record --v8 time" "$elapsed s"
	fi
	[ $rc -eq 1 ] && pass "$mode: exit status 1 (V8's profile missing, isoprof's written)" ||
		fail "$mode: exit status" "$rc, expected 1"
	mine=$(ls "$T/$mode"/*-cpu.pb.gz 2>/dev/null | head -1)
	dur=$( [ -n "$mine" ] && pprof_top "$mine" | sed -n 's/.*Duration: \([0-9.]*\)s.*/\1/p' | head -1)
	if [ -n "$dur" ] && awk -v d="$dur" -v w=$WINDOW_MS 'BEGIN { exit !(d > w / 1000 * 0.95 && d < w / 1000 * 1.05) }'; then
		pass "$mode: isoprof's profile reads back, Duration ${dur}s (within 5% of the window)"
	else
		fail "$mode: isoprof's profile" "'$mine', Duration '$dur'"
	fi
	if grep -qE 'over [0-9.]+ s' "$T/$mode.err" &&
		awk -v d="$(sed -n 's/.* over \([0-9.]*\) s at .*/\1/p' "$T/$mode.err")" -v w=$WINDOW_MS \
			'BEGIN { exit !(d > w / 1000 * 0.95 && d < w / 1000 * 1.05) }'; then
		pass "$mode: the summary's window is the window"
	else
		fail "$mode: summary window" "$(grep -o 'over [0-9.]* s' "$T/$mode.err")"
	fi
	if grep -q "pid $np: V8's profiler did not answer in time" "$T/$mode.err" &&
		grep -q "skipped: V8's profiler did not answer Profiler.stop" "$T/$mode.err" &&
		! ls "$T/$mode"/*v8.cpuprofile >/dev/null 2>&1; then
		pass "$mode: the report says V8 did not answer; the cross-check is skipped"
	else
		fail "$mode: report" "$(grep -i 'V8' "$T/$mode.err" | head -3)"
	fi
	if [ "$(json_summary "$T/$mode.out" '[(v["profile"], "did not answer Profiler.stop" in v["crosscheck"]["skipped"], v["why"] is not None) for v in d["v8"]]')" = \
		"[('late', True, True)]" ]; then
		pass "$mode: --json: v8 profile late, why, cross-check skipped (stdout is the JSON alone)"
	else
		fail "$mode: --json" "$(json_summary "$T/$mode.out" 'd.get("v8")' 2>&1)"
	fi
	LAST_PID=$np
}

# --- blocked: off-CPU in execSync -------------------------------------------
stall sleep 18971
if grep -q "pid $LAST_PID: .*main thread (tid $LAST_PID) is blocked" "$T/sleep.err"; then
	pass "sleep: the report says the main thread was blocked"
else
	fail "sleep: why" "$(grep "did not answer" "$T/sleep.err")"
fi
SLEEP_PID=$LAST_PID

# --- busy: on a CPU in native code ------------------------------------------
stall busy 18972
if grep -q "pid $LAST_PID: .*main thread (tid $LAST_PID) is busy and never yielded" "$T/busy.err"; then
	pass "busy: the report says the main thread was busy"
else
	fail "busy: why" "$(grep "did not answer" "$T/busy.err")"
fi

# --- the runtime is usable again once its thread is back ---------------------
for _ in $(seq 150); do grep -q 'done' "$T/sleep-node.err" && break; sleep 0.1; done
"$ISOPROF" record -q --pid "$SLEEP_PID" --v8 --duration-ms 1500 --out-dir "$T/after" \
	>"$T/after.out" 2>"$T/after.err"
rc=$?
if [ $rc -eq 0 ] && ls "$T"/after/*-v8.cpuprofile >/dev/null 2>&1; then
	pass "after the stall: a new record --v8 gets V8's profile"
else
	cat "$T/after.err"
	fail "after the stall" "exit $rc: $(ls "$T/after" 2>/dev/null | tr '\n' ' ')"
fi
exit 0
