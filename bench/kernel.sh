#!/usr/bin/env bash
# Benchmark 6, in-kernel cost: nanoseconds per run of isoprof's BPF program
# (kernel BPF run-time stats: run_time_ns / run_cnt, `record --bpf-stats`)
# at 1000 Hz on all CPUs of the busy demo (wrk on both workers), against
# the floor measured under the same load in alternate runs: bench/floor.bpf.c,
# which only compares the pid and copies the kernel and user stacks (127
# frames each, as isoprof) into a ring buffer.  Per run counts every tick
# of every CPU (most of them on the target under this load); per target
# sample divides the same run time by the samples delivered, an upper
# bound for the cost of one sample.  Prints a markdown section.
#   bench/kernel.sh [RUNS] [SECONDS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
SECS=${2:-5}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; bench_demo_stop; rm -rf "$WORK"' EXIT
[ -x "$BENCH_BIN/floor" ] || { echo "kernel: $BENCH_BIN/floor missing (make -f bench/Makefile)"; exit 0; }
bench_demo "$WORK/wd" || { echo "kernel: the demo did not start"; exit 1; }

# isoprof_run: prints "NS_PER_RUN NS_PER_TARGET_SAMPLE RUNS SAMPLES LOST"
isoprof_run() {
	"$ISOPROF" record --bpf-stats --frequency 1000 --pid "$WORKERD_PID" \
		--duration-ms $((SECS * 1000)) -o "$WORK/k.pb.gz" 2>"$WORK/iso.err"
	awk '/^isoprof: lost/ { l = $3 }
	     /^isoprof: BPF sampler:/ { runs = $4; ns = $6; tgt = $13 }
	     END { if (!runs || !tgt) print "n/a n/a n/a n/a n/a"
		   else printf "%.0f %.0f %d %d %d\n", ns / runs, ns / tgt, runs, tgt, l }' \
		"$WORK/iso.err"
}

# floor_run: prints "NS_PER_RUN NS_PER_RECORD RUNS RECORDS"
floor_run() {
	"$BENCH_BIN/floor" "$WORKERD_PID" $((SECS * 1000)) 1000 2>"$WORK/floor.err" |
		awk '{ printf "%.0f %.0f %d %d\n", $9, $11, $3, $7 }'
}

load_start 3600 "http://127.0.0.1:$PORT_A/" "http://127.0.0.1:$PORT_B/"
sleep 1
declare -a irun isam frun fsam rrun rsam
for _ in $(seq "$RUNS"); do
	read -r a b _ d l < <(isoprof_run)
	[ "$a" != n/a ] && echo "loss-kernel $l $d" >>"$SUMMARY"
	read -r e f _ < <(floor_run)
	irun+=("$a") isam+=("$b") frun+=("$e") fsam+=("$f")
	rrun+=("$(ratio "$a" "$e" %.2f)") rsam+=("$(ratio "$b" "$f" %.2f)")
done
load_stop
note "kernel: done"

row() { echo "$(echo "$@" | median) ($(echo "$@" | spread))"; }
echo "| BPF program at 1000 Hz | ns per run: median (min–max) | ns per target sample |"
echo "|---|---|---|"
echo "| isoprof (\`record --bpf-stats\`) | $(row "${irun[@]}") | $(row "${isam[@]}") |"
echo "| floor (bench/floor.bpf.c) | $(row "${frun[@]}") | $(row "${fsam[@]}") |"
echo "| **ratio isoprof / floor** (same round) | **$(row "${rrun[@]}")** | $(row "${rsam[@]}") |"
echo
echo "$RUNS rounds of ${SECS} s (isoprof, then the floor), wrk on both workers." \
	"Both programs run on every cpu-clock tick of every CPU; ticks on other processes return" \
	"after the pid check. The floor does what isoprof cannot skip: pid check, ring buffer" \
	"reserve, kernel stack (only when the tick hit kernel mode), user stack, submit without a" \
	"wakeup; isoprof adds the target hash lookup, per-CPU counters, time, comm, CPU and the" \
	"V8 isolate read from thread-local storage."
summary kernel_ratio "$(echo "${rrun[@]}" | median)"
summary kernel_ratio_per_sample "$(echo "${rsam[@]}" | median)"
exit 0
