#!/usr/bin/env bash
# Benchmark 7, the cost of the V8 flags isoprof asks for, paid by the target
# whether or not anything profiles it: workerd started with no flags, each
# flag group, and all of them, side by side:
#   none       v8Flags = []
#   perfbasic  --perf-basic-prof
#   perfmap    --perf-basic-prof --interpreted-frames-native-stack
#   codelog    --log-code --logfile-per-isolate --logfile=DIR/v8.log
#   codesrc    codelog + --log-source-code
#   all        perfmap + codesrc (what isoprof asks for)
# Two workloads, every variant in turn in each round (none first):
#   demo   the bundled demo (scripts/demo/), warmed up, then wrk -t1 -c2 on
#          alpha for SECONDS: CPU per request (/proc/PID/stat utime+stime
#          over the window / wrk's requests), VmRSS after the load, and the
#          bytes the perf map and code logs grew over the window, per hour;
#   scale  bench/scale-gen.sh workerds of N_LO and N_HI workers (~80 KB,
#          400 functions each): launch to every port answering, GET /warm
#          on each worker in turn (its first request compiles its 400
#          functions), then VmRSS and the perf map + code log bytes.  Per
#          added isolate: (figure at N_HI - figure at N_LO) / (N_HI - N_LO),
#          which cancels what the process pays once.
# Ratios are to the no-flags run of the same round; the tables give
# medians and (min–max).  Prints a markdown section.
#   bench/flags.sh [RUNS] [SECONDS] [SCALE_RUNS] [N_LO] [N_HI]
# (defaults 3 5 2 10 50; with QUICK set 1 3 1 5 25)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
if [ -n "${QUICK:-}" ]; then
	set -- "${1:-1}" "${2:-3}" "${3:-1}" "${4:-5}" "${5:-25}"
fi
RUNS=${1:-3}
SECS=${2:-5}
SRUNS=${3:-2}
NLO=${4:-10}
NHI=${5:-50}
# ports: demo alpha and beta, then the scale workers from FLAGS_PORT + 10;
# below the ephemeral range (32768-60999), where client sockets can hold one
PORT=${FLAGS_PORT:-24000}
read -ra VARIANTS <<<"${VARIANTS:-none perfbasic perfmap codelog codesrc all}"
declare -A label=(
	[none]="no flags"
	[perfbasic]="--perf-basic-prof"
	[perfmap]="--perf-basic-prof --interpreted-frames-native-stack"
	[codelog]="--log-code --logfile-per-isolate"
	[codesrc]="--log-code --log-source-code --logfile-per-isolate"
	[all]="all five (isoprof's request)"
)

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
# shellcheck disable=SC2329
cleanup() {
	kill $(jobs -p) 2>/dev/null
	stop_wd
	rm -rf "$WORK"
}
trap cleanup EXIT

# flags_of VARIANT LOGDIR: the v8Flags list's contents
flags_of() {
	local pm='"--perf-basic-prof", ' ifns='"--interpreted-frames-native-stack", '
	local cl="\"--log-code\", \"--logfile-per-isolate\", \"--logfile=$2/v8.log\", "
	local src='"--log-source-code", '
	case $1 in
	none) echo "" ;;
	perfbasic) echo "$pm" ;;
	perfmap) echo "$pm$ifns" ;;
	codelog) echo "$cl" ;;
	codesrc) echo "$cl$src" ;;
	all) echo "$pm$ifns$cl$src" ;;
	esac
}

# with_flags VARIANT LOGDIR <IN >OUT: a workerd config with its v8Flags block
# (from "v8Flags = [" to the next "],") replaced
with_flags() {
	awk -v f="$(flags_of "$1" "$2")" '
		/v8Flags = \[/ { print "  v8Flags = [ " f "],"; skip = 1; next }
		skip { if (/\],/) skip = 0; next }
		{ print }'
}

WD_PID=
# start_wd DIR CONFIG: workerd serving DIR/CONFIG; WD_PID, WD_T0 (launch time)
start_wd() {
	WD_T0=$(now_s)
	(cd "$1" && exec "$WORKERD" serve "$2") >"$1/workerd.log" 2>&1 &
	WD_PID=$!
}

stop_wd() {
	[ -n "$WD_PID" ] || return 0
	kill "$WD_PID" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$WD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$WD_PID" 2>/dev/null
	wait "$WD_PID" 2>/dev/null
	# V8 leaves its perf map behind
	rm -f "/tmp/perf-$WD_PID.map"
	WD_PID=
}

# wait_port PORT: until 127.0.0.1:PORT accepts (20 s at most)
wait_port() {
	for _ in $(seq 2000); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$WD_PID" 2>/dev/null || return 1
		sleep 0.01
	done
	return 1
}

# log_bytes LOGDIR: bytes of the workerd's perf map and code logs
log_bytes() {
	local pm=0
	[ -f "/tmp/perf-$WD_PID.map" ] && pm=$(stat -c %s "/tmp/perf-$WD_PID.map")
	echo "$pm $(cat "$1"/isolate-*.log 2>/dev/null | wc -c)"
}

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$WD_PID/status" 2>/dev/null || echo 0
}

