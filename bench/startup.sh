#!/usr/bin/env bash
# Benchmark 3, start-up: from launching `isoprof record` against the busy
# demo workerd to sampling armed (the BPF program attached on every CPU)
# and to ready (armed and the symbol tables of the 160 MB workerd binary
# loaded: the capture loop's first poll).  isoprof prints no such event, so
# the times come from strace (seccomp-filtered to execve, bpf and epoll_wait:
# the launch, the BPF_LINK_CREATE per CPU, the first poll).  Peer, in
# alternate runs: `perf record -g` from its launch (execve, also by strace)
# to its first sample (perf's clock set to CLOCK_REALTIME with -k).
# Warm: the files are in the page cache (one unrecorded run first).  Cold:
# `echo 3 > /proc/sys/vm/drop_caches` before each run.
#   bench/startup.sh [WARM_RUNS] [COLD_RUNS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-5}
COLD=${2:-2}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; bench_demo_stop; rm -rf "$WORK"' EXIT
bench_demo "$WORK/wd" || { echo "startup: the demo did not start"; exit 1; }
command -v strace >/dev/null || { echo "startup: strace is needed (apt-get install strace)"; exit 0; }

# isoprof_run: prints "ARMED_MS READY_MS SELF_ARMED_MS" (the last is what
# isoprof itself reports: "armed N ms after launch", from its main())
isoprof_run() {
	strace --seccomp-bpf -f -ttt -e trace=execve,bpf,epoll_wait -o "$WORK/st.txt" \
		"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1000 -o "$WORK/s.pb.gz" \
		>/dev/null 2>"$WORK/iso.err"
	awk '$3 ~ /^execve\(/ && !t0 { t0 = $2 }
	     $3 ~ /^bpf\(BPF_LINK_CREATE/ && $NF ~ /^[0-9]+$/ && !ready { armed = $2 }
	     $3 ~ /^epoll_wait\(/ && !ready { ready = $2 }
	     END { if (!t0 || !armed || !ready) printf "n/a n/a "
		   else printf "%.1f %.1f ", (armed - t0) * 1e3, (ready - t0) * 1e3 }' "$WORK/st.txt"
	sed -n 's/.*, armed \([0-9.]*\) ms after launch.*/\1/p' "$WORK/iso.err" | grep . || echo n/a
}

# perf_run: prints "FIRST_SAMPLE_MS"
perf_run() {
	local t0 first
	strace --seccomp-bpf -ttt -e trace=execve -o "$WORK/st.txt" \
		perf record -q -g -F 1000 -k CLOCK_REALTIME -p "$WORKERD_PID" -o "$WORK/perf.data" \
		-- sleep 1 >/dev/null 2>&1
	t0=$(awk '$2 ~ /^execve\(/ { print $1; exit }' "$WORK/st.txt")
	first=$(perf script -i "$WORK/perf.data" -F time --ns 2>/dev/null | tr -d ' :' | grep . |
		sort -g | head -1)
	[ -n "$t0" ] && [ -n "$first" ] || { echo n/a; return; }
	calc "($first - $t0) * 1e3" %.1f
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

load_start 3600 "http://127.0.0.1:$PORT_A/"
sleep 0.5
isoprof_run >/dev/null
perf_run >/dev/null
declare -a arm rdy self prf rat cold_arm cold_rdy cold_prf
for _ in $(seq "$RUNS"); do
	read -r a r m < <(isoprof_run)
	p=$(perf_run)
	arm+=("$a") rdy+=("$r") self+=("$m") prf+=("$p") rat+=("$(ratio "$r" "$p" %.2f)")
done
for _ in $(seq "$COLD"); do
	drop_caches
	read -r a r m < <(isoprof_run)
	drop_caches
	p=$(perf_run)
	cold_arm+=("$a") cold_rdy+=("$r") cold_prf+=("$p")
done
load_stop
note "startup: done"

med() { echo "$@" | median; }
sp() { echo "$@" | spread; }
echo "| | isoprof: armed | isoprof: armed + symbols loaded | perf record -g: first sample | ratio isoprof ready / perf (same round) |"
echo "|---|---|---|---|---|"
echo "| warm page cache, $RUNS runs | $(med "${arm[@]}") ms ($(sp "${arm[@]}")) |" \
	"$(med "${rdy[@]}") ms ($(sp "${rdy[@]}")) | $(med "${prf[@]}") ms ($(sp "${prf[@]}")) |" \
	"$(med "${rat[@]}") ($(sp "${rat[@]}")) |"
if [ "$COLD" -gt 0 ]; then
	echo "| cold (drop_caches), $COLD runs | $(med "${cold_arm[@]}") ms ($(sp "${cold_arm[@]}")) |" \
		"$(med "${cold_rdy[@]}") ms ($(sp "${cold_rdy[@]}")) |" \
		"$(med "${cold_prf[@]}") ms ($(sp "${cold_prf[@]}")) | |"
fi
echo
echo "isoprof's own figure (\"armed N ms after launch\", counted from its main(), without exec and" \
	"dynamic linking and without strace): $(med "${self[@]}") ms ($(sp "${self[@]}")) warm."
echo
echo "From the launch (execve) of \`isoprof record --pid PID\` / \`perf record -g -F 1000 -p PID\`" \
	"on the demo workerd under load (wrk on alpha). Times from strace with a seccomp filter" \
	"(only execve, bpf and epoll_wait stop the tracee: about 40 stops, well under a millisecond)."
summary startup_ready_ms "$(med "${rdy[@]}")"
summary startup_armed_ms "$(med "${arm[@]}")"
summary startup_cold_ready_ms "$(med "${cold_rdy[@]}")"
summary startup_perf_ms "$(med "${prf[@]}")"
exit 0
