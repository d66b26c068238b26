#!/usr/bin/env bash
# Identical inlined siblings get equal shares (docs/v8-frames.md, "Inlined
# functions"): two byte-identical small functions that TurboFan and Maglev
# inline into one caller, and a chain of three, in fresh processes of real
# workerd and node, with no V8 flag (workerd keeps no source positions:
# the deoptimization data places the pcs) and with a perf map and code log.
# Each sibling must get at least 35% (a third of the chain: 25%) of the
# shape's JS self time, and siblings must be within 10 points of each
# other, in every process.  Read back with go tool pprof.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; demo_stop; rm -rf "$T"' EXIT
STATE=$T/state
PORT=18975
FIX=$TOP/tests/fixtures/inlining
FLAGS_LOG='"--perf-basic-prof", "--log-code", "--logfile-per-isolate", "--logfile=log/v8.log"'
chmod 0711 "$T"
mkdir -p "$T/tmp"

# shares PROFILE FUNCTION...: each function's percent of their summed flat
# time (the shape's JS self time), "name=share" space-separated
shares() {
	local pb=$1
	shift
	pprof_top "$pb" | awk -v list="$*" '
		BEGIN { n = split(list, want, " "); for (i = 1; i <= n; i++) flat[want[i]] = 0 }
		$1 ~ /[0-9.]+(ms|s|us)$/ && ($6 in flat) {
			v = $1; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
			flat[$6] += v * (u == "s" ? 1000 : u == "us" ? 0.001 : 1) }
		END { for (f in flat) total += flat[f]
		      for (i = 1; i <= n; i++) printf "%s=%.1f ", want[i], total ? 100 * flat[want[i]] / total : 0
		      print "" }'
}

# share_in SHARES NAME
share_in() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# judge WHAT SHARES MIN NAME...: every NAME >= MIN, each pair within 10 points
judge() {
	local what=$1 s=$2 min=$3 a b
	shift 3
	for a in "$@"; do
		check "$what: $a has $(share_in "$s" "$a")% of the shape's JS self time (>= $min%)" \
			awk -v v="$(share_in "$s" "$a")" -v m="$min" 'BEGIN { exit !(v >= m) }'
	done
	for a in "$@"; do
		for b in "$@"; do
			[[ $a < $b ]] || continue
			check "$what: $a and $b within 10 points ($(share_in "$s" "$a")% vs $(share_in "$s" "$b")%)" \
				awk -v x="$(share_in "$s" "$a")" -v y="$(share_in "$s" "$b")" \
				'BEGIN { d = x - y; if (d < 0) d = -d; exit !(d <= 10) }'
		done
	done
}

# record NAME PID: a 3 s capture into $T/NAME.pb.gz, stderr in $T/NAME.err
record() {
	local rc
	"$ISOPROF" record --no-calibrate --state-dir "$STATE" --pid "$2" --duration-ms 3000 \
		-o "$T/$1.pb.gz" >"$T/$1.out" 2>"$T/$1.err"
	rc=$?
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$1.err"; then
		pass "record $1: exit 0"
	else
		cat "$T/$1.err"
		fail "record $1" "exit $rc"
	fi
	grep -E "inlined code:|sampled pcs" "$T/$1.err"
}

SIB="fetch siblings mid leafA leafB"
CHAIN="fetch chain chainMid chainA chainB chainC"

# --- workerd -------------------------------------------------------------------
WD=$(demo_workerd_bin) || { fail "workerd" "cannot install workerd"; exit 0; }
TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$STATE" --json "$WD" >"$T/calibrate.json" \
	2>"$T/calibrate.err"
check "calibrate workerd: the deoptimization data learnt" \
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); sys.exit(not j["deopt_learnt"])' \
	"$T/calibrate.json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print("calibrate: deopt", {k: v for k, v in j.items() if k.startswith("deopt")})' "$T/calibrate.json"

# workerd_run NAME FLAGS: a fresh workerd; siblings, then the chain, under load
workerd_run() {
	local name=$1 flags=$2 d=$T/$1.d w s
	mkdir -p "$d/log"
	chmod 0777 "$d/log"
	cp "$FIX/siblings.mjs" "$d/"
	sed -e "s|@V8FLAGS@|$flags|" -e "s|@PORT@|$PORT|" "$FIX/siblings.capnp.in" >"$d/config.capnp"
	(cd "$d" && exec "$WD" serve config.capnp) >"$d/workerd.log" 2>&1 &
	WORKERD_PID=$!
	if ! demo_wait_http "http://127.0.0.1:$PORT/"; then
		fail "workerd start ($name)" "$(tail -3 "$d/workerd.log")"
		return 1
	fi
	wrk -t1 -c1 -d8s "http://127.0.0.1:$PORT/siblings" >/dev/null 2>&1 &
	w=$!
	sleep 4
	record "$name-sib" $WORKERD_PID
	wait $w
	wrk -t1 -c1 -d7s "http://127.0.0.1:$PORT/chain" >/dev/null 2>&1 &
	w=$!
	sleep 3
	record "$name-chain" $WORKERD_PID
	wait $w
	demo_stop
}

