#!/usr/bin/env bash
# The demo: a real workerd with two workers under real HTTP load (wrk),
# a 5-second isoprof capture with V8's own profiler alongside (through
# workerd's inspector), the cross-check of the two, the top functions of
# each isolate's profile, and a flamegraph page per isolate.
# Run through `make demo` (which installs and builds first).
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${DEMO_OUT:-$TOP/demo-out}
ISOPROF=${ISOPROF:-$TOP/build/isoprof}
PORT_ALPHA=${DEMO_PORT_ALPHA:-18781}
PORT_BETA=${DEMO_PORT_BETA:-18782}
PORT_INSPECTOR=${DEMO_PORT_INSPECTOR:-18783}
. "$TOP/scripts/demo-lib.sh"

WRK_PIDS=()
cleanup() {
	for p in "${WRK_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	demo_stop
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "demo: run as root (isoprof loads a BPF program)" >&2; exit 1; }
mkdir -p "$OUT"
rm -f "$OUT"/*.pb.gz "$OUT"/*.pb "$OUT"/*.cpuprofile "$OUT"/*.json "$OUT"/*.html
echo "demo: starting workerd (workers alpha on :$PORT_ALPHA, beta on :$PORT_BETA," \
	"inspector on 127.0.0.1:$PORT_INSPECTOR)"
demo_start "$OUT/workerd" "$PORT_ALPHA" "$PORT_BETA" "$PORT_INSPECTOR"
echo "demo: workerd pid $WORKERD_PID; driving traffic with wrk"
wrk -t1 -c2 -d20s "http://127.0.0.1:$PORT_ALPHA/" >"$OUT/wrk-alpha.txt" 2>&1 &
WRK_PIDS+=($!)
wrk -t1 -c2 -d20s "http://127.0.0.1:$PORT_BETA/" >"$OUT/wrk-beta.txt" 2>&1 &
WRK_PIDS+=($!)
sleep 6 # let V8 tier up the hot functions, past on-stack replacement
# ... and until beta's optimized code is in V8's code log, which V8 pauses
# while its own profiler runs (docs/v8-profiler.md)
demo_wait_optimized "$OUT/workerd" 8 "sieveBeta beta.js" "fetch beta.js" ||
	echo "demo: note: beta's optimized code is not logged yet; capturing anyway"

echo "demo: isoprof targets"
"$ISOPROF" targets --pid "$WORKERD_PID"
echo
echo "demo: isoprof record --pid $WORKERD_PID --v8 --duration-ms 5000 --out-dir $OUT"
"$ISOPROF" record --pid "$WORKERD_PID" --v8 --duration-ms 5000 --frequency 1000 \
	--out-dir "$OUT" >"$OUT/crosscheck.txt"
echo
echo "demo: cross-check with V8's own profiler (full report: $OUT/crosscheck.txt)"
grep -E '^== cross-check|^  note:|^Total variation|^Verdict' "$OUT/crosscheck.txt" | sed 's/^/  /' 
wait "${WRK_PIDS[@]}" 2>/dev/null || true
WRK_PIDS=()

# one profile per isolate (worker), and one for what ran outside isolates:
# isoprof's own (V8's are *-cpu.v8.pb.gz, which this glob does not match)
for f in "$OUT"/*-cpu.pb.gz; do
	echo
	echo "demo: isoprof top --nodecount 12 $f"
	"$ISOPROF" top --nodecount 12 "$f" | sed -n '/^Showing\|flat%/,$p'
	"$ISOPROF" flame "$f" -o "${f%.pb.gz}.html"
done
echo
grep -h "Requests/sec" "$OUT"/wrk-*.txt | sed 's/^/demo: wrk /'
echo "demo: profiles are in $OUT/: isoprof's (*-cpu.pb.gz), V8's (*-v8.cpuprofile," \
	"*-cpu.v8.pb.gz), flamegraph pages (*-cpu.html, open in a browser), cross-checks (*.json)"
