#!/usr/bin/env bash
# Benchmark 1, target overhead: the demo workerd under a fixed closed-loop
# load (wrk -t1 -c2 on the alpha worker), its CPU time per completed request
# (/proc/PID/stat over the load window, wrk's request count) with no
# profiler, isoprof at 99 and 1000 Hz, `perf record -g` at the same rates
# and V8's own CPU profiler at 1 ms through the inspector (bench/v8prof.js).
# The rows run in turn (A B C ... A B C ...); each row's ratio is taken to
# the no-profiler run of the same round, and the table gives the median
# ratio and its spread.  Prints a markdown section.
#   bench/overhead.sh [RUNS] [SECONDS]
# ROWS="none isoprof-8000 tick-8000 ..." picks rows and rates (isoprof-HZ,
# perf-HZ, tick-HZ, floor-HZ, v8-1ms; "none" first): a high rate makes a
# small per-sample cost large enough to measure (docs/performance.md).
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-5}
SECS=${2:-6}
ARM=${ARM:-1}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; bench_demo_stop; rm -rf "$WORK"' EXIT
bench_demo "$WORK/wd" || { echo "overhead: the demo did not start"; exit 1; }

# stop_profiler PID: SIGINT (isoprof, perf and v8prof.js all finish and
# write on it), SIGKILL if it is not gone within 60 s
stop_profiler() {
	local pid=$1
	kill -INT "$pid" 2>/dev/null
	for _ in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# one_run ROW: prints "CPU_US_PER_REQUEST REQUESTS_PER_S PROFILER_CPU_PERCENT"
one_run() {
	local row=$1 t0 t1 p0=0 p1=0 w0 w1 reqs prof="" hz
	case $row in
	isoprof-*)
		hz=${row#isoprof-}
		"$ISOPROF" record -q --pid "$WORKERD_PID" --frequency "$hz" --duration-ms 50000 \
			-o "$WORK/p.pb.gz" 2>"$WORK/iso.err" &
		prof=$! ;;
	perf-*)
		hz=${row#perf-}
		perf record -q -g -F "$hz" -p "$WORKERD_PID" -o "$WORK/perf.data" \
			>/dev/null 2>"$WORK/perf.err" &
		prof=$! ;;
	tick-*)
		"$BENCH_BIN/floor" "$WORKERD_PID" 50000 "${row#tick-}" empty >/dev/null 2>&1 &
		prof=$! ;;
	floor-*)
		"$BENCH_BIN/floor" "$WORKERD_PID" 50000 "${row#floor-}" >/dev/null 2>&1 &
		prof=$! ;;
	v8-1ms)
		node "$TOP/bench/v8prof.js" "127.0.0.1:$PORT_I" 1000 >"$WORK/v8.out" \
			2>"$WORK/v8.err" &
		prof=$! ;;
	esac
	# start-up (discovery, BPF load, symbols, inspector sessions) is not the
	# steady cost being measured
	sleep "$ARM"
	if [ "$row" = v8-1ms ] && ! grep -q '^armed' "$WORK/v8.out"; then
		note "overhead: V8's profiler was not armed after $ARM s: $(cat "$WORK/v8.err")"
	fi
	[ -n "$prof" ] && p0=$(run_ns "$prof")
	w0=$(now_s)
	t0=$(cpu_ns "$WORKERD_PID")
	wrk -t1 -c2 -d"${SECS}s" "http://127.0.0.1:$PORT_A/" >"$WORK/wrk.txt" 2>&1
	t1=$(cpu_ns "$WORKERD_PID")
	w1=$(now_s)
	[ -n "$prof" ] && p1=$(run_ns "$prof")
	[ -n "$prof" ] && stop_profiler "$prof"
	if [ "$row" = isoprof-1000 ]; then
		# lost samples at 1000 Hz, for benchmark 5
		awk '/^isoprof: wrote/ { for (i = 1; i <= NF; i++) if ($i == "of") n = $(i + 1) }
		     /^isoprof: lost/ { l = $3 } END { if (n != "") print "loss-overhead", l + 0, n }' \
			"$WORK/iso.err" >>"$WORK/loss"
	fi
	reqs=$(awk '/requests in/ { print $1 }' "$WORK/wrk.txt")
	awk -v d=$((t1 - t0)) -v r="${reqs:-0}" -v s="$SECS" -v p=$((p1 - p0)) -v w="$(calc "$w1 - $w0")" \
		'BEGIN { if (!r) { print "n/a n/a n/a"; exit }
			 printf "%.2f %.0f %.1f\n", d / 1e3 / r, r / s, p / 1e9 / w * 100 }'
}

