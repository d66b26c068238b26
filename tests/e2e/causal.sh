#!/usr/bin/env bash
# Causal ground truth on a real codebase: node 20 runs acorn (the npm
# parser, pinned by scripts/install-codebases.sh) parsing 1.7 MB of real
# JavaScript in a steady loop, in a copy whose fullCharCodeAtPos (a small
# method TurboFan inlines into the tokenizer) does a known integer cost
# first.  Timing the same work with and without the cost on the main thread
# gives the cost's true share (Mytkowicz et al., PLDI 2010); isoprof, with a
# code log and with no V8 flag at all (names and inlined frames read from
# the heap and the code objects, after `isoprof calibrate`), must give the
# function at least 80% of it, counting its inlined frames, and put it
# under callers the source has.  V8's own profiler (a run
# of its own) is printed beside it, not asserted.  Then the same acorn in
# workerd (fixtures/causal/worker.js, a request per iteration) with no V8
# flag: its truth timed on workerd's main thread, and isoprof, whose samples
# inside TurboFan's inlined code are placed by the deoptimization data
# there, must give the function at least 80% of it too.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/tests/fixtures/causal/causal-lib.sh"

T=$TEST_TMP
WORK=$T
trap 'causal_stop; kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
FN=fullCharCodeAtPos
COST=10
# the methods of acorn.js that call fullCharCodeAtPos
SOURCE_CALLERS="pp.nextToken pp.readToken_numberSign pp.readRadixNumber pp.readNumber pp.readWord1"

NM=${CODEBASES:-$(bash "$TOP/scripts/install-codebases.sh")}
if [ ! -f "$NM/acorn/dist/acorn.js" ]; then
	fail "codebases" "acorn is not installed (scripts/install-codebases.sh)"
	exit 0
fi
if ! causal_variant "$NM" "$T/changed" acorn "$FN" "$COST"; then
	fail "causal variant" "patch.js could not add the cost to $FN"
	exit 0
fi

# --- the truth: 3 alternating runs of each variant, 6 iterations each --------
read -r truth lo hi tu tc < <(causal_truth "$NM" "$T/changed" acorn 3 6)
echo "truth: the cost is $truth% of the changed code's main-thread time" \
	"(pairs $lo-$hi%; an iteration $tu ms unchanged, $tc ms changed)"
check "truth: the cost is measurable (10-80% of the main thread's time)" \
	awk -v t="${truth:-0}" 'BEGIN { exit !(t >= 10 && t <= 80) }'

# --- isoprof with a code log ----------------------------------------------------
mkdir -p "$T/log" "$T/out" "$T/v8log" "$T/v8"
if ! causal_start acorn "$T/changed" "$NM" $CAUSAL_FLAGS_LOG --logfile="$T/log/v8.log"; then
	fail "start" "node did not start"
	exit 0
fi
"$ISOPROF" record -q --pid "$CAUSAL_PID" --duration-ms 5000 -o "$T/out/cpu.pb.gz" \
	>"$T/record.out" 2>"$T/record.err"
rc=$?
pid=$CAUSAL_PID
causal_stop
cat "$T/record.err"
if [ $rc -eq 0 ] && no_sanitizer_report "$T/record.err"; then
	pass "record: exit 0"
else
	fail "record" "exit $rc"
fi
check "pprof: isoprof's profile read, the main thread's samples kept" \
	causal_main_thread "$T/main.pb.gz" "$pid" "$T/out/cpu.pb.gz"
read -r share how < <(causal_share "$T/main.pb.gz" "$FN")

