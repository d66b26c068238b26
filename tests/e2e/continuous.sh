#!/usr/bin/env bash
# isoprof continuous (issue 21, docs/continuous.md) on a real workerd whose
# worker alpha is under load, windows kept with --out-dir: one profile per
# isolate per window, read by go tool pprof, fibAlpha hot in each; windows
# follow one another with no gap; a node started during the run is sampled
# from the next window on (the delay is printed); a target that exits is let
# go and the run goes on; retention deletes old windows; the metrics file
# counts what happened; SIGTERM in a window writes that window (shorter)
# and exits 0.  The store side (push, spool, outage) is push_store.sh's.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/continuous.XXXXXX")
PA=26221 PC=26222 PL=26223
PIDS=()
cleanup() {
	kill "${PIDS[@]}" $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

for p in $PA $PC $PL; do
	if ss -ltn | grep -q ":$p "; then
		fail "ports" "127.0.0.1:$p is in use"
		exit 0
	fi
done

W=$T/wd
services_config "$W" "$PA" "$PC" "$PL"
if ! services_start "$W" "$PA"; then
	fail "workerd start" "alpha did not start"
	exit 0
fi
wrk -t1 -c1 -d60s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
sleep 1

# a window file of 2020: far past the 60 minutes kept by default
OUT=$T/out
mkdir -p "$OUT"
OLD=20200101T000000Z+10s+alpha+unknown+0x1+cpu.pb.gz
cp /dev/null "$OUT/$OLD"
echo keep >"$OUT/not-a-window.txt"

# a node that is a target from the start and creates a new isolate (a
# worker thread) during the run: profiled from its first sampled tick, in
# the window it was created in
cat >"$T/isolate-later.js" <<'JS'
const { Worker } = require('worker_threads');
setTimeout(() => {
	process.stdout.write('created ' + (Date.now() / 1000).toFixed(3) + '\n');
	new Worker(`function spinLateIsolate(){let x=0;for(let i=0;i<1e6;i++)x+=i%7;return x}
const t=Date.now(); while(Date.now()-t<3000) spinLateIsolate();`, { eval: true });
}, 6200);
setTimeout(() => {}, 15000);
JS
node --perf-basic-prof "$T/isolate-later.js" >"$T/isolate-later.out" 2>&1 &
LATER=$!
PIDS+=("$LATER")
sleep 0.5

# 2 s windows, every V8 runtime on the host (no --pid): the newcomer must be found
"$ISOPROF" continuous --window-s 2 --out-dir "$OUT" --metrics "$T/metrics.prom" -v \
	>"$T/cont.out" 2>"$T/cont.err" &
CONT=$!
PIDS+=("$CONT")
sleep 5
# a node that starts during the run, spins 4 s, exits
NODE_START=$(date +%s.%N)
node --perf-basic-prof -e 'function spinNewcomer(){let x=0;for(let i=0;i<1e6;i++)x+=i%7;return x}
const t=Date.now(); while(Date.now()-t<4000) spinNewcomer();' &
NODE=$!
PIDS+=("$NODE")
wait "$NODE" 2>/dev/null
sleep 3.3
# SIGTERM in the middle of a window
KILL_AT=$(date +%s.%N)
kill -TERM "$CONT"
wait "$CONT"
rc=$?

check "SIGTERM ends the run, exit 0" test "$rc" -eq 0
check "no sanitizer report" no_sanitizer_report "$T/cont.err"

ls "$OUT" | grep -F '+alpha+' | sort >"$T/alpha.list"
NALPHA=$(wc -l <"$T/alpha.list")
if [ "$NALPHA" -ge 5 ]; then
	pass "one profile of alpha per window ($NALPHA windows)"
else
	fail "one profile of alpha per window" "$NALPHA files: $(ls "$OUT" | head -20)"
fi

# every window: go tool pprof reads it, fibAlpha is its hot function
bad=0
: >"$T/times"
while read -r f; do
	pprof_top "$OUT/$f" >"$T/top" || { bad=1; echo "unreadable: $f"; continue; }
	s=$(share_of fibAlpha "$T/top")
	# the last window may be cut short by the signal: a few samples only
	if [ "$f" != "$(tail -1 "$T/alpha.list")" ] && ! awk -v s="$s" 'BEGIN { exit !(s >= 40) }'; then
		bad=1
		echo "$f: fibAlpha $s%"
	fi
	# the start to the nanosecond from -raw, the length with its unit from -top
	start=$(TZ=UTC HOME=${HOME:-/root} go tool pprof -raw "$OUT/$f" 2>/dev/null |
		awk '/^Time:/ { print $2 " " $3; exit }')
	length=$(awk '/^Duration:/ { d = $2; sub(",", "", d); print d; exit }' "$T/top")
	echo "$start $length" >>"$T/times"
done <"$T/alpha.list"
if [ $bad -eq 0 ]; then
	pass "every window of alpha read by go tool pprof, fibAlpha >= 40% in each"
else
	fail "every window of alpha read by go tool pprof, fibAlpha >= 40% in each" \
		"see above"
fi

# contiguous: each window starts where the last ended (the profile's own time and duration)
if python3 - "$T/times" <<'PY'
import sys, datetime
rows = []
for line in open(sys.argv[1]):
    day, clock, dur = line.split()
    dur = float(dur[:-2]) / 1e3 if dur.endswith('ms') else float(dur.rstrip('s'))
    clock = clock.split('.')[0] + '.' + (clock.split('.') + ['0'])[1][:6]
    t = datetime.datetime.strptime(day + ' ' + clock, '%Y-%m-%d %H:%M:%S.%f').timestamp()
    rows.append((t, dur))
rows.sort()
gaps = [b[0] - (a[0] + a[1]) for a, b in zip(rows, rows[1:])]
worst = max(abs(g) for g in gaps)
print("windows %d, largest gap or overlap %.3f s" % (len(rows), worst))
sys.exit(0 if worst <= 0.05 else 1)
PY
then
	pass "windows follow one another (gap <= 0.05 s, the profiles' Duration rounding)"
else
	fail "windows follow one another" "$(cat "$T/times")"
fi

# the signal's window: written, ending when the signal came (not at 2 s)
end=$(python3 - "$T/times" <<'PY'
import sys, datetime
last = None
for line in open(sys.argv[1]):
    day, clock, dur = line.split()
    dur = float(dur[:-2]) / 1e3 if dur.endswith('ms') else float(dur.rstrip('s'))
    clock = clock.split('.')[0] + '.' + (clock.split('.') + ['0'])[1][:6]
    t = datetime.datetime.strptime(day + ' ' + clock, '%Y-%m-%d %H:%M:%S.%f').replace(
        tzinfo=datetime.timezone.utc).timestamp()
    if last is None or t > last[0]:
        last = (t, dur)
print("%.3f" % (last[0] + last[1]))
PY
)
if awk -v e="$end" -v k="$KILL_AT" 'BEGIN { d = e - k; exit !(d > -0.3 && d < 0.3) }'; then
	pass "the window SIGTERM cut is written, ending when the signal came"
else
	fail "the window SIGTERM cut is written, ending when the signal came" "last end $end, signal $KILL_AT"
fi

# the newcomer: picked up within a second or so of its start, spinNewcomer named
found=""
for f in $(ls "$OUT" | sort); do
	case $f in *+alpha+*|*+no-isolate+*) continue ;; esac
	pprof_top "$OUT/$f" >"$T/top"
	if grep -q spinNewcomer "$T/top"; then
		found=$f
		break
	fi
