#!/usr/bin/env bash
# Benchmark 2, pipeline, and the capture half of benchmark 5, loss: a
# capture at 1000 Hz on all CPUs of the busy demo (wrk -t1 -c2 on both
# workers, so both cores are busy), then the time from the end of the window
# to the profile written, and isoprof's peak RSS.  Peer, in alternate runs
# over the same window length: `perf record -g` ending with the window, then
# `perf script` (which reads V8's perf map) writing the symbolized stacks;
# its post-processing is perf record's own end of run plus perf script.
# Prints a markdown section.
#   bench/pipeline.sh [RUNS] [WINDOW_SECONDS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
WIN=${2:-50}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; bench_demo_stop; rm -rf "$WORK"' EXIT
bench_demo "$WORK/wd" || { echo "pipeline: the demo did not start"; exit 1; }

# window_end FILE: end of isoprof's window, Unix seconds: the profile's
# time_nanos (wall clock at the start) plus the window its comment states
window_end() {
	local raw start len
	raw=$(go tool pprof -raw "$1" 2>/dev/null | head -20)
	start=$(echo "$raw" | sed -n 's/^Time: \(.*\) UTC$/\1/p')
	len=$(echo "$raw" | sed -n 's/^Comment: window: .* + \([0-9.]*\) s$/\1/p')
	[ -n "$start" ] && [ -n "$len" ] || { echo n/a; return; }
	calc "$(date -d "$start" +%s.%N) + $len" %.6f
}

# isoprof_run: prints "POST_S RSS_MB OWN_POST_MS LOST SAMPLES"
isoprof_run() {
	local t_exit end
	"/usr/bin/time" -f '%M' -o "$WORK/time.iso" "$ISOPROF" record --frequency 1000 \
		--pid "$WORKERD_PID" --duration-ms $((WIN * 1000)) -o "$WORK/p.pb.gz" 2>"$WORK/iso.err"
	t_exit=$(now_s)
	end=$(window_end "$WORK/p.pb.gz")
	if [ "$end" = n/a ]; then
		note "pipeline: isoprof wrote no readable profile: $(head -3 "$WORK/iso.err")"
		echo "n/a n/a n/a n/a n/a"
		return
	fi
	awk -v post="$(calc "$t_exit - $end" %.3f)" -v rss="$(tail -1 "$WORK/time.iso")" '
		/^isoprof: wrote/ { for (i = 1; i <= NF; i++) { if ($i == "of") n = $(i + 1)
			if ($i == "post-processing") ms = $(i + 1) } }
		/^isoprof: lost/ { l = $3 }
		END { printf "%s %.1f %s %d %d\n", post, rss / 1024, ms, l, n }' "$WORK/iso.err"
	rm -f "$WORK/p.pb.gz"
}

# perf_run: prints "POST_S RECORD_END_S SCRIPT_S SCRIPT_RSS_MB SAMPLES"
perf_run() {
	local t_exit end t_script0 t_script1 n
	perf record -q -g -F 1000 -p "$WORKERD_PID" -o "$WORK/perf.data" -- \
		bash -c "sleep $WIN; echo \$EPOCHREALTIME >'$WORK/end'" >/dev/null 2>"$WORK/perf.err"
	t_exit=$(now_s)
	end=$(cat "$WORK/end" 2>/dev/null)
	t_script0=$(now_s)
	"/usr/bin/time" -f '%M' -o "$WORK/time.script" perf script -i "$WORK/perf.data" \
		>"$WORK/script.txt" 2>/dev/null
	t_script1=$(now_s)
	# with -g, perf script ends each sample with an empty line
	n=$(grep -c '^$' "$WORK/script.txt")
	awk -v e="$(calc "$t_exit - $end" %.3f)" -v s="$(calc "$t_script1 - $t_script0" %.3f)" \
		-v rss="$(tail -1 "$WORK/time.script")" -v n="$n" \
		'BEGIN { printf "%.3f %.3f %.3f %.1f %d\n", e + s, e, s, rss / 1024, n }'
	rm -f "$WORK/perf.data" "$WORK/script.txt"
}

load_start $(((WIN + 30) * RUNS * 3)) "http://127.0.0.1:$PORT_A/" "http://127.0.0.1:$PORT_B/"
sleep 1
declare -a ipost irss iown plost pall ppost prec pscr prss psam rat
for run in $(seq "$RUNS"); do
	read -r a b c d e < <(isoprof_run)
	ipost+=("$a") irss+=("$b") iown+=("$c")
	[ "$d" != n/a ] && echo "loss-pipeline $d $e" >>"$SUMMARY"
	plost+=("$d") pall+=("$e")
	read -r f g h i j < <(perf_run)
	ppost+=("$f") prec+=("$g") pscr+=("$h") prss+=("$i") psam+=("$j")
	rat+=("$(ratio "$f" "$a" %.2f)")
	note "pipeline: round $run/$RUNS done (isoprof $a s, perf $f s)"
done
load_stop

med() { echo "$@" | median; }
echo "| | end of window → symbolized profile written: median (min–max) | peak RSS | samples |"
echo "|---|---|---|---|"
echo "| isoprof record | $(med "${ipost[@]}") s ($(echo "${ipost[@]}" | spread)); of which writing the profile $(med "${iown[@]}") ms |" \
	"$(med "${irss[@]}") MB ($(echo "${irss[@]}" | spread)) | $(med "${pall[@]}") per run |"
echo "| perf record -g + perf script | $(med "${ppost[@]}") s ($(echo "${ppost[@]}" | spread)): perf record's end $(med "${prec[@]}") s, perf script $(med "${pscr[@]}") s |" \
	"perf script $(med "${prss[@]}") MB | $(med "${psam[@]}") per run |"
echo "| **ratio perf / isoprof** (same round) | **$(med "${rat[@]}")** ($(echo "${rat[@]}" | spread)) | | |"
echo
echo "Window ${WIN} s at 1000 Hz per CPU, $RUNS rounds (isoprof, then perf); load: wrk -t1 -c2 on" \
	"both workers throughout. isoprof's window end is the profile's own start time plus the" \
	"window it states; perf's is when its \`sleep $WIN\` exits. Peak RSS from /usr/bin/time."
summary pipeline_ratio "$(med "${rat[@]}")"
summary pipeline_rss_mb "$(med "${irss[@]}")"
summary pipeline_rss_max_mb "$(echo "${irss[@]}" | tr ' ' '\n' | sort -g | tail -1)"
summary pipeline_window_s "$WIN"
exit 0
