#!/usr/bin/env bash
# JS function names with no V8 flags at all: `isoprof calibrate` learns a
# runtime binary's V8 layout from one run of its own, and record then names
# the JS frames of processes of that binary started with no flag, from
# their heap, read in BPF (docs/v8-frames.md).  Real workerd (three workers,
# 1:2:3 units of work through service bindings) and real node, read back
# with go tool pprof; a layout of another binary is refused.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; demo_stop; rm -rf "$T"' EXIT
STATE=$T/state
PA=18961 PB=18962

WD=$(demo_workerd_bin) || { fail "workerd" "cannot install workerd"; exit 0; }

# --- calibrate: a fresh state directory, the binary's own run -----------------
# the calibration run's runtime runs as nobody, in a directory under TMPDIR
chmod 0711 "$T"
mkdir -p "$T/tmp"
TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$STATE" --json "$WD" >"$T/cal.json" 2>"$T/cal.err"
rc=$?
cat "$T/cal.json" "$T/cal.err"
if [ $rc -eq 0 ] && no_sanitizer_report "$T/cal.err"; then
	pass "calibrate workerd: exit 0"
else
	fail "calibrate workerd" "exit $rc"
fi
bid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["build_id"])' "$T/cal.json" 2>/dev/null)
check "calibrate workerd: layout stored under the build-id" test -s "$STATE/v8-layouts/$bid"
check "calibrate workerd: the layout names >= 90% of the sampled functions as the perf map" \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["checked"] >= 5 and j["agree_name"] >= 0.9 * j["checked"] and j["agree_line"] >= 0.8 * j["checked"]))' "$T/cal.json"
check "calibrate workerd: left no temp dir behind" bash -c "! ls -A '$T/tmp' | grep -q ."