# --- V8's profiler, in a run of its own: its sampling costs the main thread --
v8share=n/a
if causal_start acorn "$T/changed" "$NM" $CAUSAL_FLAGS_LOG --logfile="$T/v8log/v8.log" \
	--inspect=127.0.0.1:0; then
	port=$(sed -n 's|^Debugger listening on ws://127.0.0.1:\([0-9]*\)/.*|\1|p' "$CAUSAL_OUT" | head -1)
	"$ISOPROF" record -q --pid "$CAUSAL_PID" --duration-ms 5000 --v8 --inspector="127.0.0.1:$port" \
		--out-dir "$T/v8" >"$T/v8.out" 2>"$T/v8.err"
	causal_stop
	v8=$(ls "$T"/v8/*-cpu.v8.pb.gz 2>/dev/null | head -1)
	[ -n "$v8" ] && read -r v8share _ < <(causal_share "$v8" "$FN")
fi
echo "$FN: truth $truth%, isoprof with a code log $share% ($how), V8's profiler $v8share%"
check "isoprof: $FN inlined (the code log's frames, as pprof marks them)" \
	test "$how" = inline -o "$how" = partial
check "isoprof: $FN's share $share% >= 80% of the true $truth%" \
	awk -v s="${share:-0}" -v t="${truth:-0}" 'BEGIN { exit !(t > 0 && s >= 0.8 * t) }'
check "go tool pprof: the same share as isoprof top" \
	bash -c "pprof_top() { HOME=\${HOME:-/root} go tool pprof -top \"\$@\" 2>&1; }
		pprof_top '$T/main.pb.gz' | awk -v fn='$FN' '\$6 ~ (\"[.]\" fn \"\$\") { sub(\"%\", \"\", \$2); print \$2; exit }' |
		grep -qx '$share'"

# every sample's caller of the function is one that calls it in the source:
# an inlining table of other code at a reused address added callers it has not
go tool pprof -peek "[.]$FN\$" "$T/main.pb.gz" 2>/dev/null | awk -v ok="$SOURCE_CALLERS" '
	BEGIN { n = split(ok, a, " "); for (i = 1; i <= n; i++) good[a[i]] = 1 }
	/^-+\+/ { callers = 1; next }
	callers && /\|   / { v = $1; sub("ms$", "", v); if (v ~ /s$/) { sub("s$", "", v); v *= 1000 }
		name = $0; sub(/.*\|   /, "", name); sub(/ .*/, "", name)
		if (good[name]) right += v; else { wrong += v; print "caller not in the source: " name " " $1 } }
	callers && /\| [^ ]/ { callers = 0 }
	END { printf "callers: %d ms from the source'\''s callers, %d ms from others\n", right, wrong
	      exit !(right > 0 && wrong <= 0.01 * (right + wrong)) }' >"$T/callers.txt"
rc=$?
cat "$T/callers.txt"
check "isoprof: $FN's callers are its callers in acorn.js (others <= 1%)" test $rc -eq 0

# --- isoprof with no V8 flag: names, inferred names and inlined functions ---
# from the heap and the code objects, with node's calibrated layout
chmod 0711 "$T"
mkdir -p "$T/tmp" "$T/noflag"
TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$T/state" "$(readlink -f "$(command -v node)")" \
	>"$T/cal.out" 2>&1 || cat "$T/cal.out"
if causal_start acorn "$T/changed" "$NM"; then
	"$ISOPROF" record -q --no-calibrate --state-dir "$T/state" --pid "$CAUSAL_PID" \
		--duration-ms 5000 -o "$T/noflag/cpu.pb.gz" >"$T/noflag.out" 2>"$T/noflag.err"
	rc=$?
	pid=$CAUSAL_PID
	causal_stop
	cat "$T/noflag.err"
	check "record, no flag: exit 0" test $rc -eq 0
	nshare=0
	if causal_main_thread "$T/noflag-main.pb.gz" "$pid" "$T/noflag/cpu.pb.gz"; then
		read -r nshare nhow < <(causal_share "$T/noflag-main.pb.gz" "$FN")
	fi
	echo "$FN: truth $truth%, isoprof with no flag $nshare% (${nhow:-})"
	check "isoprof, no flag: $FN's share $nshare% >= 80% of the true $truth%" \
		awk -v s="${nshare:-0}" -v t="${truth:-0}" 'BEGIN { exit !(t > 0 && s >= 0.8 * t) }'
else
	fail "start (no flag)" "node did not start"
fi

