#!/usr/bin/env bash
# Inlined functions read from the optimized code objects in the runtime's
# memory (docs/v8-frames.md, "Inlined functions"): calibrate learns where
# a binary's V8 keeps them; record then gives inlined frames with no flag
# and no code log, agrees with the code log where there is one, and keeps
# them after a `record --v8` window, whose code V8's log never saw.  Real
# node and workerd, read back with go tool pprof.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; demo_stop; rm -rf "$T"' EXIT
STATE=$T/state
PORT=18971
INSPECT=19371
NODE=$(readlink -f "$(command -v node)")
PHASES=$TOP/tests/fixtures/js/inline_phases.js
# the calibration run's runtime runs as nobody, in a directory under TMPDIR
chmod 0711 "$T"
mkdir -p "$T/tmp" "$T/log"
chmod 0777 "$T/log"

# calibrate NAME BINARY: into $STATE, JSON in $T/NAME.json
calibrate() {
	local name=$1 bin=$2 rc
	TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$STATE" --json "$bin" >"$T/$name.json" \
		2>"$T/$name.err"
	rc=$?
	cat "$T/$name.json" "$T/$name.err"
	check "calibrate $name: exit 0" test $rc -eq 0
	check "calibrate $name: code objects learnt, each read back as the code log describes it" \
		python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not (j["code_objects_learnt"] and j["code_objects_checked"] >= 4 and j["code_objects_agreed"] == j["code_objects_checked"]))' "$T/$name.json"
}

# record NAME ARGS...: a capture into $T/NAME.pb.gz, its summary in $T/NAME.err
record() {
	local name=$1 rc
	shift
	"$ISOPROF" record --no-calibrate --state-dir "$STATE" -o "$T/$name.pb.gz" "$@" \
		2>"$T/$name.err" >"$T/$name.out"
	rc=$?
	cat "$T/$name.err"
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$name.err"; then
		pass "record $name: exit 0"
	else
		fail "record $name" "exit $rc"
	fi
	pprof_top "$T/$name.pb.gz" >"$T/$name.top"
	sed -n '/flat%/,+6p' "$T/$name.top"
}

# from_code NAME: JIT-leaf samples whose inlined frames the code objects gave
from_code() {
	sed -n 's/.*from the code objects in memory \([0-9]*\).*/\1/p' "$T/$1.err" | head -1
}

# --- node -------------------------------------------------------------------
calibrate node "$NODE"

# no flag at all: names from the heap, inlined frames from the code objects
node "$PHASES" 12 >/dev/null &
np=$!
sleep 2
record noflag --pid $np --duration-ms 3000
kill $np 2>/dev/null
wait $np 2>/dev/null
n=$(from_code noflag)
check "node, no flag: samples inside inlined functions, from the code objects (${n:-0})" \
	test "${n:-0}" -ge 500
noflag_leaf=$(share_of leafA "$T/noflag.top")
check "node, no flag: leafA, always inlined, has its own samples ($noflag_leaf%)" \
	awk -v s="$noflag_leaf" 'BEGIN { exit !(s >= 30) }'
check "node, no flag: midA and outerA are on its stacks" \
	bash -c "grep -qw midA '$T/noflag.top' && grep -qw outerA '$T/noflag.top'"

# a code log too: the two sources agree; then a --v8 window, after which the
# code V8 compiled during it (chain B, started then) is in no log
node --perf-basic-prof --interpreted-frames-native-stack --log-code --logfile-per-isolate \
	--logfile="$T/log/v8.log" --inspect=127.0.0.1:$INSPECT "$PHASES" 40 >/dev/null 2>&1 &
np=$!
sleep 2
record before --pid $np --duration-ms 3000
agree=$(sed -n 's/.*code log and the code objects agree on \([0-9]*\) of \([0-9]*\) frames.*/\1 \2/p' "$T/before.err")
check "code log and code objects agree on the inlined functions of >= 95% of frames ($agree)" \
	awk -v n="$agree" 'BEGIN { split(n, a, " "); exit !(a[2] >= 5 && a[1] >= 0.95 * a[2]) }'
before_leaf=$(share_of leafA "$T/before.top")
# two fresh processes: leafA's share alone moves by up to 8 points between
# them (below; CI saw 70.4% against 78.7%)
check "with a code log: leafA's share within 10 points of the unflagged run's ($before_leaf% vs $noflag_leaf%)" \
	awk -v a="$before_leaf" -v b="$noflag_leaf" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a >= 30 && d <= 10) }'
(sleep 1; kill -USR2 $np) &
"$ISOPROF" record --no-calibrate --state-dir "$STATE" --pid $np --v8 --duration-ms 3000 \
	--out-dir "$T/v8run" >"$T/v8run.out" 2>"$T/v8run.err"
