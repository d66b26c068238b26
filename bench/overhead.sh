#!/usr/bin/env bash
# Target overhead: the demo workerd under a fixed closed-loop load (wrk),
# its CPU time per completed request with no profiler, with isoprof and
# with `perf record -g` at the same rates.  Rows are interleaved run by run
# (A B C ... A B C ...), each row's median is compared with the no-profiler
# median measured in the same run.  Prints a markdown table.
#   bench/overhead.sh [RUNS] [SECONDS]
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
ISOPROF=${ISOPROF:-$TOP/build/isoprof}
RUNS=${1:-5}
SECS=${2:-6}
PORT_A=18881 PORT_B=18882
. "$TOP/scripts/demo-lib.sh"

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'demo_stop; rm -rf "$WORK"' EXIT
demo_start "$WORK/wd" "$PORT_A" "$PORT_B" >/dev/null
for _ in $(seq 20); do curl -s "http://127.0.0.1:$PORT_A/" >/dev/null; done

# cpu_ticks PID: utime + stime of the process, in clock ticks
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# one_run ROW: CPU microseconds per request with ROW's profiler attached
one_run() {
	local row=$1 t0 t1 reqs prof=""
	case $row in
	isoprof-99) "$ISOPROF" record -q --pid "$WORKERD_PID" --frequency 99 \
		--duration-ms $((SECS * 1000 + 3000)) -o "$WORK/p.pb.gz" 2>/dev/null & prof=$! ;;
	isoprof-1000) "$ISOPROF" record -q --pid "$WORKERD_PID" --frequency 1000 \
		--duration-ms $((SECS * 1000 + 3000)) -o "$WORK/p.pb.gz" 2>/dev/null & prof=$! ;;
	perf-99) perf record -q -g -F 99 -p "$WORKERD_PID" -o "$WORK/perf.data" \
		-- sleep $((SECS + 1)) >/dev/null 2>&1 & prof=$! ;;
	perf-1000) perf record -q -g -F 1000 -p "$WORKERD_PID" -o "$WORK/perf.data" \
		-- sleep $((SECS + 1)) >/dev/null 2>&1 & prof=$! ;;
	esac
	# start-up (discovery, code logs, BPF load, symbols) is not part of the steady cost
	sleep "${ARM_DELAY:-2}"
	t0=$(cpu_ticks "$WORKERD_PID")
	wrk -t1 -c2 -d"${SECS}s" "http://127.0.0.1:$PORT_A/" >"$WORK/wrk.txt" 2>&1
	t1=$(cpu_ticks "$WORKERD_PID")
	[ -n "$prof" ] && wait "$prof" 2>/dev/null || true
	reqs=$(awk '/requests in/ { print $1 }' "$WORK/wrk.txt")
	awk -v d=$((t1 - t0)) -v r="$reqs" -v hz="$(getconf CLK_TCK)" \
		'BEGIN { printf "%.2f\n", r ? d * 1e6 / hz / r : 0 }'
}

read -ra ROWS <<<"${ROWS:-none isoprof-99 isoprof-1000 perf-99 perf-1000}"
declare -A results
for run in $(seq "$RUNS"); do
	for row in "${ROWS[@]}"; do
		results[$row]="${results[$row]:-} $(one_run "$row")"
	done
	echo "overhead: run $run/$RUNS done" >&2
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { tr ' ' '\n' | grep . | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s..%s", lo, hi }'; }

base=$(echo "${results[none]}" | median)
echo "| profiler | CPU µs per request (median) | runs (min..max) | ratio to none |"
echo "|---|---|---|---|"
for row in "${ROWS[@]}"; do
	m=$(echo "${results[$row]}" | median)
	echo "| $row | $m | $(echo "${results[$row]}" | spread) | $(awk -v m="$m" -v b="$base" 'BEGIN { printf "%.3f", b ? m / b : 0 }') |"
done
echo
echo "Load: wrk -t1 -c2 for ${SECS} s on the demo's alpha worker; $RUNS interleaved runs per row." \
	"V8's own profiler row comes with the inspector client (issue 5)."