# --- workerd: the same two workers with no V8 flag, then with the perf map ---
# start_workerd DIR FLAGS: the fixture into DIR, run with v8Flags = [FLAGS]
start_workerd() {
	local dir=$1 flags=$2
	mkdir -p "$dir"
	cp "$TOP"/tests/fixtures/noflags/*.js "$dir/"
	sed -e "s|@V8FLAGS@|$flags|" -e "s|@PORT_ALPHA@|$PA|" -e "s|@PORT_BETA@|$PB|" \
		"$TOP/tests/fixtures/noflags/config.capnp.in" >"$dir/config.capnp"
	(cd "$dir" && exec "$WD" serve config.capnp) >"$dir/workerd.log" 2>&1 &
	WORKERD_PID=$!
	demo_wait_http "http://127.0.0.1:$PA/" && demo_wait_http "http://127.0.0.1:$PB/"
}

# capture NAME: 5 s of the running workerd under load into $T/NAME/
capture() {
	local name=$1
	shift
	for _ in 1 2 3; do curl -s "http://127.0.0.1:$PA/" >/dev/null; curl -s "http://127.0.0.1:$PB/" >/dev/null; done
	wrk -t1 -c1 -d9s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
	local w1=$!
	wrk -t1 -c1 -d9s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
	local w2=$!
	sleep 2
	"$ISOPROF" record -q --no-calibrate --state-dir "$STATE" --pid "$WORKERD_PID" \
		--duration-ms 5000 --out-dir "$T/$name" "$@" 2>"$T/$name.err"
	local rc=$?
	cat "$T/$name.err"
	wait $w1 $w2
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$name.err"; then
		pass "record $name: exit 0"
	else
		fail "record $name" "exit $rc"
	fi
}

# share FUNCTION DIR: FUNCTION's flat share in the one profile of DIR whose top it is
# (prints "file share", or nothing)
top_share() {
	local fn=$1 dir=$2 f top
	for f in "$dir"/*-cpu.pb.gz; do
		pprof_top "$f" >"$f.top" 2>/dev/null
		top=$(awk '/flat%/ { on = 1; next } on && $6 != "" { print $6; exit }' "$f.top")
		[ "$top" = "$fn" ] && { echo "$(basename "$f") $(share_of "$fn" "$f.top")"; return; }
	done
}

# js_share FN SERVICE RUN: FN's share of the JS samples of SERVICE's isolate in
# capture RUN, from pprof's flat ms of FN and the summary's samples and js%
js_share() {
	local fn=$1 svc=$2 run=$3 f n js ms
	f=$(ls "$T/$run"/"$svc"-*-cpu.pb.gz 2>/dev/null | head -1)
	[ -n "$f" ] || { echo -100; return; }
	read -r n js < <(awk -v s="$svc" '$1 == "isolate" && $3 == s {
		for (i = 1; i <= NF; i++) { if ($i == "samples") n = $(i - 1); if ($i == "js") js = $(i + 1) }
		sub("%", "", js); print n, js; exit }' "$T/$run.err")
	ms=$(pprof_top "$f" | awk -v fn="$fn" '$6 == fn { v = $1; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
		if (u == "s") v *= 1000; print v; exit }')
	awk -v ms="${ms:-0}" -v n="${n:-0}" -v js="${js:-0}" 'BEGIN {
		if (n * js > 0) printf "%.1f", 100 * ms / (n * js / 100); else print -100 }'
}

if ! start_workerd "$T/wd" ""; then
	fail "workerd start" "$(tail -3 "$T/wd/workerd.log")"
	exit 0
fi
check "unflagged workerd: its config has no V8 flag" grep -q 'v8Flags = \[  \]' "$T/wd/config.capnp"
capture unflagged
check "record unflagged: no perf map exists" test ! -e "/tmp/perf-$WORKERD_PID.map"
named=$(sed -n 's/.*JIT-leaf samples: \([0-9]*\), named \([0-9]*\).*/\1 \2/p' "$T/unflagged.err")
check "record unflagged: >= 99% of JIT-leaf samples named ($named)" \
	awk -v n="$named" 'BEGIN { split(n, a, " "); exit !(a[1] >= 1000 && a[2] >= 0.99 * a[1]) }'
check "record unflagged: >= 99% of JS frames' functions validated" \
	grep -qE "function validated (99\.[0-9]|100\.0)%" "$T/unflagged.err"
for fn in fibAlpha walkBeta; do
	got=$(top_share "$fn" "$T/unflagged")
	if [ -n "$got" ]; then
		pass "unflagged: $fn tops its own isolate's profile (${got% *}, ${got#* }%)"
	else
		fail "unflagged: $fn" "no isolate's profile has it on top"
	fi
done
check "unflagged: isolates keep their service names (alpha-*, beta-*)" \
	bash -c "ls '$T'/unflagged/alpha-*-cpu.pb.gz '$T'/unflagged/beta-*-cpu.pb.gz >/dev/null"
check "unflagged: the summary says how the services were matched" \
	grep -q "named after their workerd service by the module names" "$T/unflagged.err"
f=$(ls "$T"/unflagged/alpha-*-cpu.pb.gz 2>/dev/null | head -1)
HOME=${HOME:-/root} go tool pprof -raw "$f" 2>/dev/null >"$T/raw.txt"
check "unflagged: fibAlpha carries its script and start line (alpha.js:2)" \
	grep -qE "fibAlpha alpha\.js:2 s=[0-9]+\(JS:fibAlpha alpha\.js:2:18\)" "$T/raw.txt"
wrk -t1 -c1 -d5s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
wrk -t1 -c1 -d5s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
sleep 1
"$ISOPROF" record -q --no-calibrate --state-dir "$STATE" --pid "$WORKERD_PID" --script alpha \
	--duration-ms 2000 -o "$T/alpha.pb.gz" 2>"$T/alpha.err"
rc=$?
sleep 2
pprof_top "$T/alpha.pb.gz" >"$T/alpha.top"
check "unflagged: --script alpha (a service name) exits 0 ($rc)" test $rc -eq 0
check "unflagged: --script alpha has fibAlpha and not walkBeta" \
	bash -c "grep -qw fibAlpha '$T/alpha.top' && ! grep -qw walkBeta '$T/alpha.top'"
# Another runtime on the host writes code logs: their scripts are not the
# flagless workerd's, which only its samples name; --script alpha with no
# --pid is still found there, not refused before the window.
mkdir -p "$T/nodelogs"
(cd "$T/nodelogs" && exec node --log-code --logfile-per-isolate --logfile="$T/nodelogs/v8.log" \
	-e 'function other() { let s = 0; for (let i = 0; i < 1e5; i++) s += i; return s; }
	    setInterval(other, 5);') &
NODE_PID=$!
for _ in $(seq 50); do ls "$T"/nodelogs/isolate-*-v8.log >/dev/null 2>&1 && break; sleep 0.1; done
wrk -t1 -c1 -d5s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
sleep 1
"$ISOPROF" record -q --no-calibrate --state-dir "$STATE" --script alpha \
	--duration-ms 2000 -o "$T/alpha-any.pb.gz" 2>"$T/alpha-any.err"
rc=$?
sleep 2
kill $NODE_PID 2>/dev/null
wait $NODE_PID 2>/dev/null
pprof_top "$T/alpha-any.pb.gz" >"$T/alpha-any.top"
check "unflagged: --script alpha with no --pid, beside a node that logs code, exits 0 ($rc)" \
	test $rc -eq 0
check "unflagged: --script alpha with no --pid has fibAlpha" grep -qw fibAlpha "$T/alpha-any.top"
demo_stop

if start_workerd "$T/wdf" '"--perf-basic-prof"'; then
	capture flagged
	# Shares of each isolate's JS samples, as a cross-check of JS profiles
	# compares them: the isolate's native and GC share is the process's own
	# (its share of all samples differed by up to 10 points between two
	# processes of the same binary here, with or without naming).
	for fn in fibAlpha:alpha walkBeta:beta; do
		a=$(js_share "${fn%:*}" "${fn#*:}" flagged)
		b=$(js_share "${fn%:*}" "${fn#*:}" unflagged)
		check "flagged vs unflagged: ${fn%:*}'s share of its isolate's JS within 3 points ($a% vs $b%)" \
			awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 50 && d <= 3) }'
	done
	agree=$(sed -n 's/.*heap names agree with the perf map on \([0-9]*\) of \([0-9]*\) frames.*/\1 \2/p' "$T/flagged.err")
	# a leaf sampled in a prologue still has its caller's frame pointer (docs/v8-frames.md)
	check "flagged: heap names agree with the perf map on >= 95% of frames ($agree)" \
		awk -v n="$agree" 'BEGIN { split(n, a, " "); exit !(a[2] >= 10 && a[1] >= 0.95 * a[2]) }'

	demo_stop
