#!/usr/bin/env bash
# Benchmark 13, continuous (issue 21): the default `isoprof continuous`
# (99 Hz, 10 s windows, every V8 runtime on the host, pushing to a store
# with a spool) on a generated edge host of N isolates, two under load
# (bench/scale-gen.sh), against `perf record -F 99 -g -p P
# --switch-output=10s` (the same rate, the same 10 s windows) measured in
# the same run, alternating.  Per round of M minutes each:
#   isoprof: its CPU (user + system, from /proc) as a share of one CPU over
#            the steady state (from the end of its first window), its RSS
#            every window (growth: the last third's median less the first
#            third's, after the first window), and for every window pushed,
#            from the window's end (the profile's time + duration) to the
#            store's receipt (the store's file time): the push delay;
#   perf:    its CPU share and peak RSS over the same span, and the CPU of
#            perf script over each window's file (what turns perf's windows
#            into stacks with names, as isoprof's windows already are).
# The store is tests/fixtures/pyroscope_store.py, Pyroscope's /ingest API.
# Prints a markdown section; SUMMARY gets continuous_* keys.
#   bench/continuous.sh [ROUNDS] [MINUTES] [N]     (default 2 rounds, 3 min, 1000)
#   CONT_BASE_PORT   first worker port (default 21000)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
ROUNDS=${1:-2}
MINUTES=${2:-3}
N=${3:-1000}
BASE=${CONT_BASE_PORT:-21000}
WINDOW_S=10
WARM_JOBS=4

WORK=$(mktemp -d /tmp/isoprof-cont.XXXXXX)
SPID= STORE_PID=
stop_all() {
	load_stop
	[ -n "$STORE_PID" ] && kill "$STORE_PID" 2>/dev/null
	if [ -n "$SPID" ]; then
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
		rm -f "/tmp/perf-$SPID.map"
	fi
}
trap 'stop_all; rm -rf "$WORK"' EXIT
WORKERD=${WORKERD:-$(bash "$TOP/scripts/install-workerd.sh")}
for tool in wrk perf curl python3 go; do
	command -v $tool >/dev/null || { echo "continuous: $tool is needed (scripts/setup.sh)"; exit 0; }
done
if ss -Hltn | awk -v lo="$BASE" -v hi="$((BASE + N - 1))" \
	'{ n = split($4, a, ":"); p = a[n] + 0 } p >= lo && p <= hi { f = 1 } END { exit !f }'; then
	echo "continuous: a port in $BASE..$((BASE + N - 1)) is taken"
	exit 0
fi

# the host: N workers, every one warmed, w0 and w1 under load
note "continuous: $N isolates: starting and warming ..."
bash "$TOP/bench/scale-gen.sh" "$WORK/w" "$N" "$BASE" || exit 0
(cd "$WORK/w" && exec "$WORKERD" serve config.capnp >"$WORK/w/workerd.log" 2>&1) &
SPID=$!
last=$((BASE + N - 1))
t0=$(now_s)
until ss -Hltn "( sport = :$last )" | grep -q .; do
	kill -0 "$SPID" 2>/dev/null || { echo "continuous: workerd died: $(tail -3 "$WORK/w/workerd.log")"; exit 0; }
	[ "$(calc "(($(now_s) - $t0) > 600)" %d)" = 1 ] && { echo "continuous: workerd not up in 600 s"; exit 0; }
	sleep 0.2
done
seq "$BASE" "$last" | xargs -P "$WARM_JOBS" -I{} curl -s -o /dev/null --max-time 120 \
	"http://127.0.0.1:{}/warm"
load_start $((ROUNDS * MINUTES * 60 * 2 + 600)) "http://127.0.0.1:$BASE/" "http://127.0.0.1:$((BASE + 1))/"
sleep 2

# the store
mkdir -p "$WORK/store"
python3 -u "$TOP/tests/fixtures/pyroscope_store.py" --dir "$WORK/store" --port 0 \
	>"$WORK/store.log" 2>&1 &
