#!/usr/bin/env bash
# Benchmark 4, accuracy.
# - Native ground truth: tests/fixtures/ground_truth spends its CPU in three
#   functions and measures each one's share itself (CLOCK_THREAD_CPUTIME_ID);
#   isoprof records it at 1000 Hz and `isoprof top` gives each function's
#   flat share.  The figure is the largest difference, in percentage points.
# - V8: `isoprof record --v8` on the busy demo: per worker (alpha, a
#   recursive function; beta, loops), the total variation distance between
#   isoprof's and V8's own profile of the same isolate over the same
#   window, from the cross-check it writes (<...>-crosscheck.json, "tvd").
# Prints a markdown section.
#   bench/accuracy.sh [RUNS] [SECONDS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
SECS=${2:-4}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; bench_demo_stop; rm -rf "$WORK"' EXIT

# ground_truth_run: prints "MAX_ERROR_PP FUNCTION"
ground_truth_run() {
	local gt
	"$FIXTURES/ground_truth" $((SECS + 2)) "$WORK/gt.txt" &
	gt=$!
	sleep 1
	"$ISOPROF" record -q --pid "$gt" --duration-ms $((SECS * 1000)) -o "$WORK/gt.pb.gz" \
		2>"$WORK/gt.err"
	wait "$gt"
	"$ISOPROF" top "$WORK/gt.pb.gz" >"$WORK/gt.top" 2>&1
	awk 'FNR == NR { truth[$1] = $2; next }
	     ($6 in truth) { sub("%", "", $2); got[$6] = $2 }
	     END { m = -1
		   for (f in truth) { if (f == "total_ns") continue
			d = got[f] - truth[f]; if (d < 0) d = -d
			if (d > m) { m = d; w = f } }
		   printf "%.2f %s\n", m, w }' "$WORK/gt.txt" "$WORK/gt.top"
}

# tvd_run: prints the TVD of the alpha and the beta isolate's cross-checks
tvd_run() {
	local json w out=()
	rm -rf "$WORK/v8"
	"$ISOPROF" record -q --pid "$WORKERD_PID" --v8 --duration-ms $((SECS * 1000)) \
		--out-dir "$WORK/v8" >"$WORK/v8.out" 2>"$WORK/v8.err"
	for w in alpha beta; do
		json=$(ls "$WORK"/v8/$w.js-*-crosscheck.json 2>/dev/null | head -1)
		if [ -z "$json" ]; then
			note "accuracy: no $w cross-check: $(tail -2 "$WORK/v8.err")"
			out+=(n/a)
			continue
		fi
		out+=("$(python3 -c 'import json, sys; print("%.4f" % json.load(open(sys.argv[1]))["tvd"])' "$json")")
	done
	echo "${out[@]}"
}

declare -a gterr gtfn tvd tvd_beta
for _ in $(seq "$RUNS"); do
	read -r e f < <(ground_truth_run)
	gterr+=("$e") gtfn+=("$f")
done
bench_demo "$WORK/wd" || { echo "accuracy: the demo did not start"; exit 1; }
load_start 3600 "http://127.0.0.1:$PORT_A/" "http://127.0.0.1:$PORT_B/"
sleep 1
sleep 5	# past the first seconds of tiering (docs/crosscheck.md)
for _ in $(seq "$RUNS"); do
	read -r a b < <(tvd_run)
	tvd+=("$a") tvd_beta+=("$b")
done
load_stop
note "accuracy: done"

worst() { echo "$@" | tr ' ' '\n' | grep -v n/a | sort -g | tail -1; }
echo "| measure | median (min–max) over $RUNS runs | worst |"
echo "|---|---|---|"
echo "| native ground truth: largest error of a function's share | $(echo "${gterr[@]}" | median) pp" \
	"($(echo "${gterr[@]}" | spread)) | $(worst "${gterr[@]}") pp |"
echo "| workerd alpha: total variation distance isoprof ↔ V8's profiler | $(echo "${tvd[@]}" | median)" \
	"($(echo "${tvd[@]}" | spread)) | $(worst "${tvd[@]}") |"
echo "| workerd beta: total variation distance isoprof ↔ V8's profiler | $(echo "${tvd_beta[@]}" | median)" \
	"($(echo "${tvd_beta[@]}" | spread)) | $(worst "${tvd_beta[@]}") |"
echo
echo "Ground truth: \`ground_truth $((SECS + 2))\` (shares 2:3:5 by work, measured by the workload" \
	"itself), isoprof's ${SECS} s window at 1000 Hz inside its run. TVD: \`isoprof record --v8" \
	"--duration-ms $((SECS * 1000))\` with wrk on both workers, from 6 s after the load starts; V8 samples at 1 ms" \
	"over the same window (docs/crosscheck.md defines the distance: 0 identical, 1 disjoint)."
summary accuracy_gt_pp "$(echo "${gterr[@]}" | median)"
summary accuracy_gt_worst_pp "$(worst "${gterr[@]}")"
summary accuracy_tvd "$(echo "${tvd[@]}" | median)"
summary accuracy_tvd_beta "$(echo "${tvd_beta[@]}" | median)"
exit 0
