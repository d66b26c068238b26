#!/usr/bin/env bash
# isoprof crosscheck on real data: node profiling itself with --cpu-prof
# while isoprof records the same process.  The windows overlap without
# being equal (V8's covers the whole run), which the report must survive.
# Then the workerd demo under traffic through `record --v8`, whose report
# must give its noise floor.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
# node writes CPU.*.cpuprofile and isolate-*.log files into its cwd
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; demo_stop; rm -rf "$T"' EXIT
PA=26141 PB=26142 PI=26143

JS=$TOP/tests/fixtures/js

# crosscheck NAME ARGS...: run it, keep stdout in $T/NAME.out, stderr in $T/NAME.err
crosscheck() {
	local name=$1
	shift
	"$ISOPROF" crosscheck "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	if ! no_sanitizer_report "$T/$name.err"; then
		cat "$T/$name.err"
		return 99
	fi
	return $rc
}

# json_field FILE EXPR: a Python expression over the report `r`
json_field() {
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

node --perf-basic-prof --cpu-prof --cpu-prof-interval 1000 "$JS/two_hot.js" 500 5 "$T/truth.txt" &
np=$!
sleep 1
"$ISOPROF" record -q --pid $np --duration-ms 3000 -o "$T/iso.pb.gz" 2>"$T/record.err"
rc=$?
wait $np
cat "$T/truth.txt"
if [ $rc -ne 0 ] || ! no_sanitizer_report "$T/record.err"; then
	cat "$T/record.err"
	fail "record" "isoprof record exited $rc or a sanitizer reported"
	exit 0
fi
cpuprofile=$(ls "$T"/CPU.*.cpuprofile 2>/dev/null | head -1)
if [ -z "$cpuprofile" ]; then
	fail "node --cpu-prof" "no CPU.*.cpuprofile in $T"
	exit 0
fi

# --- text report ---------------------------------------------------------------
if crosscheck text "$T/iso.pb.gz" "$cpuprofile"; then
	cat "$T/text.out"
	if grep -q '^Verdict: agree$' "$T/text.out"; then
		pass "text report: the two profilers agree"
	else
		fail "text report" "verdict: $(grep '^Verdict' "$T/text.out")"
	fi
	if grep -qE '^  +[0-9.]+% +1 +[0-9.]+% +1 +[-+]?[0-9.]+\*? +\[[-+0-9., ]+\] +hotAlpha \(two_hot\.js\)$' \
		"$T/text.out"; then
		pass "text report: hotAlpha ranks first on both sides"
	else
		fail "text report" "no row with hotAlpha first on both sides"
	fi
	if grep -qE '^Noise floor: TVD 0\.[0-9]{3} \(95th percentile of the TVD over 400 random splits' \
		"$T/text.out"; then
		pass "text report: $(grep -o '^Noise floor: TVD [0-9.]*' "$T/text.out")"
	else
		fail "text report" "no noise floor line"
	fi
else
	cat "$T/text.err"
	fail "text report" "isoprof crosscheck exited $?"
fi

# --- JSON report ---------------------------------------------------------------
if crosscheck json --json "$T/iso.pb.gz" "$cpuprofile" && python3 -m json.tool "$T/json.out" \
	>/dev/null; then
	pass "--json: one JSON object"
	tvd=$(json_field "$T/json.out" 'r["tvd"]')
	ti=$(json_field "$T/json.out" 'r["top_isoprof"]')
	tv=$(json_field "$T/json.out" 'r["top_v8"]')
	if awk -v t="$tvd" 'BEGIN { exit !(t < 0.25) }'; then
		pass "TVD $tvd < 0.25"
	else
		fail "TVD" "$tvd >= 0.25"
	fi
	if [ "$ti" = "$tv" ] && [ "$ti" = "hotAlpha (two_hot.js)" ]; then
		pass "same top JS function on both sides: $ti"
	else
		fail "top JS function" "isoprof '$ti', V8 '$tv'"
	fi
	missing=$(json_field "$T/json.out" '" ".join(k for k in ["isoprof", "v8", "tvd", "spearman", "spearman_n", "functions", "top_isoprof", "top_v8", "agree", "verdict", "roles_guessed", "notes"] if k not in r) + " ".join(s + "." + k for s in ["isoprof", "v8"] for k in ["samples", "window_ns", "period", "rate_hz", "js_samples", "top", "only_here", "class_shares", "class_shares_main_thread"] if k not in r[s]) + ("" if "other_threads" in r["isoprof"] else " isoprof.other_threads")')
	if [ -z "$missing" ]; then
		pass "--json has every field"
	else
		fail "--json fields" "missing: $missing"
	fi
	# the verdict follows from the noise: the distance within the floor plus
	# the allowance, and every row with its difference and interval
	if [ "$(json_field "$T/json.out" 'int(0 < r["noise_floor"] < 0.25 and r["noise"]["median"] <= r["noise_floor"] and abs(r["tvd_threshold"] - r["noise_floor"] - r["systematic_allowance"]) < 1e-9 and r["agree"] == (r["tvd"] <= r["tvd_threshold"] and not r["top_differs_beyond_noise"]) and all(f["diff_pp_interval"][0] <= f["diff_pp_interval"][1] and isinstance(f["significant"], bool) and abs(f["diff_pp"] - 100 * (f["isoprof_share"] - f["v8_share"])) < 1e-9 for f in r["functions"]))')" = 1 ]; then
		pass "--json: noise floor $(json_field "$T/json.out" 'round(r["noise_floor"], 3)') (TVD $tvd), rows with diff_pp, interval, significant"
	else
		fail "--json noise" "$(json_field "$T/json.out" '(r.get("noise_floor"), r.get("tvd_threshold"), r.get("agree"), r["functions"][:1])')"
	fi
	# both sides saw the run.  isoprof samples the thread only while it is on a CPU, so
	# on a busy machine its rate is below the nominal 1000 Hz, never much above it.
	if [ "$(json_field "$T/json.out" 'int(r["isoprof"]["js_samples"] > 500 and r["v8"]["js_samples"] > 1000 and 100 < r["isoprof"]["rate_hz"] < 1100 and r["v8"]["median_interval_ns"] > 0 and r["v8"]["main_thread_samples"] == r["v8"]["samples"])')" = 1 ]; then
		pass "--json: samples, rates and V8's median interval are plausible"
	else
		fail "--json samples" "$(json_field "$T/json.out" '(r["isoprof"]["js_samples"], r["v8"]["js_samples"], r["isoprof"]["rate_hz"], r["v8"].get("median_interval_ns"))')"
	fi
	rho=$(json_field "$T/json.out" 'r["spearman"]')
	if awk -v r="$rho" 'BEGIN { exit !(r + 0 > 0) }'; then
		pass "rank correlation $rho > 0"
	else
		fail "rank correlation" "rho '$rho'"
	fi
else
	cat "$T/json.err"
	fail "--json" "exit status or not JSON"
fi

# --- roles come from the content, not the order ------------------------------
"$ISOPROF" convert "$cpuprofile" "$T/v8.pb.gz" 2>"$T/convert.err" || cat "$T/convert.err"
if crosscheck swapped --json "$T/v8.pb.gz" "$T/iso.pb.gz" &&
	[ "$(json_field "$T/swapped.out" 'r["roles_guessed"], r["isoprof"]["file"], r["tvd"] == '"$tvd")" = \
	  "(False, '$T/iso.pb.gz', True)" ]; then
	pass "V8's profile as pprof, given first: told apart by its comment, same TVD"
else
	cat "$T/swapped.err"
	fail "roles" "$(json_field "$T/swapped.out" 'r["roles_guessed"], r["isoprof"]["file"], r["tvd"]' 2>&1)"
fi
if crosscheck same "$T/iso.pb.gz" "$T/iso.pb.gz" && grep -q 'note: could not tell' "$T/same.out" &&
	grep -q 'distance over JS self shares: 0.000' "$T/same.out"; then
	pass "two isoprof profiles: roles guessed, and said so"
else
	fail "roles guessed" "$(head -5 "$T/same.out" "$T/same.err")"
fi

# --- the demo: alpha under traffic, through record --v8 ----------------------
if demo_start "$T/wd" "$PA" "$PB" "$PI"; then
	wrk -t1 -c2 -d12s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
	w1=$!
	sleep 3
	"$ISOPROF" record -q --pid "$WORKERD_PID" --v8 --script alpha.js --duration-ms 3000 \
		--out-dir "$T/wdv8" >"$T/wdv8.out" 2>"$T/wdv8.err"
	rc=$?
	kill $w1 2>/dev/null
	wait $w1 2>/dev/null
	json=$(ls "$T"/wdv8/alpha-*-crosscheck.json 2>/dev/null | head -1)
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/wdv8.err" && [ -s "$json" ]; then
		floor=$(grep -o '^Noise floor: TVD [0-9.]*' "$T/wdv8.out")
		if [ -n "$floor" ]; then
			pass "demo, record --v8: the report prints its noise floor ($floor)"
		else
			fail "demo, record --v8" "no noise floor in the report"
		fi
		if [ "$(json_field "$json" 'int(0 < r["noise_floor"] < 0.25 and r["tvd"] <= r["tvd_threshold"] and r["agree"] and r["isoprof"]["js_samples"] > 300 and r["v8"]["js_samples"] > 300)')" = 1 ]; then
			pass "demo alpha: agree, TVD $(json_field "$json" 'round(r["tvd"], 3)') within $(json_field "$json" 'round(r["tvd_threshold"], 3)') (noise floor $(json_field "$json" 'round(r["noise_floor"], 3)') at $(json_field "$json" 'r["isoprof"]["js_samples"], r["v8"]["js_samples"]') JS samples)"
		else
			fail "demo alpha" "$(json_field "$json" '(r.get("noise_floor"), r["tvd"], r.get("tvd_threshold"), r["verdict"], r["isoprof"]["js_samples"], r["v8"]["js_samples"])')"
		fi
	else
		cat "$T/wdv8.err"
		fail "demo, record --v8" "exit $rc, or no cross-check JSON: $(ls "$T/wdv8" 2>/dev/null | tr '\n' ' ')"
	fi
	demo_stop
else
	tail -5 "$T/wd/workerd.log"
	fail "workerd start" "the demo did not start"
fi

# --- errors -------------------------------------------------------------------
crosscheck missing "$T/iso.pb.gz" "$T/nonexistent.cpuprofile"
rc=$?
if [ $rc -eq 1 ] && grep -q "^isoprof: crosscheck: $T/nonexistent.cpuprofile: " "$T/missing.err"; then
	pass "unreadable input: exit 1 with the file named"
else
	fail "unreadable input" "exit $rc: $(cat "$T/missing.err")"
fi
echo '{"nodes": []}' >"$T/bad.cpuprofile"
crosscheck bad "$T/iso.pb.gz" "$T/bad.cpuprofile"
rc=$?
if [ $rc -eq 1 ] && [ -s "$T/bad.err" ]; then
	pass "malformed .cpuprofile: exit 1 ($(cat "$T/bad.err"))"
else
	fail "malformed .cpuprofile" "exit $rc"
fi
crosscheck usage "$T/iso.pb.gz"
rc=$?
if [ $rc -eq 2 ]; then
	pass "one argument: usage error, exit 2"
else
	fail "usage" "exit $rc"
fi
exit 0