else
	fail "workerd start (perf map)" "$(tail -3 "$T/wdf/workerd.log")"
fi

# --- a layout of another binary: refused, never misread ----------------------
NODE=$(command -v node)
nbid=$(readelf -n "$(readlink -f "$NODE")" 2>/dev/null | awk '/Build ID/ { print $3; exit }')
if [ -n "$nbid" ]; then
	mkdir -p "$T/wrong/v8-layouts"
	sed "s/^build_id .*/build_id $nbid/" "$STATE/v8-layouts/$bid" >"$T/wrong/v8-layouts/$nbid"
	node "$TOP/tests/fixtures/js/two_hot.js" 300 6 "$T/truth-wrong.txt" &
	np=$!
	sleep 1
	"$ISOPROF" record -q --no-calibrate --state-dir "$T/wrong" --pid $np --duration-ms 2500 \
		-o "$T/wrong.pb.gz" 2>"$T/wrong.err"
	rc=$?
	cat "$T/wrong.err"
	wait $np
	check "a layout of another binary: record still exits 0" test $rc -eq 0
	check "a layout of another binary: no frame named from it" \
		grep -qE "frames named from it 0|JS frames read from V8's heap: 0" "$T/wrong.err"
	check "a layout of another binary: the guard rail turns naming off and says why" \
		grep -q "JS frames did not validate against the layout of build-id $nbid" "$T/wrong.err"
	check "a layout of another binary: no wrong name in the profile" \
		bash -c "! HOME=\${HOME:-/root} go tool pprof -top '$T/wrong.pb.gz' 2>/dev/null | grep -qE 'hotAlpha|hotBeta'"
else
	fail "node build-id" "readelf found none"
fi

# --- node: calibrate holds what it learns to node's own v8dbg_ symbols --------
TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$STATE" --json "$(readlink -f "$NODE")" \
	>"$T/ncal.json" 2>"$T/ncal.err"
rc=$?
cat "$T/ncal.json" "$T/ncal.err"
check "calibrate node: exit 0" test $rc -eq 0
check "calibrate node: every v8dbg_ value node carries agrees with the layout learnt" \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["v8dbg_compared"] >= 10 and j["v8dbg_agreed"] == j["v8dbg_compared"]))' "$T/ncal.json"

# --- node: calibrated on first use by record itself, then named with no flags --
node "$TOP/tests/fixtures/js/two_hot.js" 300 30 "$T/truth.txt" &
np=$!
sleep 1
env -u ISOPROF_NO_CALIBRATE TMPDIR="$T/tmp" "$ISOPROF" record -q --state-dir "$T/auto" --pid $np \
	--duration-ms 3000 -o "$T/node.pb.gz" 2>"$T/node.err"
rc=$?
cat "$T/node.err"
kill $np 2>/dev/null
wait $np 2>/dev/null
check "record unflagged node: exit 0" test $rc -eq 0
check "record unflagged node: says it calibrates the binary on first use" \
	grep -q "has no V8 layout yet: calibrating it once" "$T/node.err"
check "record unflagged node: stored the layout it calibrated" test -s "$T/auto/v8-layouts/$nbid"
pprof_top "$T/node.pb.gz" >"$T/node.top" 2>/dev/null
sed -n '1,12p' "$T/node.top"
check "unflagged node: hotAlpha named" grep -qw hotAlpha "$T/node.top"
check "unflagged node: hotBeta named" grep -qw hotBeta "$T/node.top"