done
if [ -n "$found" ]; then
	pass "a node started during the run is profiled, its function named ($found)"
else
	fail "a node started during the run is profiled" "$(ls "$OUT")"
fi
ago=$(sed -n 's/.*node runtime started \([0-9.]*\) s ago: sampled from now on.*/\1/p' "$T/cont.err" | head -1)
if [ -n "$ago" ] && awk -v d="$ago" 'BEGIN { exit !(d <= 2) }'; then
	pass "the newcomer is picked up ${ago} s after it started (/proc looked at every second)"
else
	fail "the newcomer is picked up within a window (2 s) of its start" "${ago:-no line}: $(grep started "$T/cont.err")"
fi

# the isolate created during the run: the first window that holds its
# function began before the isolate was created, not after
created=$(awk '/^created / { print $2 }' "$T/isolate-later.out")
first=""
for f in $(ls "$OUT" | sort); do
	case $f in *+alpha+*) continue ;; esac
	pprof_top "$OUT/$f" >"$T/top"
	grep -q spinLateIsolate "$T/top" || continue
	first=$(TZ=UTC HOME=${HOME:-/root} go tool pprof -raw "$OUT/$f" 2>/dev/null |
		awk '/^Time:/ { print $2 " " $3; exit }')
	break
done
if [ -n "$created" ] && [ -n "$first" ] && python3 - "$first" "$created" <<'PY'
import sys, datetime
day, clock = sys.argv[1].split()
clock = clock.split('.')[0] + '.' + (clock.split('.') + ['0'])[1][:6]
start = datetime.datetime.strptime(day + ' ' + clock, '%Y-%m-%d %H:%M:%S.%f').replace(
    tzinfo=datetime.timezone.utc).timestamp()