read -ra ROWS <<<"${ROWS:-none isoprof-99 isoprof-1000 perf-99 perf-1000 v8-1ms tick-1000 floor-1000}"
declare -A label=(
	[none]="no profiler"
	[isoprof-99]="isoprof record, 99 Hz"
	[isoprof-1000]="isoprof record, 1000 Hz"
	[perf-99]="perf record -g, 99 Hz"
	[perf-1000]="perf record -g, 1000 Hz"
	[v8-1ms]="V8's CPU profiler, 1 ms (inspector)"
	[tick-1000]="reference: cpu-clock 1000 Hz, empty BPF program"
	[floor-1000]="reference: cpu-clock 1000 Hz, floor BPF program (bench 6)"
)
# Each round starts with the no-profiler run, and one more closes the last
# round.  A row's ratio is to the no-profiler figure interpolated at its
# place between the run that opened its round and the one that opened the
# next, so a slow drift of the machine cancels.
declare -A cpu rps pcpu rat
declare -a base
nrows=${#ROWS[@]}
for run in $(seq "$RUNS"); do
	for row in "${ROWS[@]}"; do
		read -r c r p < <(one_run "$row")
		cpu[$row]="${cpu[$row]:-} $c"
		rps[$row]="${rps[$row]:-} $r"
		pcpu[$row]="${pcpu[$row]:-} $p"
		[ "$row" = none ] && base+=("$c")
	done
	note "overhead: round $run/$RUNS done"
done
[ "${ROWS[0]}" = none ] && base+=("$(one_run none | cut -d' ' -f1)")
for k in $(seq 0 $((nrows - 1))); do
	row=${ROWS[$k]}
	read -ra vals <<<"${cpu[$row]}"
	for r in $(seq 0 $((RUNS - 1))); do
		b=$(awk -v a="${base[$r]:-n/a}" -v z="${base[$((r + 1))]:-n/a}" -v k="$k" -v n="$nrows" \
			'BEGIN { if (a == "n/a") print "n/a"; else if (z == "n/a") print a
				 else print a + (z - a) * k / n }')
		rat[$row]="${rat[$row]:-} $(ratio "${vals[$r]}" "$b" %.4f)"
	done
done

echo "| profiler | CPU µs per request: median (min–max) | ratio to none (same round, interpolated): median (min–max) | requests/s | profiler's own CPU |"
echo "|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
	m=$(echo "${rat[$row]}" | median)
	case $row in
	none) own="–" ;;
	*) own="$(echo "${pcpu[$row]}" | median | xargs -I{} awk 'BEGIN { printf "%.1f%% of a CPU", {} }')" ;;
	esac
	echo "| ${label[$row]:-$row} | $(echo "${cpu[$row]}" | median) ($(echo "${cpu[$row]}" | spread)) |" \
		"$(fmt "$m" %.3f) ($(echo "${rat[$row]}" | spread)) |" \
		"$(echo "${rps[$row]}" | median | xargs -I{} awk 'BEGIN { printf "%.0f", {} }') | $own |"
	summary "overhead_${row}" "$m"
done
echo
echo "Load: \`wrk -t1 -c2 -d${SECS}s\` on the alpha worker, $RUNS rounds; in each round the rows" \
	"run one after another (${ROWS[*]}), one more no-profiler run closes the last round, and each" \
	"ratio is to the no-profiler figure interpolated between the runs that open its round and" \
	"the next (a slow drift cancels). Each profiler is started ${ARM} s before the load and stopped (SIGINT) after it;" \
	"only the load window is counted. \`perf record -g -F HZ -p PID\`; V8's profiler: " \
	"\`Profiler.start\` on every inspector target, sampling interval 1000 µs" \
	"(bench/v8prof.js). \"Profiler's own CPU\" is the profiler process (isoprof, perf, node," \
	"floor), not counted in the target's figure. The reference rows are not profilers: the" \
	"same cpu-clock events as isoprof's with an empty BPF program (the cost of the sampling" \
	"interrupt alone) and with bench 6's floor program (the least any BPF stack sampler pays)."
[ -s "$WORK/loss" ] && cat "$WORK/loss" >>"$SUMMARY"
exit 0
