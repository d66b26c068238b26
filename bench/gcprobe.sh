#!/usr/bin/env bash
# Benchmark 9, what the GC probes cost the target: uprobes on V8's
# Heap::CollectGarbage, NewDefaultJobHandle and every Run(JobDelegate*)
# trap into the kernel on each call.  A workerd with one allocation-heavy
# worker (each request allocates ~2 MB of small objects and keeps some:
# a scavenge every few requests, GC jobs on V8's platform thread) under
# wrk -t1 -c2 for SECONDS, three variants in turn in each round:
#   none      no profiler
#   noprobes  isoprof record --no-gc-probes (the sampler alone)
#   probes    isoprof record (sampler and GC probes: the default)
# CPU per request: workerd's CPU time (/proc/PID/task/*/schedstat) over the
# load / wrk's requests.  The ratio probes / noprobes is taken per round
# (the same sampler on both sides: only the probes differ); the table gives
# medians and (min–max), with the pauses isoprof counted per second.
# Prints a markdown section.
#   bench/gcprobe.sh [RUNS] [SECONDS]       (defaults 5 5; QUICK: 2 3)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if [ -n "${QUICK:-}" ]; then
	set -- "${1:-2}" "${2:-3}"
fi
RUNS=${1:-5}
SECS=${2:-5}
PORT=${GCPROBE_PORT:-24600}
VARIANTS=(none noprobes probes)

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
WD_PID=
# shellcheck disable=SC2329
cleanup() {
	kill $(jobs -p) 2>/dev/null
	if [ -n "$WD_PID" ]; then
		kill "$WD_PID" 2>/dev/null
		wait "$WD_PID" 2>/dev/null
		rm -f "/tmp/perf-$WD_PID.map"
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

URL=http://127.0.0.1:$PORT/
bench_one_worker "$WORK/wd" "$TOP/tests/fixtures/gc/alloc.js" "$PORT" ||
	{ echo "bench: gcprobe: workerd did not answer" >&2; exit 1; }
# warm up: tier-up, and the heap at its working size
wrk -t1 -c2 -d3s "$URL" >/dev/null 2>&1

declare -A us pauses
ratios=
# one VARIANT: CPU per request (µs) under SECS of load, beside the capture the variant asks for
one() {
	local v=$1 rec= c0 c1 reqs
	case $v in
	noprobes) "$ISOPROF" record -q --pid "$WD_PID" --duration-ms $(((SECS + 3) * 1000)) \
		--no-gc-probes -o "$WORK/p.pb.gz" --json >"$WORK/$v.json" 2>"$WORK/$v.err" &
		rec=$! ;;
	probes) "$ISOPROF" record -q --pid "$WD_PID" --duration-ms $(((SECS + 3) * 1000)) \
		-o "$WORK/p.pb.gz" --json >"$WORK/$v.json" 2>"$WORK/$v.err" &
		rec=$! ;;
	esac
	# armed and past the symbol preload: the load runs inside the window
	[ -n "$rec" ] && sleep 1.5
	c0=$(run_ns "$WD_PID")
	reqs=$(wrk -t1 -c2 -d"${SECS}s" "$URL" 2>/dev/null | awk '/requests in/ { print $1 }')
	c1=$(run_ns "$WD_PID")
	[ -n "$rec" ] && wait "$rec"
	LAST=$(awk -v a="$c0" -v b="$c1" -v n="${reqs:-0}" 'BEGIN { if (n > 0) printf "%.1f", (b - a) / n / 1000; else print "n/a" }')
	if [ "$v" = probes ]; then
		pauses[$v]+=" $(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = sum((g.get("gc") or {}).get("pauses") or 0 for g in d["isolates"])
print("%.1f" % (n / d["window_s"]))' "$WORK/$v.json" 2>/dev/null || echo n/a)"
	fi
}

for r in $(seq "$RUNS"); do
	for v in "${VARIANTS[@]}"; do
		one "$v"
		us[$v]+=" $LAST"
		declare "last_$v=$LAST"
	done
	# shellcheck disable=SC2154
	ratios+=" $(ratio "$last_probes" "$last_noprobes")"
	note "gcprobe round $r: none ${last_none} µs, noprobes ${last_noprobes} µs, probes ${last_probes} µs per request"
done

med=$(echo "$ratios" | median)
summary gcprobe_ratio "$med"
echo "workerd, one allocation-heavy worker, wrk -t1 -c2 for $SECS s per run, $RUNS rounds" \
	"(none, noprobes, probes in turn); CPU per request of workerd."
echo
echo "| variant | µs CPU per request | ratio to no profiler |"
echo "|---|---|---|"
for v in "${VARIANTS[@]}"; do
	m=$(echo "${us[$v]}" | median)
	echo "| $v | $(fmt "$m") ($(echo "${us[$v]}" | spread)) | $(ratio "$m" "$(echo "${us[none]}" | median)") |"
done
echo
echo "**GC probes: probes / noprobes = $(fmt "$med" %.3f)** (median of per-round ratios;" \
	"$(echo "$ratios" | spread)); isoprof counted $(echo "${pauses[probes]:-}" | median)" \
	"pauses per second ($(echo "${pauses[probes]:-}" | spread))."