# demo_run VARIANT: prints "CPU_US_PER_REQ RSS_MB PERFMAP_B_PER_H CODELOG_B_PER_H"
demo_run() {
	local v=$1 d=$WORK/demo-$1 pa=$PORT pb=$((PORT + 1)) t0 t1 w0 w1 b0 b1 reqs
	rm -rf "$d"
	mkdir -p "$d/v8logs"
	cp "$DEMO_SRC"/*.js "$d/"
	sed -e "s|@PORT_ALPHA@|$pa|" -e "s|@PORT_BETA@|$pb|" "$DEMO_SRC/config.capnp.in" |
		with_flags "$v" "$d/v8logs" >"$d/config.capnp"
	start_wd "$d" config.capnp
	if ! wait_port "$pa" || ! wait_port "$pb"; then
		note "flags: demo ($v) did not start: $(tail -3 "$d/workerd.log")"
		stop_wd
		echo "n/a n/a n/a n/a"
		return
	fi
	wrk -t1 -c2 -d1s "http://127.0.0.1:$pa/" >/dev/null 2>&1
	wrk -t1 -c2 -d1s "http://127.0.0.1:$pb/" >/dev/null 2>&1
	read -r b0 c0 < <(log_bytes "$d/v8logs")
	w0=$(now_s)
	t0=$(cpu_ns "$WD_PID")
	wrk -t1 -c2 -d"${SECS}s" "http://127.0.0.1:$pa/" >"$d/wrk.txt" 2>&1
	t1=$(cpu_ns "$WD_PID")
	w1=$(now_s)
	read -r b1 c1 < <(log_bytes "$d/v8logs")
	rss=$(rss_kb)
	stop_wd
	reqs=$(awk '/requests in/ { print $1 }' "$d/wrk.txt")
	awk -v d=$((t1 - t0)) -v r="${reqs:-0}" -v rss="$rss" -v w="$(calc "$w1 - $w0")" \
		-v pm=$((b1 - b0)) -v cl=$((c1 - c0)) \
		'BEGIN { if (!r) { print "n/a n/a n/a n/a"; exit }
			 printf "%.2f %.1f %.0f %.0f\n", d / 1e3 / r, rss / 1024, pm / w * 3600, cl / w * 3600 }'
}

# scale_run VARIANT N: prints "START_MS WARM_MS RSS_MB PERFMAP_B CODELOG_B"
# for a workerd of N generated workers: launch to all ports answering, the
# first request of every worker (GET /warm, in turn), then RSS and bytes
scale_run() {
	local v=$1 n=$2 d=$WORK/scale-$2 base=$((PORT + 10)) t_up t_w0 t_w1 i pm cl
	rm -rf "$d/v8logs"
	mkdir -p "$d/v8logs"
	with_flags "$v" "$d/v8logs" <"$d/config.capnp" >"$d/config-$v.capnp"
	start_wd "$d" "config-$v.capnp"
	for ((i = 0; i < n; i++)); do
		if ! wait_port $((base + i)); then
			note "flags: scale $n ($v) did not start: $(tail -3 "$d/workerd.log")"
			stop_wd
			echo "n/a n/a n/a n/a n/a"
			return
		fi
	done
	t_up=$(now_s)
	t_w0=$t_up
	for ((i = 0; i < n; i++)); do
		curl -sf -o /dev/null "http://127.0.0.1:$((base + i))/warm"
	done
	t_w1=$(now_s)
	read -r pm cl < <(log_bytes "$d/v8logs")
	rss=$(rss_kb)
	stop_wd
	awk -v up="$(calc "($t_up - $WD_T0) * 1000")" -v w="$(calc "($t_w1 - $t_w0) * 1000")" \
		-v rss="$rss" -v pm="$pm" -v cl="$cl" \
		'BEGIN { printf "%.1f %.1f %.1f %d %d\n", up, w, rss / 1024, pm, cl }'
}

for port in $PORT $((PORT + 1)) $((PORT + 10)) $((PORT + 10 + NHI - 1)); do
	if ss -Hltn "( sport = :$port )" | grep -q .; then
		echo "flags: port $port is taken (FLAGS_PORT=... picks another range)"
		exit 0
	fi
done
bash "$TOP/bench/scale-gen.sh" "$WORK/scale-$NLO" "$NLO" $((PORT + 10)) || exit 1
bash "$TOP/bench/scale-gen.sh" "$WORK/scale-$NHI" "$NHI" $((PORT + 10)) || exit 1

declare -A cpu rss pmh clh cpur st wm srss spm scl
for run in $(seq "$RUNS"); do
	base=
	for v in "${VARIANTS[@]}"; do
		read -r c r p l < <(demo_run "$v")
		[ "$v" = none ] && base=$c
		cpu[$v]="${cpu[$v]:-} $c" rss[$v]="${rss[$v]:-} $r"
		pmh[$v]="${pmh[$v]:-} $p" clh[$v]="${clh[$v]:-} $l"
		cpur[$v]="${cpur[$v]:-} $(ratio "$c" "${base:-n/a}" %.4f)"
	done
	note "flags: demo round $run/$RUNS done"
done
for run in $(seq "$SRUNS"); do
	for v in "${VARIANTS[@]}"; do
		read -r s1 w1 r1 p1 c1 < <(scale_run "$v" "$NLO")
		read -r s2 w2 r2 p2 c2 < <(scale_run "$v" "$NHI")
		per() { awk -v a="$1" -v b="$2" -v k=$((NHI - NLO)) -v f="$3" \
			'BEGIN { if (a == "n/a" || b == "n/a") print "n/a"; else printf f "\n", (b - a) / k }'; }
		st[$v]="${st[$v]:-} $(per "$s1" "$s2" %.2f)"
		wm[$v]="${wm[$v]:-} $(awk -v w="$w2" -v n="$NHI" 'BEGIN { if (w == "n/a") print "n/a"; else printf "%.2f\n", w / n }')"
		srss[$v]="${srss[$v]:-} $(per "$r1" "$r2" %.2f)"
		spm[$v]="${spm[$v]:-} $(per "$p1" "$p2" %.0f)"
		scl[$v]="${scl[$v]:-} $(per "$c1" "$c2" %.0f)"
	done
	note "flags: scale round $run/$SRUNS done"
done

# cell VALUES [FMT]: median (min–max)
cell() {
	echo "$(fmt "$(echo "$1" | median)" "${2:-%.1f}") ($(echo "$1" | spread))"
}
# ratio_cell VALUES BASE_VALUES: the median's ratio to the no-flags median
ratio_cell() {
	ratio "$(echo "$1" | median)" "$(echo "$2" | median)" %.2f
}
human() {
	awk -v b="$1" 'BEGIN { if (b == "n/a") print b; else if (b >= 1048576) printf "%.1f MB\n", b / 1048576
		else if (b >= 1024) printf "%.0f KB\n", b / 1024; else printf "%d B\n", b }'
}

echo "Steady load (the demo, wrk -t1 -c2 -d${SECS}s on alpha after 1 s on each worker; $RUNS rounds):"
echo
echo "| flags | CPU µs per request | ratio to no flags (same round) | VmRSS after load, MB | perf map growth per hour | code log growth per hour |"
echo "|---|---|---|---|---|---|"
for v in "${VARIANTS[@]}"; do
	m=$(echo "${cpur[$v]}" | median)
	echo "| ${label[$v]} | $(cell "${cpu[$v]}" %.2f) | $(fmt "$m" %.3f) ($(echo "${cpur[$v]}" | spread)) |" \
		"$(cell "${rss[$v]}") | $(human "$(echo "${pmh[$v]}" | median)") |" \
		"$(human "$(echo "${clh[$v]}" | median)") |"
	summary "flags_cpu_ratio_$v" "$m"
	summary "flags_rss_mb_$v" "$(echo "${rss[$v]}" | median)"
done
echo
echo "Per added isolate (workerds of $NLO and $NHI generated workers, ~80 KB and 400 functions" \
	"each; figure at $NHI minus figure at $NLO, over $((NHI - NLO)); $SRUNS rounds):"
echo
echo "| flags | start-up ms per isolate | ratio | first request per worker (compiles 400 functions), ms | ratio | VmRSS per isolate, MB | perf map per isolate | code logs per isolate |"
echo "|---|---|---|---|---|---|---|---|"
for v in "${VARIANTS[@]}"; do
	echo "| ${label[$v]} | $(cell "${st[$v]}" %.2f) | $(ratio_cell "${st[$v]}" "${st[none]}") |" \
		"$(cell "${wm[$v]}" %.2f) | $(ratio_cell "${wm[$v]}" "${wm[none]}") |" \
		"$(cell "${srss[$v]}" %.2f) | $(human "$(echo "${spm[$v]}" | median)") |" \
		"$(human "$(echo "${scl[$v]}" | median)") |"
	summary "flags_start_ms_per_isolate_$v" "$(echo "${st[$v]}" | median)"
	summary "flags_perfmap_b_per_isolate_$v" "$(echo "${spm[$v]}" | median)"
	summary "flags_codelog_b_per_isolate_$v" "$(echo "${scl[$v]}" | median)"
done
echo
echo "Each run starts its own workerd with the variant's \`v8Flags\` (V8 flags are per" \
	"process) and stops it after; variants alternate within a round. Start-up: launch to" \
	"every worker's port accepting (workerd compiles every worker's bundle before it" \
	"listens), per added isolate. First request: \`GET /warm\` on each worker in turn, which" \
	"runs its 400 functions once (lazy compilation, and the perf map and code log lines for" \
	"each). Growth per hour: bytes the files grew during the steady window, scaled to an hour" \
	"(code that is already compiled writes nothing; what grows is recompilation)."
exit 0