created = float(sys.argv[2])
print("isolate created %.3f, first window with its function starts %.3f (%.3f s before)" %
      (created, start, created - start))
sys.exit(0 if start <= created + 0.01 else 1)
PY
then
	pass "an isolate created during a window is profiled in that window"
else
	fail "an isolate created during a window is profiled in that window" \
		"created ${created:-?}, first window with spinLateIsolate ${first:-none}"
fi

# retention: the 2020 window is gone, a file that is no window is left alone
check "retention deleted the window of 2020" test ! -e "$OUT/$OLD"
check "retention left a file that is no window alone" test -e "$OUT/not-a-window.txt"

# metrics: Prometheus text, the counts of this run
metric() { awk -v m="$1" '$1 == m { print $2 }' "$T/metrics.prom"; }
if [ -s "$T/metrics.prom" ]; then
	nw=$(metric isoprof_windows_total)
	ex=$(metric isoprof_targets_exited_total)
	st=$(metric isoprof_targets_started_total)
	pr=$(metric isoprof_files_pruned_total)
	rss=$(metric isoprof_resident_memory_bytes)
	nfiles=$(ls "$OUT" | grep -c 'cpu.pb.gz$')
	fw=$(metric isoprof_files_written_total)
	echo "metrics: windows $nw, started $st, exited $ex, pruned $pr, files $fw, rss $rss"
	# -v says a line per window; alpha has a profile in each (but a last
	# window cut at the signal may be too short for one of its samples)
	nlines=$(grep -c '^isoprof: window [0-9]*:' "$T/cont.err")
	check "metrics count the windows (as many as -v's lines: $nlines)" test "${nw%.*}" -eq "$nlines"
	check "alpha has a profile in every window ($NALPHA of $nw)" \
		test "$NALPHA" -le "${nw%.*}" -a "$NALPHA" -ge "$(( ${nw%.*} - 1 ))"
	check "metrics count the files written" test "${fw%.*}" -eq "$nfiles"
	check "metrics count the newcomer and its exit" \
		test "${st%.*}" -ge 1 -a "${ex%.*}" -ge 1
	check "metrics count the pruned window" test "${pr%.*}" -ge 1
	check "HELP and TYPE lines for every metric" \
		test "$(grep -c '^# TYPE ' "$T/metrics.prom")" -eq "$(grep -vc '^#' "$T/metrics.prom")"
else
	fail "metrics file written" "missing"
fi

# usage errors: exit 2, no capture
"$ISOPROF" continuous --window-s 2 >/dev/null 2>"$T/usage.err"
check "no --push and no --out-dir is a usage error (exit 2)" test $? -eq 2
"$ISOPROF" continuous --out-dir "$OUT" --window-s 0 >/dev/null 2>&1
check "--window-s 0 is a usage error" test $? -eq 2
"$ISOPROF" continuous --out-dir "$OUT" --spool "$T/spool" >/dev/null 2>&1
check "--spool without --push is a usage error" test $? -eq 2