# --- workerd with no V8 flag ------------------------------------------------
# The same acorn, unchanged and changed, in a worker (fixtures/causal/
# worker.js: one iteration of driver.js's acorn loop per request).  workerd
# keeps no source positions for optimized code without flags: the functions
# TurboFan inlined are placed by its deoptimization data.  The truth is timed
# on workerd's main thread, which runs the isolate; a code-log run first says
# whether TurboFan inlined the function in workerd too.
if ! WD=$(causal_workerd_bin); then
	fail "workerd" "cannot install workerd (scripts/install-workerd.sh)"
	exit 0
fi
wd_t0=$SECONDS
read -r wtruth wlo whi wtu wtc < <(causal_truth "$NM" "$T/changed" acorn 3 6 workerd)
echo "workerd truth: the cost is $wtruth% of the changed code's main-thread time" \
	"(pairs $wlo-$whi%; a request $wtu ms unchanged, $wtc ms changed)"
check "workerd truth: the cost is measurable (10-80% of the main thread's time)" \
	awk -v t="${wtruth:-0}" 'BEGIN { exit !(t >= 10 && t <= 80) }'

# wd_profile NAME V8FLAG...: the changed worker under sequential requests,
# 5 s of record into $T/NAME/; sets wshare, whow, wtid (the thread with the
# most JS samples) and wpid
wd_profile() {
	local name=$1 rc
	shift
	wshare=0 whow=absent wtid='' wpid=''
	mkdir -p "$T/$name/log"
	if ! causal_start_workerd "$T/changed" "$NM" "$@"; then
		fail "workerd start ($name)" "workerd did not answer"
		return 1
	fi
	causal_load 30
	wpid=$CAUSAL_PID
	"$ISOPROF" record -q --no-calibrate --state-dir "$T/state" --pid "$wpid" \
		--duration-ms 5000 -o "$T/$name/cpu.pb.gz" >"$T/$name/record.out" 2>"$T/$name/record.err"
	rc=$?
	causal_stop
	cat "$T/$name/record.err"
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$name/record.err"; then
		pass "workerd record ($name): exit 0"
	else
		fail "workerd record ($name)" "exit $rc"
	fi
	wtid=$(causal_js_thread "$T/$name/cpu.pb.gz")
	causal_main_thread "$T/$name/main.pb.gz" "$wpid" "$T/$name/cpu.pb.gz" &&
		read -r wshare whow < <(causal_share "$T/$name/main.pb.gz" "$FN")
	return 0
}

chmod 0711 "$T"
mkdir -p "$T/tmp"
TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$T/state" "$WD" >"$T/wdcal.out" 2>&1 ||
	cat "$T/wdcal.out"
if wd_profile wdlog $CAUSAL_WD_FLAGS_LOG "--logfile=$T/wdlog/log/v8.log"; then
	echo "$FN on workerd: truth $wtruth%, isoprof with a code log $wshare% ($whow)"
	check "workerd, code log: $FN inlined by TurboFan (pprof marks it inline or partial: $whow)" \
		test "$whow" = inline -o "$whow" = partial
fi
if wd_profile wdnoflag; then
	placed=$(sed -n 's/.*inlined code: .* placed by //p' "$T/wdnoflag/record.err" | head -1)
	echo "$FN on workerd: truth $wtruth%, isoprof with no flag $wshare% ($whow; placed by $placed)"
	check "workerd, no flag: the JS samples are the main thread's, whose time the truth is (tid ${wtid:-none}, pid $wpid)" \
		test "$wtid" = "$wpid"
	check "workerd, no flag: inlined functions placed by the deoptimization data ($placed)" \
		grep -q "inlined code: .*placed by.* deopt data [1-9]" "$T/wdnoflag/record.err"
	check "workerd, no flag: $FN's share $wshare% >= 80% of the true $wtruth%" \
		awk -v s="${wshare:-0}" -v t="${wtruth:-0}" 'BEGIN { exit !(t > 0 && s >= 0.8 * t) }'
fi
echo "workerd checks: $((SECONDS - wd_t0)) s"
