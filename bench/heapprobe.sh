#!/usr/bin/env bash
# Benchmark 14, what a heap capture costs the target: record --type heap
# runs V8's sampling heap profiler (asked for over the inspector) and puts
# uprobes where V8 and tcmalloc sample an allocation (docs/heap.md).  A
# workerd with the heap fixture's allocation-heavy buffers worker (8 x
# 64 KiB typed arrays and 2000 small objects per request) under wrk -t1 -c2
# for SECONDS, three variants in turn in each round:
#   none   no profiler
#   cpu    isoprof record (the CPU sampler and GC probes: the default)
#   v8heap isoprof record --type heap --no-alloc-probes (the same, and V8's
#          sampling heap profiler, which the heap capture turns on)
#   heap   isoprof record --type heap (the same, and the allocation probes)
# CPU per request: workerd's CPU time (/proc/PID/task/*/schedstat) over the
# load / wrk's requests.  The ratios heap / v8heap (the probes) and v8heap /
# cpu (V8's sampler) are taken per round; the table gives medians and
# (min-max), with the allocation samples per second.  Prints a markdown
# section.
#   bench/heapprobe.sh [RUNS] [SECONDS]       (defaults 5 5; QUICK: 2 3)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if [ -n "${QUICK:-}" ]; then
	set -- "${1:-2}" "${2:-3}"
fi
RUNS=${1:-5}
SECS=${2:-5}
PORT=${HEAPPROBE_PORT:-24700}
INSPECTOR=$((PORT + 1))
VARIANTS=(none cpu v8heap heap)

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
bench_one_worker "$WORK/wd" "$TOP/tests/fixtures/heap/buffers.js" "$PORT" "$INSPECTOR" ||
	{ echo "bench: heapprobe: workerd did not answer" >&2; exit 1; }
# warm up: tier-up, and the heap at its working size
wrk -t1 -c2 -d3s "$URL" >/dev/null 2>&1

declare -A us allocs
ratios=
v8ratios=
# one VARIANT: CPU per request (µs) under SECS of load, beside the capture the variant asks for
one() {
	local v=$1 rec= c0 c1 reqs
	case $v in
	cpu) "$ISOPROF" record -q --pid "$WD_PID" --duration-ms $(((SECS + 3) * 1000)) \
		-o "$WORK/p.pb.gz" >"$WORK/$v.out" 2>"$WORK/$v.err" &
		rec=$! ;;
	v8heap) "$ISOPROF" record -q --pid "$WD_PID" --type heap --no-alloc-probes \
		--duration-ms $(((SECS + 3) * 1000)) --out-dir "$WORK/v8heap" >"$WORK/$v.out" 2>"$WORK/$v.err" &
		rec=$! ;;
	heap) "$ISOPROF" record --pid "$WD_PID" --type heap --duration-ms $(((SECS + 3) * 1000)) \
		--out-dir "$WORK/heap" >"$WORK/$v.out" 2>"$WORK/$v.err" &
		rec=$! ;;
	esac
	# armed and past the symbol preload: the load runs inside the window
	[ -n "$rec" ] && sleep 1.5
	c0=$(run_ns "$WD_PID")
	reqs=$(wrk -t1 -c2 -d"${SECS}s" "$URL" 2>/dev/null | awk '/requests in/ { print $1 }')
	c1=$(run_ns "$WD_PID")
	[ -n "$rec" ] && wait "$rec"
	LAST=$(awk -v a="$c0" -v b="$c1" -v n="${reqs:-0}" 'BEGIN { if (n > 0) printf "%.1f", (b - a) / n / 1000; else print "n/a" }')
	if [ "$v" = heap ]; then
		allocs[$v]+=" $(awk -v s="$SECS" '/allocation samples/ { for (i = 1; i <= NF; i++) if ($i == "allocation") n += $(i - 1) }
			END { printf "%.0f", n / (s + 3) }' "$WORK/$v.err")"
	fi
}

for r in $(seq "$RUNS"); do
	for v in "${VARIANTS[@]}"; do
		one "$v"
		us[$v]+=" $LAST"
		declare "last_$v=$LAST"
	done
	# shellcheck disable=SC2154
	ratios+=" $(ratio "$last_heap" "$last_v8heap")"
	v8ratios+=" $(ratio "$last_v8heap" "$last_cpu")"
	note "heapprobe round $r: none ${last_none} µs, cpu ${last_cpu} µs, v8heap ${last_v8heap} µs, heap ${last_heap} µs per request"
done

med=$(echo "$ratios" | median)
summary heapprobe_ratio "$med"
echo "workerd, the heap fixture's buffers worker, wrk -t1 -c2 for $SECS s per run, $RUNS rounds" \
	"(none, cpu, v8heap, heap in turn); CPU per request of workerd."
echo
echo "| variant | µs CPU per request | ratio to no profiler |"
echo "|---|---|---|"
for v in "${VARIANTS[@]}"; do
	m=$(echo "${us[$v]}" | median)
	echo "| $v | $(fmt "$m") ($(echo "${us[$v]}" | spread)) | $(ratio "$m" "$(echo "${us[none]}" | median)") |"
done
echo
echo "**Allocation probes: heap / v8heap = $(fmt "$med" %.3f)** (median of per-round ratios;" \
	"$(echo "$ratios" | spread)), about $(echo "${allocs[heap]:-}" | median) allocation samples per second;" \
	"V8's sampling heap profiler, which a heap capture turns on: v8heap / cpu =" \
	"$(fmt "$(echo "$v8ratios" | median)" %.3f) ($(echo "$v8ratios" | spread))."
