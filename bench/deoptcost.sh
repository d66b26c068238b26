#!/usr/bin/env bash
# Benchmark 15, inlined code placed by deoptimization data: what it costs
# isoprof per window.  Two workerds with no V8 flag, one running the
# siblings fixture (tests/fixtures/inlining/siblings.mjs), one the causal
# workload (acorn parsing 1.7 MB of real JavaScript:
# tests/fixtures/causal/worker.js), under load; the same binary captures
# both in alternate runs
# with its calibrated layout (deoptimization data learnt: inlined
# functions placed) and with that layout's deoptimization fields removed
# (what isoprof did before: every inlined function charged to its
# caller).  Per window: isoprof's CPU time (user + system), the
# post-processing time it reports, the time and reads spent on code
# objects, code objects decoded, deoptimization entries decoded and
# instructions walked, and the share of the samples in code that inlined
# that it placed inside an inlined function or its own.  Prints a
# markdown section.
#   bench/deoptcost.sh [RUNS] [SECONDS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-5}
SECS=${2:-5}
PORT=18891
WORKERD=${WORKERD:-$(bash "$TOP/scripts/install-workerd.sh")}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
. "$TOP/tests/fixtures/causal/causal-lib.sh"
CAUSAL_WORKERD_PORT=18892
trap 'load_stop; causal_stop; [ -n "${WD:-}" ] && kill $WD 2>/dev/null; rm -rf "$WORK"' EXIT
chmod 0711 "$WORK"
mkdir -p "$WORK/wd" "$WORK/tmp"
cp "$TOP/tests/fixtures/inlining/siblings.mjs" "$WORK/wd/"
sed -e "s|@V8FLAGS@||" -e "s|@PORT@|$PORT|" "$TOP/tests/fixtures/inlining/siblings.capnp.in" \
	>"$WORK/wd/config.capnp"
(cd "$WORK/wd" && exec "$WORKERD" serve config.capnp) >"$WORK/wd/workerd.log" 2>&1 &
WD=$!
for _ in $(seq 100); do
	curl -sf -o /dev/null "http://127.0.0.1:$PORT/" 2>/dev/null && break
	sleep 0.1
done
if ! curl -sf -o /dev/null "http://127.0.0.1:$PORT/"; then
	echo "deoptcost: workerd did not start: $(tail -2 "$WORK/wd/workerd.log")"
	exit 0
fi
# the causal workload's acorn worker (tests/fixtures/causal/worker.js), unchanged
PIDS=(--pid "$WD")
ACORN=
NM=$(bash "$TOP/scripts/install-codebases.sh" 2>/dev/null) || NM=
if [ -n "$NM" ] && CAUSAL_WD_WARMUP=3 causal_start_workerd "$NM" "$NM" 2>"$WORK/acorn.err"; then
	PIDS+=(--pid "$CAUSAL_PID")
	ACORN=1
fi
if ! TMPDIR=$WORK/tmp "$ISOPROF" calibrate --state-dir "$WORK/with" "/proc/$WD/exe" \
	>"$WORK/cal.out" 2>&1; then
	echo "deoptcost: calibration failed: $(tail -1 "$WORK/cal.out")"
	exit 0
fi
if ! grep -q "^deopt_format [1-9]" "$WORK"/with/v8-layouts/*; then
	echo "deoptcost: the calibration learnt no deoptimization data: $(grep deoptim "$WORK/cal.out")"
	exit 0
fi
# the same layout without its deoptimization fields: the placement before
mkdir -p "$WORK/without/v8-layouts"
for f in "$WORK"/with/v8-layouts/*; do
	sed -E 's/^(deopt_(format|opcodes|translation|exit_start|eager_count|lazy_count|first_entry|entry_size|entry_translation|entry_pc|eager_exit_size|lazy_exit_size)|maglev_safepoint_[a-z]+) .*/\1 0/' "$f" \
		>"$WORK/without/v8-layouts/$(basename "$f")"
done
URLS=("http://127.0.0.1:$PORT/siblings" "http://127.0.0.1:$PORT/chain")
[ -n "$ACORN" ] && URLS+=("http://127.0.0.1:$CAUSAL_WORKERD_PORT/")
load_start $((RUNS * 2 * (SECS + 3) + 30)) "${URLS[@]}"
sleep 5

# run STATE: prints "CPU_MS POST_MS CODE_MS READS KIB DECODED ENTRIES INSNS PLACED_PCT"
run() {
	/usr/bin/time -f "%U %S" -o "$WORK/time" "$ISOPROF" record -q --no-calibrate --json \
		--state-dir "$1" "${PIDS[@]}" --duration-ms $((SECS * 1000)) -o "$WORK/p.pb.gz" \
		>"$WORK/r.json" 2>"$WORK/r.err"
	python3 - "$WORK/r.json" "$WORK/r.err" "$WORK/time" <<'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
n = j["js_names"]
post = re.search(r"post-processing (\d+) ms", open(sys.argv[2]).read())
u, s = map(float, open(sys.argv[3]).read().split()[-2:])
placed = total = 0
for i in j["isolates"]:
    p = i.get("jit_placed_by") or {}
    here = p.get("deopt_data", 0) + p.get("source_positions", 0) + p.get("code_log", 0)
    placed += here
    total += here + p.get("caller_only", 0)
print("%.0f %s %.2f %d %.0f %d %d %d %.1f" % (
    (u + s) * 1000, post.group(1) if post else "n/a", n["code_object_read_ms"],
    n["code_object_reads"], n["code_object_read_bytes"] / 1024, n["code_objects_decoded"],
    n["deopt_entries_decoded"], n["deopt_instructions_walked"],
    100.0 * placed / total if total else 0))
PY
}

declare -a A=() B=()
for ((r = 0; r < RUNS; r++)); do
	note "deoptcost: round $((r + 1)) of $RUNS"
	A+=("$(run "$WORK/without")")
	B+=("$(run "$WORK/with")")
done
load_stop

# col K ROWS...: the Kth field's "median (min–max)"
col() {
	local k=$1
	shift
	printf '%s\n' "$@" | awk -v k="$k" '{ print $k }' >"$WORK/col"
	echo "$(median <"$WORK/col") ($(spread <"$WORK/col"))"
}
names=("isoprof CPU time, ms" "post-processing, ms" "code objects: read and decode, ms"
	"code objects: reads" "code objects: KiB read" "code objects decoded"
	"deoptimization entries decoded" "instructions walked"
	"JIT-leaf samples in code that inlined, placed, %")
echo "| per ${SECS} s window | before: inlined code charged to its caller | deoptimization data | ratio of medians |"
echo "|---|---|---|---|"
for k in 1 2 3 4 5 6 7 8 9; do
	a=$(col $k "${A[@]}")
	b=$(col $k "${B[@]}")
	echo "| ${names[$((k - 1))]} | $a | $b | $(ratio "${b%% *}" "${a%% *}" %.2f) |"
	[ $k = 1 ] && summary deoptcost_cpu_ratio "$(ratio "${b%% *}" "${a%% *}")"
	[ $k = 3 ] && summary deoptcost_code_ms "${b%% *}"
done
echo
echo "$RUNS alternating rounds of ${SECS} s windows at 1000 Hz, workerd with no V8 flag" \
	"(identical inlined siblings, a chain of three${ACORN:+; and acorn parsing 1.7 MB, in a second workerd}) under wrk," \
	"the same isoprof binary; 'before' is the layout without its deoptimization fields."
exit 0
