#!/usr/bin/env bash
# GC pauses per isolate (the GC probes) against V8's own account of them:
# --trace-gc --trace-gc-nvp prints one line per collection with its isolate
# and its pause.  Each of a workerd's two workers (alloc: keeps objects,
# scavenges and mark-compacts of several ms; garbage: keeps none,
# sub-millisecond scavenges) and a node process is loaded inside a 5 s
# capture of its own; isoprof's count and mean pause
# for the isolate (the `gc:` line: V8's observable pause) must agree with
# V8's within 25%, and the `gc stop:` line (the whole Heap::CollectGarbage
# calls) must be there and total at least as much.  Then --no-gc-probes.
#
# Both runtimes run on their default heap settings: no young generation
# size fixed, so workerd's collections are mostly sub-millisecond
# scavenges, where the observable pause and the whole call differ most
# (docs/attribution.md, "Pauses, from uprobes").
#
# The comparison is fair when both sides look at the same collections:
#   - V8's lines are cut by line count: the count before isoprof starts and
#     after it exits (stdout line-buffered by stdbuf, so a line is in the
#     file as soon as V8 prints it);
#   - between those two marks, collections happen only while the load runs,
#     and the load runs strictly inside isoprof's window: it starts once the
#     probes are attached (their uprobe_multi links show in isoprof's
#     fdinfo) plus 1 s (the window opens after arming and the symbol
#     preload), and ends 1.5 s before the window does;
#   - no collection runs without allocation: V8's memory reducer, which
#     starts collections on a timer once allocation stops, is turned off
#     (--no-memory-reducer).
# isoprof counts a pause that begins and ends inside the window; V8 prints
# a line per observable pause (one per Heap::CollectGarbage), which isoprof
# probes: the counts match exactly when nothing else runs, and the 25%
# absorb a busy machine.
# A kernel without uprobe_multi links (before 6.6) skips all but
# --no-gc-probes (tests/lib.sh, needs_feature).
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/gc.XXXXXX")
NODE_PID=
cleanup() {
	kill $(jobs -p) 2>/dev/null
	demo_stop
	[ -n "$NODE_PID" ] && kill "$NODE_PID" 2>/dev/null && wait "$NODE_PID" 2>/dev/null
	rm -f "/tmp/perf-${WORKERD_PID:-x}.map" "/tmp/perf-${NODE_PID:-x}.map"
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

for tool in stdbuf wrk python3; do
	command -v $tool >/dev/null || { fail setup "$tool not found"; exit 0; }
done

# The pauses come from the GC probes' uprobe_multi links (Linux 6.6): without
# them, only --no-gc-probes is checked.
GC=
needs_feature uprobe_multi "GC pauses against V8's trace (workerd, node)" &&
	needs_feature gc_probes "GC pauses against V8's trace (workerd, node)" && GC=1

# free_port: a TCP port in 27000-28999 nothing listens on right now
free_port() {
	local p
	for p in $(shuf -i 27000-28999 -n 50); do
		ss -ltnH "sport = :$p" | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}

# wait_armed PID: up to 20 s until isoprof PID holds its GC probes' links
wait_armed() {
	local i
	for i in $(seq 200); do
		grep -qs 'uretprobe_multi' /proc/"$1"/fdinfo/* && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# v8_pauses LOG FROM TO: "COUNT TOTAL_MS MAX_MS ISOLATES" of the trace lines FROM+1..TO
# (workerd prints "pause":1.48 in JSON, node pause=1.5)
v8_pauses() {
	sed -n "$(($2 + 1)),$3p" "$1" | python3 -c '
import re, sys
n, tot, mx, iso = 0, 0.0, 0.0, set()
for line in sys.stdin:
    m = re.search(r"\"pause\":([0-9.]+)|\bpause=([0-9.]+)", line)
    if not m:
        continue
    p = float(m.group(1) or m.group(2))
    n, tot, mx = n + 1, tot + p, max(mx, p)
    h = re.match(r"\[\d+:(0x[0-9a-f]+)", line)
    if h:
        iso.add(h.group(1))
print(n, "%.3f" % tot, "%.3f" % mx, ",".join(sorted(iso)) or "-")'
}

# iso_gc JSON ISOLATE: "PAUSES TOTAL_MS MAX_MS OFF_THREAD_MS CPU_MS STOPS STOP_TOTAL_MS"
# of one isolate in record --json
iso_gc() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for g in d["isolates"]:
    if g["isolate"] == sys.argv[2]:
        gc = g["gc"]
        print(gc["pauses"], gc.get("pause_total_ms"), gc.get("pause_max_ms"),
              gc["off_thread_cpu_ms"], gc["cpu_ms"], gc.get("stops"), gc.get("stop_total_ms"))
        break
else:
    print("none")' "$1" "$2"
}

# agree NAME MINE THEIRS: pass when MINE is within 25% of THEIRS
agree() {
	if awk -v a="$2" -v b="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= 0.25 * b) }'; then
		pass "$1: isoprof $2, V8 $3"
	else
		fail "$1" "isoprof $2, V8 $3: more than 25% apart"
	fi
}

# compare NAME LOG FROM TO JSON DIR: isoprof against V8 for the one isolate V8 logged
compare() {
	local name=$1 log=$2 from=$3 to=$4 json=$5 dir=$6 v8 mine iso prof comment comments stop total
	read -r -a v8 <<<"$(v8_pauses "$log" "$from" "$to")"
	echo "$name: V8: ${v8[0]} pauses, ${v8[1]} ms total, ${v8[2]} ms max, isolates ${v8[3]}"
	iso=${v8[3]}
	if [ "${v8[0]}" -lt 5 ] || [[ $iso == *,* ]] || [ "$iso" = - ]; then
		fail "$name: V8's log" "expected 5+ collections of one isolate in the window, got ${v8[*]}"
		return 1
	fi
	read -r -a mine <<<"$(iso_gc "$json" "$iso")"
	echo "$name: isoprof: ${mine[*]} (pauses total max off-thread-cpu gc-cpu stops stop-total)"
	if [ "${mine[0]}" = none ] || [ "${mine[0]}" = None ]; then
		fail "$name: isolate" "isolate $iso (V8's) not in isoprof's --json output"
		return 1
	fi
	agree "$name: pause count" "${mine[0]}" "${v8[0]}"
	agree "$name: mean pause (ms)" "$(awk -v t="${mine[1]}" -v n="${mine[0]}" 'BEGIN { printf "%.3f", n ? t / n : 0 }')" \
		"$(awk -v t="${v8[1]}" -v n="${v8[0]}" 'BEGIN { printf "%.3f", t / n }')"
	# the profile says the same, in exactly the documented form
	prof=$(ls "$dir"/*"$iso"-cpu.pb.gz 2>/dev/null | head -1)
	comments=$(HOME=${HOME:-/root} go tool pprof -comments "$prof" 2>/dev/null)
	comment=$(grep '^gc: ' <<<"$comments")
	stop=$(grep '^gc stop: ' <<<"$comments")
	if [[ $comment =~ ^gc:\ ([0-9]+)\ pauses,\ ([0-9]+\.[0-9])\ ms\ total,\ [0-9]+\.[0-9]\ ms\ max$ ]] &&
		[ "${BASH_REMATCH[1]}" = "${mine[0]}" ]; then
		pass "$name: profile comment '$comment'"
	else
		fail "$name: profile comment" "'$comment' in ${prof:-no profile of $iso}"
	fi
	# the whole calls hold the observable pauses: never less in total
	total=${BASH_REMATCH[2]:-}
	if [[ $stop =~ ^gc\ stop:\ ([0-9]+\.[0-9])\ ms\ total,\ [0-9]+\.[0-9]\ ms\ max$ ]] &&
		[ -n "$total" ] && awk -v s="${BASH_REMATCH[1]}" -v g="$total" 'BEGIN { exit !(s >= g) }' &&
		awk -v s="${mine[6]}" -v g="${mine[1]}" 'BEGIN { exit !(s >= g) }'; then
		pass "$name: '$stop' >= gc's $total ms (mean whole call $(awk -v t="${mine[6]}" -v n="${mine[5]}" 'BEGIN { printf "%.3f", n ? t / n : 0 }') ms)"
	else
		fail "$name: gc stop comment" "'$stop' against gc's ${total:-?} ms total (--json: ${mine[6]} against ${mine[1]})"
	fi
}

# ---- workerd: two allocating workers, default heap settings -----------------
PORT=$(free_port) || { fail setup "no free port in 27000-28999"; exit 0; }
PORT2=$(free_port) || { fail setup "no free port in 27000-28999"; exit 0; }
[ "$PORT2" != "$PORT" ] || PORT2=$(free_port) || { fail setup "no second free port"; exit 0; }
mkdir -p "$T/wd/v8logs"
cp "$TOP/tests/fixtures/gc/alloc.js" "$TOP/tests/fixtures/gc/garbage.js" "$T/wd/"
# no heap size among the flags: V8's defaults
cat >"$T/wd/config.capnp" <<EOF
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "alloc", worker = .alloc), (name = "garbage", worker = .garbage) ],
  sockets = [ (name = "http", address = "127.0.0.1:$PORT", http = (), service = "alloc"),
              (name = "http2", address = "127.0.0.1:$PORT2", http = (), service = "garbage") ],
  v8Flags = [
    "--perf-basic-prof", "--interpreted-frames-native-stack",
    "--log-code", "--log-source-code", "--logfile-per-isolate", "--logfile=$T/wd/v8logs/v8.log",
    "--trace-gc", "--trace-gc-nvp", "--no-memory-reducer",
  ],
);
const alloc :Workerd.Worker = (
  modules = [ (name = "alloc.js", esModule = embed "alloc.js") ],
  compatibilityDate = "2024-01-01",
);
const garbage :Workerd.Worker = (
  modules = [ (name = "garbage.js", esModule = embed "garbage.js") ],
  compatibilityDate = "2024-01-01",
);
EOF
BIN=$(demo_workerd_bin) || { fail setup "no workerd"; exit 0; }
(cd "$T/wd" && exec stdbuf -oL "$BIN" serve config.capnp) >"$T/wd/trace.log" 2>&1 &
WORKERD_PID=$!
for url in "http://127.0.0.1:$PORT/" "http://127.0.0.1:$PORT2/"; do
	if ! demo_wait_http "$url"; then
		tail -5 "$T/wd/trace.log"
		fail "workerd start" "$url did not answer"
		exit 0
	fi
	for _ in $(seq 20); do curl -s "$url" >/dev/null; done
done
sleep 1

# workerd_window NAME PORT: a capture of the workerd, the worker on PORT loaded
# inside it (the other idle), compared with V8's lines of that window
workerd_window() {
	local name=$1 port=$2 from to rec rc
	from=$(wc -l <"$T/wd/trace.log")
	"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 5000 --out-dir "$T/$name-out" --json \
		>"$T/$name.json" 2>"$T/$name.err" &
	rec=$!
	if wait_armed "$rec"; then
		sleep 1
		wrk -t1 -c2 -d2s "http://127.0.0.1:$port/" >/dev/null 2>&1
	else
		fail "$name: record armed" "no GC probe links in isoprof's fdinfo"
	fi
	wait "$rec"
	rc=$?
	sleep 0.3
	to=$(wc -l <"$T/wd/trace.log")
	cat "$T/$name.err"
	if [ $rc -ne 0 ] || ! no_sanitizer_report "$T/$name.err"; then
		fail "$name: record" "exit $rc or sanitizer report"
		return
	fi
	pass "$name: record --json"
	compare "$name" "$T/wd/trace.log" "$from" "$to" "$T/$name.json" "$T/$name-out"
	grep -E '^    gc: [0-9]+ pauses, .* ms max; gc stop: .* ms max; gc off-thread: [0-9]+% of [0-9]+ ms$' \
		"$T/$name.err" >/dev/null && pass "$name: summary line" ||
		fail "$name: summary line" "no 'gc: ...; gc stop: ...; gc off-thread' line"
}

if [ -n "$GC" ]; then
	workerd_window workerd-alloc "$PORT"
	workerd_window workerd-garbage "$PORT2"
fi

# ---- --no-gc-probes: no pauses, and the profile says why --------------------
(sleep 0.5; wrk -t1 -c1 -d2s "http://127.0.0.1:$PORT/" >/dev/null 2>&1) &
load=$!
"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1500 --no-gc-probes -o "$T/off.pb.gz" \
	2>"$T/off.err"
rc=$?
wait "$load"
comments=$(HOME=${HOME:-/root} go tool pprof -comments "$T/off.pb.gz" 2>/dev/null | grep '^gc')
if [ $rc -eq 0 ] && no_sanitizer_report "$T/off.err" &&
	[ "$comments" = "gc: pauses not measured (--no-gc-probes)" ] &&
	! grep -q 'uprobe' "$T/off.err"; then
	pass "--no-gc-probes: '$comments'"
else
	fail "--no-gc-probes" "exit $rc, comments '$comments'"
fi
demo_stop

# ---- node: GC jobs on V8's platform threads -------------------------------
[ -n "$GC" ] || exit 0
# node 20 (V8 11.3) does not enter the isolate on its platform threads:
# their GC is charged to the isolate only through the job tags.
if ! command -v node >/dev/null; then
	fail node "node not found"
	exit 0
fi
cat >"$T/nalloc.js" <<'EOF'
// Allocates for 2 s after SIGUSR2, otherwise sits idle.
let keep = [], until = 0;
function work() {
  if (Date.now() < until) {
    for (let i = 0; i < 20000; i++) {
      const o = { a: i, b: [i, i + 1, i + 2], c: "x" + i };
      if (i % 4 === 0) keep.push(o);
    }
    if (keep.length > 600000) keep = [];
    setImmediate(work);
  }
}
process.on("SIGUSR2", () => { until = Date.now() + 2000; work(); });
setInterval(() => {}, 1000);
EOF
(cd "$T" && exec stdbuf -oL node --trace-gc --trace-gc-nvp --no-memory-reducer nalloc.js) \
	>"$T/node.log" 2>&1 &
NODE_PID=$!
sleep 1
from=$(wc -l <"$T/node.log")
"$ISOPROF" record -q --pid "$NODE_PID" --duration-ms 5000 --out-dir "$T/node-out" --json \
	>"$T/node.json" 2>"$T/node.err" &
rec=$!
if wait_armed "$rec"; then
	sleep 1
	kill -USR2 "$NODE_PID"
else
	fail "node: record armed" "no GC probe links in isoprof's fdinfo"
fi
wait "$rec"
rc=$?
sleep 0.3
to=$(wc -l <"$T/node.log")
cat "$T/node.err"
if [ $rc -ne 0 ] || ! no_sanitizer_report "$T/node.err"; then
	fail "node: record" "exit $rc or sanitizer report"
	exit 0
fi
compare node "$T/node.log" "$from" "$to" "$T/node.json" "$T/node-out"
# most of node's GC CPU runs on its four platform threads: charged to the isolate
iso=$(v8_pauses "$T/node.log" "$from" "$to" | awk '{ print $4 }')
read -r -a mine <<<"$(iso_gc "$T/node.json" "$iso")"
if awk -v off="${mine[3]:-0}" -v all="${mine[4]:-0}" 'BEGIN { exit !(all > 0 && off >= 0.2 * all) }'; then
	pass "node: platform-thread GC charged to the isolate (${mine[3]} of ${mine[4]} ms)"
else
	fail "node: platform-thread GC" "off-thread ${mine[3]:-?} of ${mine[4]:-?} ms of GC CPU"
fi