STORE_PID=$!
for _ in $(seq 50); do grep -q '^port ' "$WORK/store.log" && break; sleep 0.1; done
PORT=$(awk '/^port / { print $2; exit }' "$WORK/store.log")
[ -n "$PORT" ] || { echo "continuous: the store did not start: $(cat "$WORK/store.log")"; exit 0; }

# push delays: per request stored since MARK, the store's receipt less the
# window's end (time_nanos + duration_nanos of the pprof it carried)
DELAYS_PY='
import glob, gzip, json, os, sys
sys.path.insert(0, os.environ["PPROF_TIMES_DIR"])
from pprof_times import times
mark = float(sys.argv[2])
for meta in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    st = os.stat(meta)
    if st.st_mtime < mark: continue
    body = open(meta[:-5] + ".pb.gz", "rb").read()
    try: body = gzip.decompress(body)
    except OSError: pass
    t, d = times(body)
    if t is None or d is None: continue
    print("%.3f" % ((st.st_mtime_ns - (t + d)) / 1e9))
'

isoprof_round() {
	local r=$1 pid c0 c1 w0 w1 mark rss_series rss
	rm -rf "$WORK/spool" "$WORK/m.prom"
	mark=$(now_s)
	"$ISOPROF" continuous --push "http://127.0.0.1:$PORT" --spool "$WORK/spool" \
		--metrics "$WORK/m.prom" -q 2>"$WORK/cont.err" &
	pid=$!
	# the steady state starts with the second window
	sleep $((WINDOW_S + 2))
	c0=$(cpu_ns "$pid") w0=$(now_s)
	rss_series=()
	for _ in $(seq $((MINUTES * 60 / WINDOW_S - 1))); do
		sleep "$WINDOW_S"
		rss=$(awk '/^VmRSS:/ { print $2 / 1024 }' "/proc/$pid/status" 2>/dev/null)
		rss_series+=("${rss:-n/a}")
	done
	c1=$(cpu_ns "$pid") w1=$(now_s)
	kill -TERM "$pid"
	wait "$pid"
	grep -v '^$' "$WORK/cont.err" | head -3 | sed 's/^/    /' >&2
	CPU_PCT=$(calc "($c1 - $c0) / (($w1 - $w0) * 1e9) * 100" %.3f)
	local n=${#rss_series[@]} third
	third=$(( n / 3 > 0 ? n / 3 : 1 ))
	RSS_FIRST=$(echo "${rss_series[@]:0:$third}" | median)
	RSS_LAST=$(echo "${rss_series[@]:$((n - third))}" | median)
	RSS_MAX=$(printf '%s\n' "${rss_series[@]}" | sort -g | tail -1)
	PPROF_TIMES_DIR=$TOP/tests/fixtures python3 -c "$DELAYS_PY" "$WORK/store" "$mark" >"$WORK/delays.$r"
	PUSHED=$(wc -l <"$WORK/delays.$r")
	DELAY_MED=$(median <"$WORK/delays.$r")
	DELAY_MAX=$(sort -g "$WORK/delays.$r" | tail -1)
	LATE=$(awk '$1 > 1 { n++ } END { print n + 0 }' "$WORK/delays.$r")
	WINDOWS=$(awk '$1 == "isoprof_windows_total" { print $2 }' "$WORK/m.prom")
	LOST=$(awk '$1 == "isoprof_samples_lost_total" { print $2 }' "$WORK/m.prom")
}

perf_round() {
	local pid c0 c1 w0 w1 kb s0 s1
	rm -rf "$WORK/perf"
	mkdir -p "$WORK/perf"
	perf record -q -F 99 -g -p "$SPID" --switch-output="${WINDOW_S}s" \
		-o "$WORK/perf/perf.data" >/dev/null 2>&1 &
	pid=$!
	sleep $((WINDOW_S + 2))
	c0=$(cpu_ns "$pid") w0=$(now_s)
	PERF_RSS=0
	for _ in $(seq $((MINUTES * 60 / WINDOW_S - 1))); do
		sleep "$WINDOW_S"
		kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$kb" ] && [ "$kb" -gt "$PERF_RSS" ] && PERF_RSS=$kb
	done
	c1=$(cpu_ns "$pid") w1=$(now_s)
	kill -INT "$pid"
	wait "$pid" 2>/dev/null
	PERF_PCT=$(calc "($c1 - $c0) / (($w1 - $w0) * 1e9) * 100" %.3f)
	PERF_RSS=$(calc "$PERF_RSS / 1024" %.1f)
	# what perf script costs per window, over every window file perf wrote
	s0=0
	for f in "$WORK"/perf/perf.data.*; do
		[ -e "$f" ] || continue
		/usr/bin/time -f '%U %S' -o "$WORK/t.script" perf script -i "$f" >/dev/null 2>&1
		s1=$(awk '{ print ($1 + $2) }' "$WORK/t.script" | tail -1)
		s0=$(calc "$s0 + ${s1:-0}")
	done
	PERF_SCRIPT_PCT=$(calc "$s0 / ($w1 - $w0 + 2 * $WINDOW_S) * 100" %.3f)
}

declare -a icpu pcpu pscr ratio rfirst rlast rmax dmed dmax late pushed prss
for r in $(seq "$ROUNDS"); do
	note "continuous: round $r/$ROUNDS: isoprof continuous for $MINUTES min ..."
	isoprof_round "$r"
	note "continuous: isoprof ${CPU_PCT}% of a CPU, RSS ${RSS_FIRST} -> ${RSS_LAST} MB (max $RSS_MAX), $PUSHED pushed, delay median ${DELAY_MED} s, max ${DELAY_MAX} s, $LATE over 1 s, $WINDOWS windows, $LOST lost"
	note "continuous: round $r/$ROUNDS: perf record --switch-output for $MINUTES min ..."
	perf_round
	note "continuous: perf record ${PERF_PCT}% of a CPU (perf script ${PERF_SCRIPT_PCT}%), RSS $PERF_RSS MB"
	icpu+=("$CPU_PCT") pcpu+=("$PERF_PCT") pscr+=("$PERF_SCRIPT_PCT")
	ratio+=("$(ratio "$CPU_PCT" "$PERF_PCT" %.2f)")
	rfirst+=("$RSS_FIRST") rlast+=("$RSS_LAST") rmax+=("$RSS_MAX")
	dmed+=("$DELAY_MED") dmax+=("$DELAY_MAX") late+=("$LATE") pushed+=("$PUSHED") prss+=("$PERF_RSS")
done

med() { echo "$@" | median; }
cell() { echo "$(med "$@") ($(echo "$@" | spread))"; }
echo "One workerd of $N isolates (two under wrk load), $ROUNDS alternating rounds of $MINUTES min"
echo "each; default configuration: 99 Hz, ${WINDOW_S} s windows, every runtime, --push to"
echo "Pyroscope's /ingest (tests/fixtures/pyroscope_store.py), --spool.  Medians (range)."
echo
echo "| | isoprof continuous | perf record -F 99 -g --switch-output=${WINDOW_S}s |"
echo "|---|---|---|"
echo "| CPU, % of one CPU (steady state) | $(cell "${icpu[@]}") | $(cell "${pcpu[@]}"); perf script of its windows: $(cell "${pscr[@]}") |"
echo "| ratio isoprof / perf record | $(cell "${ratio[@]}") | |"
echo "| RSS, MB: first third → last third (max) | $(med "${rfirst[@]}") → $(med "${rlast[@]}") ($(med "${rmax[@]}")) | peak $(cell "${prss[@]}") |"
echo "| window end → in the store, s: median, max | $(med "${dmed[@]}"), $(med "${dmax[@]}") ($(echo "${late[@]}" | awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }') of $(echo "${pushed[@]}" | awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }') over 1 s) | |"
summary continuous_cpu_pct "$(med "${icpu[@]}")"
summary continuous_perf_pct "$(med "${pcpu[@]}")"
summary continuous_rss_first_mb "$(med "${rfirst[@]}")"
summary continuous_rss_last_mb "$(med "${rlast[@]}")"
summary continuous_rss_max_mb "$(med "${rmax[@]}")"
summary continuous_delay_max_s "$(med "${dmax[@]}")"
summary continuous_minutes "$MINUTES"