for i in 1 2 3; do
	workerd_run "wd-noflag$i" "" || continue
	s=$(shares "$T/wd-noflag$i-sib.pb.gz" $SIB)
	echo "workerd, no flag, process $i: siblings $s"
	judge "workerd, no flag, process $i" "$s" 35 leafA leafB
	s=$(shares "$T/wd-noflag$i-chain.pb.gz" $CHAIN)
	echo "workerd, no flag, process $i: chain $s"
	judge "workerd, no flag, process $i, chain" "$s" 25 chainA chainB chainC
	# the leaves may still run as functions of their own a few seconds in
	# (then nothing is inlined to place); where V8 inlined them, the
	# deoptimization data placed them, and nothing was left to the caller
	check "workerd, no flag, process $i: inlined code placed by the deoptimization data" \
		grep -q "placed by deopt data" "$T/wd-noflag$i-sib.err" "$T/wd-noflag$i-chain.err"
	check "workerd, no flag, process $i: under 5% of such samples left to the caller" \
		python3 - "$T/wd-noflag$i-sib.err" "$T/wd-noflag$i-chain.err" <<'PY'
import re, sys
placed = caller = 0
for f in sys.argv[1:]:
    for m in re.finditer(r"inlined code: (\d+) JIT-leaf samples placed by (.*)", open(f).read()):
        caller += sum(int(n) for n in re.findall(r"caller only (\d+)", m.group(2)))
        placed += int(m.group(1))
sys.exit(not (placed and caller <= 0.05 * placed))
PY
done
for i in 1 2; do
	workerd_run "wd-log$i" "$FLAGS_LOG" || continue
	s=$(shares "$T/wd-log$i-sib.pb.gz" $SIB)
	echo "workerd, perf map and code log, process $i: siblings $s"
	judge "workerd, code log, process $i" "$s" 35 leafA leafB
	s=$(shares "$T/wd-log$i-chain.pb.gz" $CHAIN)
	echo "workerd, perf map and code log, process $i: chain $s"
	judge "workerd, code log, process $i, chain" "$s" 25 chainA chainB chainC
	# where V8 kept positions, the deoptimization data is checked against them
	n=$(sed -n 's/.*places \([0-9]*\) of \([0-9]*\) sampled pcs.*/\1 \2/p' \
		"$T/wd-log$i-sib.err" "$T/wd-log$i-chain.err" | awk '{ a += $1; b += $2 } END { print a + 0, b + 0 }')
	check "workerd, code log, process $i: deopt data and positions place >= 90% of pcs alike ($n)" \
		awk -v n="$n" 'BEGIN { split(n, a, " "); exit !(a[2] >= 20 && a[1] >= 0.9 * a[2]) }'
done

# --- node ----------------------------------------------------------------------
NODE=$(readlink -f "$(command -v node)")
cp "$FIX/siblings.mjs" "$FIX/siblings-loop.mjs" "$T/"
# node keeps source positions with no flag (it asks V8 for them at start-up)
node_run() {
	local name=$1 shape=$2 p
	shift 2
	node "$@" "$T/siblings-loop.mjs" "$shape" 8 >/dev/null 2>&1 &
	p=$!
	sleep 3
	record "$name" $p
	kill $p 2>/dev/null
	wait $p 2>/dev/null
	rm -f "/tmp/perf-$p.map"
}
TMPDIR=$T/tmp "$ISOPROF" calibrate --state-dir "$STATE" "$NODE" >/dev/null 2>&1
mkdir -p "$T/nlog"
for i in 1 2; do
	node_run "node-noflag$i" siblings
	s=$(shares "$T/node-noflag$i.pb.gz" siblings mid leafA leafB)
	echo "node, no flag, process $i: siblings $s"
	judge "node, no flag, process $i" "$s" 35 leafA leafB
	node_run "node-log$i" siblings --perf-basic-prof --log-code --logfile-per-isolate \
		--logfile="$T/nlog/v8.log"
	s=$(shares "$T/node-log$i.pb.gz" siblings mid leafA leafB)
	echo "node, perf map and code log, process $i: siblings $s"
	judge "node, code log, process $i" "$s" 35 leafA leafB
done
node_run node-chain chain
s=$(shares "$T/node-chain.pb.gz" chain chainMid chainA chainB chainC)
echo "node, no flag: chain $s"
judge "node, no flag, chain" "$s" 25 chainA chainB chainC
