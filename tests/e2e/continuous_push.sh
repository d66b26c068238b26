#!/usr/bin/env bash
# isoprof continuous pushing to a profile store (issue 21, docs/continuous.md),
# against tests/fixtures/pyroscope_store.py, a real HTTP server implementing
# Pyroscope's POST /ingest as Pyroscope documents it.  A real workerd whose
# worker alpha is under load; `continuous --window-s 5 --push URL --spool
# DIR` for 40 s with the store down for 12 s in the middle:
#   - every window of alpha arrives, in order, named alpha{script, version,
#     isolate, pid, host}, from/until around the profile's own time range,
#     sampleRate 99, and the windows cover the whole run with no gap over 2 s;
#   - every body is a pprof go tool pprof reads, fibAlpha on top;
#   - the outage is logged once when it begins and once when it ends, and the
#     metrics count the spooled windows and no drop;
#   - SIGTERM in a window: that window arrives too;
# then, the store down again, a run that ends before it is back leaves its
# windows in the spool, and the next run sends them first.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/continuous_push.XXXXXX")
PA=26231 PC=26232 PL=26233 PS=26234
PIDS=()
STORE=
cleanup() {
	kill "${PIDS[@]}" $STORE $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

for p in $PA $PC $PL $PS; do
	if ss -ltn | grep -q ":$p "; then
		fail "ports" "127.0.0.1:$p is in use"
		exit 0
	fi
done

store_start() {
	python3 -u "$TOP/tests/fixtures/pyroscope_store.py" --dir "$T/store" --port $PS \
		>>"$T/store.log" 2>&1 &
	STORE=$!
	for _ in $(seq 50); do
		ss -ltn | grep -q ":$PS " && return 0
		sleep 0.1
	done
	return 1
}
store_stop() {
	kill "$STORE" 2>/dev/null
	wait "$STORE" 2>/dev/null
	STORE=
}

W=$T/wd
mkdir -p "$T/store"
services_config "$W" "$PA" "$PC" "$PL"
if ! services_start "$W" "$PA"; then
	fail "workerd start" "alpha did not start"
	exit 0
fi
wrk -t1 -c1 -d75s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
store_start || { fail "store start" "$(cat "$T/store.log")"; exit 0; }
sleep 1

"$ISOPROF" continuous --pid "$WORKERD_PID" --window-s 5 --host isoprof-test \
	--push "http://127.0.0.1:$PS" --spool "$T/spool" --metrics "$T/metrics.prom" \
	>"$T/cont.out" 2>"$T/cont.err" &
CONT=$!
PIDS+=("$CONT")
RUN_START=$(date +%s.%N)
sleep 14
store_stop
sleep 12
store_start || { fail "store restart" "$(cat "$T/store.log")"; exit 0; }
sleep 14
KILL_AT=$(date +%s.%N)
kill -TERM "$CONT"
wait "$CONT"
rc=$?
check "SIGTERM ends the run, exit 0" test "$rc" -eq 0
check "no sanitizer report" no_sanitizer_report "$T/cont.err"
check "the outage is logged when it begins" grep -q "push: store unreachable" "$T/cont.err"
check "and when it ends" grep -q "push: store back after" "$T/cont.err"
check "once each" test "$(grep -c 'push: store' "$T/cont.err")" -eq 2

# every request the store took, in the order it took them
PPROF_TIMES_DIR=$TOP/tests/fixtures python3 - "$T/store" "$WORKERD_PID" >"$T/windows" 2>"$T/windows.err" <<'PY'
import glob, gzip, json, os, sys
sys.path.insert(0, os.environ["PPROF_TIMES_DIR"])
from pprof_times import times
for meta in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    m = json.load(open(meta))
    if m["app"] != "alpha":
        continue
    body = gzip.decompress(open(meta[:-5] + ".pb.gz", "rb").read())
    t, d = times(body)
    l = m["labels"]
    ok = (l.get("script") == "alpha" and l.get("host") == "isoprof-test" and
          l.get("pid") == sys.argv[2] and l.get("isolate", "").startswith("0x") and
          l.get("version") and m["query"].get("sampleRate") == "99" and
          m["query"].get("format") == "pprof" and
          m["from"] <= t / 1e9 + 1 and m["until"] >= (t + d) / 1e9 - 1)
    print(m["seq"], "%.3f" % (t / 1e9), "%.3f" % ((t + d) / 1e9), "ok" if ok else "bad:" + json.dumps(m), meta[:-5] + ".pb.gz")
PY
N=$(wc -l <"$T/windows")
echo "alpha's windows in the store: $N"
check "the store has alpha's windows (40 s of 5 s windows: at least 7)" test "$N" -ge 7
check "each with its name, labels, sampleRate and time range" \
	test "$(grep -c ' ok ' "$T/windows")" -eq "$N"

if python3 - "$T/windows" "$RUN_START" "$KILL_AT" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
starts = [float(r[1]) for r in rows]
ends = [float(r[2]) for r in rows]
in_order = starts == sorted(starts)
gaps = [s - e for e, s in zip(ends, starts[1:])]
worst = max(gaps) if gaps else 99
covered = starts[0] - float(sys.argv[2]) < 3 and abs(ends[-1] - float(sys.argv[3])) < 1
print("in order %s, largest gap %.3f s, first window %.1f s after the start, last ends %.2f s from the signal" %
      (in_order, worst, starts[0] - float(sys.argv[2]), ends[-1] - float(sys.argv[3])))
sys.exit(0 if in_order and worst <= 2 and covered else 1)
PY
then
	pass "windows arrive in order and cover the whole run, outage included, no gap over 2 s, up to the signal"
else
	fail "windows arrive in order and cover the whole run" "$(cat "$T/windows")"
fi

bad=0
while read -r _ _ _ _ body; do
	pprof_top "$body" >"$T/top" || { bad=1; echo "unreadable: $body"; continue; }
	grep -q "fibAlpha" "$T/top" || { bad=1; echo "no fibAlpha: $body"; head -12 "$T/top"; }
done <"$T/windows"
check "every body is a pprof go tool pprof reads, fibAlpha in each" test $bad -eq 0

metric() { awk -v m="$1" '$1 == m { print $2 }' "$T/metrics.prom"; }
sp=$(metric isoprof_push_spooled_total) pu=$(metric isoprof_push_pushed_total)
su=$(metric isoprof_push_submitted_total) dr=$(metric isoprof_push_dropped_total)
echo "metrics (as of the last window): submitted $su, pushed $pu, spooled $sp, dropped $dr"
check "metrics: no window dropped" test "${dr%.*}" -eq 0
check "metrics: the outage's windows went through the spool" test "${sp%.*}" -ge 2

# --- a run that ends while the store is away: its windows wait in the spool
store_stop
rm -rf "$T/store2"
"$ISOPROF" continuous --pid "$WORKERD_PID" --window-s 2 --windows 2 --host isoprof-test \
	--push "http://127.0.0.1:$PS" --spool "$T/spool" >/dev/null 2>"$T/cont2.err"
check "a run with the store away ends (exit 0)" test $? -eq 0
left=$(find "$T/spool" -type f -name '*.isp' | wc -l)
check "its windows stay in the spool ($left files)" test "$left" -ge 2
BEFORE=$(ls "$T/store"/*.json | wc -l)
store_start || { fail "store restart" "$(cat "$T/store.log")"; exit 0; }
"$ISOPROF" continuous --pid "$WORKERD_PID" --window-s 2 --windows 1 --host isoprof-test \
	--push "http://127.0.0.1:$PS" --spool "$T/spool" >/dev/null 2>"$T/cont3.err"
check "the next run ends (exit 0)" test $? -eq 0
check "no sanitizer report in either run" no_sanitizer_report "$T/cont2.err"
AFTER=$(ls "$T/store"/*.json | wc -l)
NEW=$((AFTER - BEFORE))
if python3 - "$T/store" "$BEFORE" <<'PY'
import glob, json, os, sys
metas = sorted(glob.glob(os.path.join(sys.argv[1], "*.json")))[int(sys.argv[2]):]
fr = [json.load(open(m))["from"] for m in metas]
# the predecessor's windows (earlier) before this run's own
print("froms:", fr)
sys.exit(0 if len(fr) >= 3 and fr == sorted(fr) else 1)
PY
then
	pass "the next run sends its predecessor's spooled windows first, then its own ($NEW requests)"
else
	fail "the next run sends its predecessor's spooled windows first" "$NEW new requests"
fi
check "the spool is empty after" test "$(find "$T/spool" -type f -name '*.isp' | wc -l)" -eq 0
