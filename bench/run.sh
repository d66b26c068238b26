#!/usr/bin/env bash
# Runs the benchmarks of issue 7 and writes bench/results/latest.md
# (machine, kernel, versions, a summary against the targets, then each
# benchmark's table), and prints it.  QUICK=1: fewer and shorter runs.
#   ISOPROF=path/to/isoprof   the binary measured (default $BUILD/isoprof:
#                             `make BUILD=build/x bench` measures build/x)
# docs/performance.md describes the method.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/bench/results/latest.md
mkdir -p "$TOP/bench/results"
case ${BUILD:-build} in
/*) DEFAULT_ISOPROF=$BUILD/isoprof ;;
*) DEFAULT_ISOPROF=$TOP/${BUILD:-build}/isoprof ;;
esac
ISOPROF=$(realpath "${ISOPROF:-$DEFAULT_ISOPROF}")
export ISOPROF
BUILD_DIR=$(dirname "$ISOPROF")
export FIXTURES=${FIXTURES:-$BUILD_DIR/fixtures}
export BENCH_BIN=$BUILD_DIR/bench
export HOME=${HOME:-/root}
WORKERD=$(bash "$TOP/scripts/install-workerd.sh")
export WORKERD
. "$TOP/bench/lib.sh"

if [ -n "${QUICK:-}" ]; then
	OVH="2 2" PIPE="1 6" START="1 1" ACC="1 2" KERN="1 3" LOSS="1 3" SCALE="1 300" GCP="2 3"
	CAUSAL="1 4 typescript:getMergedSymbol:300 acorn:fullCharCodeAtPos:10"
	SMAP="2 5"
	CONT="1 1 100"
	HEAPP="2 3"
	DEOPTC="2 3"
else
	OVH="6 4" PIPE="3 50" START="5 2" ACC="3 4" KERN="3 5" LOSS="2 10" SCALE="3 10 100 300 1000"
	GCP="5 5"
	CAUSAL="3 8"
	SMAP="5 20"
	CONT="2 5 1000"
	HEAPP="5 5"
	DEOPTC="5 5"
fi

for tool in wrk perf node strace go; do
	command -v $tool >/dev/null || { echo "bench: $tool is needed (scripts/setup.sh)" >&2; exit 1; }
done
[ -x "$ISOPROF" ] || { echo "bench: no $ISOPROF (make)" >&2; exit 1; }
[ -x "$FIXTURES/ground_truth" ] || { echo "bench: no $FIXTURES/ground_truth (make fixtures)" >&2; exit 1; }
make --no-print-directory -C "$TOP" -f bench/Makefile BUILD="$BUILD_DIR" >&2 || exit 1

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
export SUMMARY=$WORK/summary
: >"$SUMMARY"
trap 'kill $(jobs -p) 2>/dev/null; demo_stop; rm -rf "$WORK"' EXIT

# one demo workerd for all benchmarks (with its inspector, for V8's profiler)
bench_demo "$WORK/wd" || exit 1
export BENCH_WORKERD_PID=$WORKERD_PID BENCH_PORT_A=$PORT_A BENCH_PORT_B=$PORT_B BENCH_PORT_I=$PORT_I
BENCH_OWN_DEMO=

T0=$(now_s)
DATE0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
section() {
	local name=$1 script=$2 t
	shift 2
	t=$(now_s)
	note "$name ..."
	echo "## $name"
	echo
	bash "$TOP/bench/$script" "$@"
	echo
	echo "_($(calc "$(now_s) - $t" %.0f) s)_"
	echo
	note "$name: $(calc "$(now_s) - $t" %.0f) s"
}
# shellcheck disable=SC2086
{
	section "1. Target overhead (CPU time per request)" overhead.sh $OVH
	section "2. Pipeline (end of window to profile, peak RSS)" pipeline.sh $PIPE
	section "3. Start-up" startup.sh $START
	section "4. Accuracy" accuracy.sh $ACC
	section "6. In-kernel cost" kernel.sh $KERN
	section "7. Scale (one workerd of N isolates)" scale.sh $SCALE
	section "8. The V8 flags' cost to the target" flags.sh
	section "9. The GC probes' cost to the target" gcprobe.sh $GCP
	section "10. JS names from V8's heap: the BPF program's cost" jsnames.sh $KERN
	section "11. Causal accuracy on real code (known cost in one function)" causal.sh $CAUSAL
	section "12. Source maps: decoding a real bundle's map" sourcemaps.sh $SMAP
	section "13. Continuous (default configuration, N isolates)" continuous.sh $CONT
	section "14. A heap capture's cost to the target" heapprobe.sh $HEAPP
	section "15. Inlined code placed by deoptimization data: isoprof's cost per window" deoptcost.sh $DEOPTC
} >"$WORK/body.md"
note "5. Loss (saturated) ..."
# shellcheck disable=SC2086
bash "$TOP/bench/loss.sh" $LOSS >"$WORK/loss.md"
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
ELAPSED=$(calc "$(now_s) - $T0" %.0f)

# get KEY: the value a benchmark reported, n/a when it did not
get() {
	awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? "n/a" : v) }' "$SUMMARY"
}
# holds AWK_CONDITION: "met" or "**missed**" (also missed when a figure is n/a)
holds() {
	awk "BEGIN { exit !($1) }" 2>/dev/null && echo met || echo "**missed**"
}
# margin FORMAT EXPR: the awk-formatted EXPR, empty when an operand is n/a
margin() {
	awk "BEGIN { printf \"$1\", $2 }" 2>/dev/null
}
row() {
	echo "| $1 | $2 | $3 |"
}

targets() {
	local iso perf v8 o99 pr rss rssmax win st stc sta stp kr krs lost total v smp smr sma smc
	local ccpu cperf crf crl crm cdel cmin
	iso=$(get overhead_isoprof-1000) perf=$(get overhead_perf-1000) v8=$(get overhead_v8-1ms)
	o99=$(get overhead_isoprof-99)
	pr=$(get pipeline_ratio) rss=$(get pipeline_rss_mb) rssmax=$(get pipeline_rss_max_mb)
	win=$(get pipeline_window_s)
	st=$(get startup_ready_ms) sta=$(get startup_armed_ms) stc=$(get startup_cold_ready_ms)
	stp=$(get startup_perf_ms)
	kr=$(get kernel_ratio) krs=$(get kernel_ratio_per_sample)
	read -r lost total < <(awk '$1 ~ /^loss-/ { l += $2; n += $3 } END { print l + 0, n + 0 }' \
		"$SUMMARY")

	echo "| target | measured | status |"
	echo "|---|---|---|"
	v=$(holds "$iso <= 1.01")
	[ "$v" = met ] || v="$v$(margin ", by %.1f points" "($iso - 1.01) * 100")"
	row "overhead: isoprof at 1000 Hz at most 1% more CPU per request than no profiler" \
		"ratio $(fmt "$iso" %.3f); at 99 Hz $(fmt "$o99" %.3f)" "$v"
	row "… and below perf record -g and V8's profiler at the same rate" \
		"perf record -g $(fmt "$perf" %.3f), V8's profiler $(fmt "$v8" %.3f)" \
		"$(holds "$iso < $perf && $iso < $v8")"
	v=$(holds "$pr >= 5")
	[ "$v" = met ] && v="$v$(margin ", %.1f times the target" "$pr / 5")"
	row "post-processing at least 5x faster than perf script" "${pr}x" "$v"
	v=$(holds "$rssmax < 100")
	[ "$v" = met ] && v="$v$(margin ", %.0f MB to spare" "100 - $rssmax")"
	[ "$win" = 50 ] || v="not a 50 s window (QUICK); at $win s: $v"
	row "peak RSS under 100 MB for the 50 s capture" \
		"$(fmt "$rssmax") MB worst, $(fmt "$rss") MB median (${win} s window)" "$v"
	v=$(holds "$st < 300")
	[ "$v" = met ] && v="$v$(margin ", %.0f ms to spare" "300 - $st")"
	row "start-up under 300 ms with a warm cache (cold stated)" \
		"$(fmt "$st" %.0f) ms warm (armed at $(fmt "$sta" %.0f) ms, then symbols); cold $(fmt "$stc" %.0f) ms; perf's first sample $(fmt "$stp" %.0f) ms" \
		"$v"
	row "zero lost samples at 1000 Hz" "$lost lost of $total samples (all 1000 Hz captures)" \
		"$(holds "$total > 0 && $lost == 0")"
	v=$(holds "$kr <= 1.5")
	[ "$v" = met ] && v="$v$(margin ", %.2fx to spare" "1.5 - $kr")"
	row "in-kernel cost at most 1.5x the floor" "${kr}x per run (${krs}x per target sample)" "$v"
	v=$(get gcprobe_ratio)
	row "GC probes (uprobes on V8's collector): CPU per request, with / without" \
		"ratio $(fmt "$v" %.3f)" "$(holds "$v <= 1.01" | sed 's/^met$/negligible (on by default)/;s/missed/not negligible/')"
	v=$(get heapprobe_ratio)
	row "heap capture (V8's sampler and the allocation probes): CPU per request, heap / cpu" \
		"ratio $(fmt "$v" %.3f)" "–"
	row "accuracy (no target)" \
		"ground truth: $(get accuracy_gt_pp) pp median error, $(get accuracy_gt_worst_pp) pp worst; TVD to V8's profiler $(get accuracy_tvd) (alpha), $(get accuracy_tvd_beta) (beta)" \
		"–"
	row "causal accuracy (no target): TypeScript's getMergedSymbol with a known cost" \
		"true share $(get causal_typescript_getMergedSymbol_truth)%; isoprof with a code log $(get causal_typescript_getMergedSymbol_log)%, V8's profiler $(get causal_typescript_getMergedSymbol_v8)%" \
		"–"
	smp=$(get sourcemap_parse_ratio) smr=$(get sourcemap_rss_ratio) sma=$(get sourcemap_agree)
	smc=$(get sourcemap_compared)
	v=$(holds "$smp <= 1.0 && $smr <= 1.0 && $smc > 0 && $sma == $smc")
	[ "$v" = met ] && v="$v$(margin ", parse %.1fx faster" "1 / $smp")"
	row "source maps: isoprof's parse time and memory at most node 20's, and the same original file and line" \
		"parse $(fmt "$smp" %.2f)x node's (CPU $(fmt "$(get sourcemap_parse_cpu_ratio)" %.2f)x), peak RSS growth $(fmt "$smr" %.2f)x (heap kept $(fmt "$(get sourcemap_heap_ratio)" %.2f)x), lookups $(fmt "$(get sourcemap_lookup_ratio)" %.2f)x; agree at $sma of $smc positions" \
		"$v"
	ccpu=$(get continuous_cpu_pct) cperf=$(get continuous_perf_pct)
	crf=$(get continuous_rss_first_mb) crl=$(get continuous_rss_last_mb)
	crm=$(get continuous_rss_max_mb) cdel=$(get continuous_delay_max_s)
	cmin=$(get continuous_minutes)
	v=$(holds "$ccpu <= 1")
	[ "$v" = met ] && v="$v$(margin ", %.2f points to spare" "1 - $ccpu")"
	row "continuous, default configuration: isoprof's CPU at most 1% of one CPU" \
		"$(fmt "$ccpu" %.2f)% (perf record at the same rate and windows $(fmt "$cperf" %.2f)%)" "$v"
	row "… RSS flat and under 100 MB" \
		"$(fmt "$crf") → $(fmt "$crl") MB over $cmin min, max $(fmt "$crm") MB" \
		"$(holds "$crm < 100 && $crl - $crf < 2")"
	row "… each window pushed within 1 s of its end" "worst $(fmt "$cdel" %.2f) s" \
		"$(holds "$cdel <= 1")"
}

loss() {
	echo "| captures | lost | samples |"
	echo "|---|---|---|"
	awk '$1 ~ /^loss-/ { l[$1] += $2; n[$1] += $3; c[$1]++ }
	     END { for (k in l) printf "| %s (%d) | %d | %d |\n", substr(k, 6), c[k], l[k], n[k] }' \
		"$SUMMARY" | sort
	echo
	echo "Every capture at 1000 Hz per CPU on both CPUs: \`pipeline\` with wrk on both workers" \
		"(both cores busy), \`overhead\` with wrk on alpha, \`kernel\` with wrk on both," \
		"\`saturated\` a target with a spinning thread per CPU. Lost: records the BPF program" \
		"could not reserve in the ring buffer (isoprof's counter)."
	echo
	cat "$WORK/loss.md"
}

write_report() {
	local cpu
	cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	echo "# isoprof benchmarks"
	echo
	echo "- date: $DATE0${QUICK:+ — **QUICK run: fewer, shorter runs**}"
	echo "- machine: $(nproc) CPUs ($cpu)," \
		"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
	echo "- isoprof $(git -C "$TOP" rev-parse --short HEAD 2>/dev/null)$(git -C "$TOP" diff \
		--quiet HEAD 2>/dev/null || echo ' + uncommitted changes') ($ISOPROF)"
	echo "- workerd $("$WORKERD" --version 2>/dev/null | awk '{ print $2 }'), $(perf --version)," \
		"node $(node --version), $(wrk --version 2>&1 | head -1 | awk '{ print $1, $2 }')," \
		"strace $(strace -V | awk '{ print $NF; exit }')"
	echo "- load average (1, 5, 15 min) before / after: $LOAD0 / $LOAD1; $ELAPSED s in all"
	echo
	echo "## Targets"
	echo
	targets
	echo
	echo "## 5. Loss"
	echo
	loss
	echo
	cat "$WORK/body.md"
	echo "Method: [docs/performance.md](../../docs/performance.md)."
}
write_report >"$OUT"
cat "$OUT"