rc=$?
cat "$T/v8run.err"
check "record --v8: exit 0" test $rc -eq 0
sleep 1
record after --pid $np --duration-ms 3000
n=$(from_code after)
check "after --v8: chain B's inlined frames come from the code objects (${n:-0} samples)" \
	test "${n:-0}" -ge 500
after_leaf=$(share_of leafB "$T/after.top")
# Two chains in two phases of one process: leafA's share alone moves by up
# to 8 points between fresh processes with the same flags (69-72% in some,
# 76-78% in others), isoprof's build aside, and the two chains are compiled
# apart (CI saw leafB 77.3% after leafA 67.1% before).  Without the code
# objects leafB has none of its own (below): 0%.
check "after --v8: leafB's share within 15 points of leafA's before ($after_leaf% vs $before_leaf%)" \
	awk -v a="$after_leaf" -v b="$before_leaf" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a >= 30 && d <= 15) }'
# what a capture without the code objects shows of the same code: its
# inlined functions charged to their caller (docs/v8-profiler.md)
"$ISOPROF" record -q --no-calibrate --state-dir "$T/none" --pid $np --duration-ms 2000 \
	-o "$T/nolayout.pb.gz" 2>/dev/null
echo "without code objects: leafB $(share_of leafB <(pprof_top "$T/nolayout.pb.gz"))%"
kill $np 2>/dev/null
wait $np 2>/dev/null

# --- workerd (TurboFan and Maglev) ------------------------------------------
WD=$(demo_workerd_bin) || { fail "workerd" "cannot install workerd"; exit 0; }
calibrate workerd "$WD"

# workerd_capture NAME FLAGS: the chain worker run with v8Flags = [FLAGS], under load
workerd_capture() {
	local name=$1 flags=$2 w
	rm -rf "$T/$name.d"
	mkdir -p "$T/$name.d"
	cp "$TOP/tests/fixtures/inlining/chain.js" "$T/$name.d/"
	sed -e "s|@V8FLAGS@|$flags|" -e "s|@PORT@|$PORT|" \
		"$TOP/tests/fixtures/inlining/config.capnp.in" >"$T/$name.d/config.capnp"
	(cd "$T/$name.d" && exec "$WD" serve config.capnp) >"$T/$name.d/workerd.log" 2>&1 &
	WORKERD_PID=$!
	if ! demo_wait_http "http://127.0.0.1:$PORT/"; then
		fail "workerd start ($name)" "$(tail -3 "$T/$name.d/workerd.log")"
		return 1
	fi
	wrk -t1 -c1 -d9s "http://127.0.0.1:$PORT/" >/dev/null 2>&1 &
	w=$!
	# a slow host reaches TurboFan's code later: 2 s in was sometimes
	# still Maglev's, whose inlining is not what is checked here
	sleep 4
	record "$name" --pid $WORKERD_PID --duration-ms 3000
	wait $w
	demo_stop
}

# no flag: V8 keeps no source positions for optimized code; its
# deoptimization data places the pcs, and the summary says so
if workerd_capture workerd-noflag ""; then
	check "workerd, no flag: the summary says the deoptimization data placed the inlined code" \
		grep -q "placed by deopt data" "$T/workerd-noflag.err"
	s=$(share_of leafChain "$T/workerd-noflag.top")
	check "workerd, no flag: leafChain, inlined, has its own samples ($s%)" \
		awk -v s="$s" 'BEGIN { exit !(s >= 20) }'
	# which of the chain JIT inlines into which differs between processes
	check "workerd, no flag: the chain's functions named" \
		grep -qwE "leafChain|midChain|outerChain" "$T/workerd-noflag.top"
fi
# a perf map and no code log: the code objects give the inlined functions
if workerd_capture workerd-perfmap '"--perf-basic-prof"'; then
	n=$(from_code workerd-perfmap)
	s=$(share_of leafChain "$T/workerd-perfmap.top")
	# TurboFan does not always inline the chain (seen once in ten runs:
	# no inlined sample at all, leafChain its own code)
	if [ "${n:-0}" -eq 0 ] && awk -v s="$s" 'BEGIN { exit !(s >= 20) }'; then
		skip "workerd, perf map only: samples inside inlined functions" \
			"V8 did not inline the chain in this process (leafChain $s% as its own code)"
	else
		check "workerd, perf map only: samples inside inlined functions, from the code objects (${n:-0})" \
			test "${n:-0}" -ge 300
	fi
	check "workerd, perf map only: leafChain, inlined, has its own samples ($s%)" \
		awk -v s="$s" 'BEGIN { exit !(s >= 20) }'
fi
