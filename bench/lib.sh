# Helpers shared by the benchmark scripts (sourced, not run).
#
#   ISOPROF    the isoprof binary (default build/isoprof, the release build)
#   FIXTURES   the test fixtures (default: fixtures/ beside ISOPROF)
#   BENCH_BIN  bench/'s own programs (default: bench/ beside ISOPROF)
#   SUMMARY    file the scripts append "key value" lines to, from which
#              bench/run.sh writes the targets table
#   BENCH_WORKERD_PID, BENCH_PORT_A, BENCH_PORT_B, BENCH_PORT_I
#              a demo workerd already running (bench/run.sh starts one for
#              all benchmarks); bench_demo starts one when they are unset

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ISOPROF=$(realpath "${ISOPROF:-$TOP/build/isoprof}")
FIXTURES=${FIXTURES:-$(dirname "$ISOPROF")/fixtures}
BENCH_BIN=${BENCH_BIN:-$(dirname "$ISOPROF")/bench}
SUMMARY=${SUMMARY:-/dev/null}
export HOME=${HOME:-/root}
. "$TOP/scripts/demo-lib.sh"

# bench_demo DIR: sets WORKERD_PID, PORT_A, PORT_B, PORT_I to a demo workerd
# with its inspector, warmed up (the JIT has compiled the hot functions)
bench_demo() {
	if [ -n "${BENCH_WORKERD_PID:-}" ]; then
		WORKERD_PID=$BENCH_WORKERD_PID PORT_A=$BENCH_PORT_A PORT_B=$BENCH_PORT_B
		PORT_I=$BENCH_PORT_I
		BENCH_OWN_DEMO=
		return 0
	fi
	PORT_A=18881 PORT_B=18882 PORT_I=18883
	if ss -Hltn "( sport = :$PORT_A or sport = :$PORT_B or sport = :$PORT_I )" | grep -q .; then
		echo "bench: a port of $PORT_A, $PORT_B, $PORT_I is taken (another bench running?)" >&2
		return 1
	fi
	demo_start "$1" "$PORT_A" "$PORT_B" "$PORT_I" >/dev/null || return 1
	BENCH_OWN_DEMO=1
	bench_warm_up
}

bench_warm_up() {
	wrk -t1 -c2 -d1s "http://127.0.0.1:$PORT_A/" >/dev/null 2>&1
	wrk -t1 -c2 -d1s "http://127.0.0.1:$PORT_B/" >/dev/null 2>&1
}

# the demo this script started, if any
bench_demo_stop() {
	[ -n "${BENCH_OWN_DEMO:-}" ] && demo_stop
	return 0
}

# bench_one_worker DIR JS PORT [INSPECTOR_PORT]: a workerd serving one worker
# (the module JS, copied) on PORT, with the perf map and code log, in DIR;
# its pid in WD_PID once it answers (1 when it does not).  The caller kills it.
bench_one_worker() {
	local dir=$1 js=$2 port=$3 insp=${4:-} name
	name=$(basename "$js" .js)
	mkdir -p "$dir/v8logs"
	cp "$js" "$dir/$name.js"
	cat >"$dir/config.capnp" <<EOF
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "$name", worker = .w) ],
  sockets = [ (name = "http", address = "127.0.0.1:$port", http = (), service = "$name") ],
  v8Flags = [
    "--perf-basic-prof", "--interpreted-frames-native-stack",
    "--log-code", "--log-source-code", "--logfile-per-isolate", "--logfile=$dir/v8logs/v8.log",
  ],
);
const w :Workerd.Worker = (
  modules = [ (name = "$name.js", esModule = embed "$name.js") ],
  compatibilityDate = "2024-01-01",
);
EOF
	(cd "$dir" && exec "$WORKERD" serve config.capnp ${insp:+--inspector-addr=127.0.0.1:$insp}) \
		>"$dir/workerd.log" 2>&1 &
	WD_PID=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && return 0
		sleep 0.1
	done
	curl -sf -o /dev/null "http://127.0.0.1:$port/"
}

# load_start SECONDS URL...: one wrk -t1 -c2 per URL in the background;
# LOAD_PIDS holds them
load_start() {
	local secs=$1 url
	shift
	LOAD_PIDS=()
	for url in "$@"; do
		wrk -t1 -c2 -d"${secs}s" "$url" >/dev/null 2>&1 &
		LOAD_PIDS+=($!)
	done
}

load_stop() {
	[ ${#LOAD_PIDS[@]} -eq 0 ] && return 0
	kill "${LOAD_PIDS[@]}" 2>/dev/null
	wait "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
	return 0
}

# cpu_ns PID: user + system CPU time of the process (all its threads) in ns,
# from /proc/PID/stat (clock ticks)
CLK_TCK=$(getconf CLK_TCK)
cpu_ns() {
	awk -v hz="$CLK_TCK" '{ sub(/.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' \
		"/proc/$1/stat" 2>/dev/null || echo 0
}

# run_ns PID: CPU time of the process's current threads in ns, from
# /proc/PID/task/*/schedstat (finer than the clock ticks of /proc/PID/stat;
# threads that already exited are not counted)
run_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# now_s: wall clock, seconds with microseconds
now_s() {
	echo "$EPOCHREALTIME"
}

# calc EXPR: awk arithmetic, printed with %.6g unless FMT is given
calc() {
	awk "BEGIN { printf \"${2:-%.6g}\n\", $1 }"
}

# median/spread/minimum read numbers, one per line or space-separated
median() {
	tr ' ' '\n' | grep . | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) print "n/a"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
spread() {
	tr ' ' '\n' | grep . | sort -g |
		awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (!NR) print "n/a"; else printf "%s–%s\n", lo, hi }'
}

# ratio A B [FMT]: A / B, "n/a" when either is missing or B is 0
ratio() {
	awk -v a="$1" -v b="$2" -v f="${3:-%.3f}" 'BEGIN {
		if (a == "n/a" || b == "n/a" || a == "" || b == "" || b + 0 == 0) print "n/a"
		else printf f "\n", a / b }'
}

# fmt NUMBER [FMT]: printf, n/a passes through
fmt() {
	awk -v a="$1" -v f="${2:-%.1f}" 'BEGIN { if (a == "n/a" || a == "") print "n/a"; else printf f "\n", a }'
}

# summary KEY VALUE...: one line for the targets table
summary() {
	echo "$*" >>"$SUMMARY"
}

# note TEXT: progress on stderr
note() {
	echo "bench: $*" >&2
}
