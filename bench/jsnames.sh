#!/usr/bin/env bash
# Benchmark 10, JS names from V8's heap: what reading each JS frame's
# function costs the BPF program (docs/v8-frames.md).  The same busy demo
# workerd, captured in alternate runs with its binary's calibrated layout
# (the sampler walks the frame pointers and reads each JS frame's SFI) and
# without one (no walk), and the floor (bench/floor.bpf.c) under the same
# load; ns per run and per target sample from the kernel's BPF run-time
# stats (`record --bpf-stats`).  The goal: naming at most 1.5x the cost
# without it.  Also the calibration's own time.  Prints a markdown section.
#   bench/jsnames.sh [RUNS] [SECONDS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
SECS=${2:-5}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; bench_demo_stop; rm -rf "$WORK"' EXIT
[ -x "$BENCH_BIN/floor" ] || { echo "jsnames: $BENCH_BIN/floor missing (make -f bench/Makefile)"; exit 0; }
bench_demo "$WORK/wd" || { echo "jsnames: the demo did not start"; exit 1; }
mkdir -p "$WORK/state" "$WORK/none"
t=$(now_s)
if ! "$ISOPROF" calibrate --state-dir "$WORK/state" "/proc/$WORKERD_PID/exe" >"$WORK/cal.out" 2>&1; then
	echo "jsnames: calibration failed: $(tail -1 "$WORK/cal.out")"
	exit 0
fi
CAL_S=$(calc "$(now_s) - $t" %.1f)

# isoprof_run STATE: prints "NS_PER_RUN NS_PER_TARGET_SAMPLE JS_FRAMES_PER_SAMPLE VALIDATED%"
isoprof_run() {
	"$ISOPROF" record --no-calibrate --state-dir "$1" --bpf-stats --frequency 1000 \
		--pid "$WORKERD_PID" --duration-ms $((SECS * 1000)) -o "$WORK/k.pb.gz" 2>"$WORK/iso.err"
	awk '/^isoprof: BPF sampler:/ { runs = $4; ns = $6; tgt = $13 }
	     /^isoprof: JS frames read from V8.s heap:/ { js = $8; sub(",", "", js); v = $11; sub(";", "", v) }
	     END { if (!runs || !tgt) print "n/a n/a n/a n/a"
		   else printf "%.0f %.0f %.1f %s\n", ns / runs, ns / tgt, js / tgt, (v == "" ? "-" : v) }' \
		"$WORK/iso.err"
}

# floor_run: prints "NS_PER_RUN NS_PER_RECORD"
floor_run() {
	"$BENCH_BIN/floor" "$WORKERD_PID" $((SECS * 1000)) 1000 2>"$WORK/floor.err" |
		awk '{ printf "%.0f %.0f\n", $9, $11 }'
}

load_start 3600 "http://127.0.0.1:$PORT_A/" "http://127.0.0.1:$PORT_B/"
sleep 1
declare -a wsam nsam fsam rwn rwf rnf jsps
for _ in $(seq "$RUNS"); do
	read -r _ a js v < <(isoprof_run "$WORK/state")
	read -r _ b _ _ < <(isoprof_run "$WORK/none")
	read -r _ f < <(floor_run)
	wsam+=("$a") nsam+=("$b") fsam+=("$f") jsps+=("$js")
	rwn+=("$(ratio "$a" "$b" %.2f)") rwf+=("$(ratio "$a" "$f" %.2f)") rnf+=("$(ratio "$b" "$f" %.2f)")
	note "jsnames: with $a ns, without $b ns, floor $f ns per sample; $js JS frames/sample, validated $v"
done
load_stop

row() { echo "$(echo "$@" | median) ($(echo "$@" | spread))"; }
echo "| BPF program at 1000 Hz, per target sample | ns: median (min–max) | / floor |"
echo "|---|---|---|"
echo "| with JS names (layout: walk + SFI per JS frame) | $(row "${wsam[@]}") | $(row "${rwf[@]}") |"
echo "| without (no layout) | $(row "${nsam[@]}") | $(row "${rnf[@]}") |"
echo "| floor (bench/floor.bpf.c) | $(row "${fsam[@]}") | 1 |"
echo "| **ratio with / without** (same round; goal <= 1.5) | **$(row "${rwn[@]}")** | |"
echo
echo "$RUNS rounds of ${SECS} s, each: isoprof with the layout, without, then the floor;" \
	"wrk on both workers of the demo; $(echo "${jsps[@]}" | median) JS frames per sample" \
	"(median). Calibrating the demo's workerd took $CAL_S s."
summary jsnames_ratio "$(echo "${rwn[@]}" | median)"
exit 0
