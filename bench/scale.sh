#!/usr/bin/env bash
# Benchmark 7, scale (issue 13): one workerd of N isolates, the shape of an
# edge host, for each N given.  bench/scale-gen.sh makes N workers (~80 KB,
# 400 functions each); every worker is warmed (GET /warm compiles all 400,
# so each is in the code logs and the perf map), two are kept busy by wrk,
# and in alternate rounds:
#   isoprof record --pid P --duration-ms 5000 --out-dir D
#       armed after launch, symbol tables loaded, post-processing (its own
#       summary line on stderr), peak RSS (/usr/bin/time);
#   perf record -g -F 1000 -p P for the same 5 s, then perf script, the peer
#       on the same perf map: start-up (launch to its first sample, perf's
#       clock set to CLOCK_REALTIME), post-processing (perf script's wall
#       time), peak RSS of each;
#   isoprof targets --json --pid P: wall time, peak RSS, and whether every
#       isolate is listed with its scripts and version id.
# Ratios are perf / isoprof within each round (above 1: isoprof cheaper).
# Also: the workerd's start-up and warm-up, the code logs on disk and the
# perf map.  Each workerd is stopped (and its perf map removed) before the
# next N.  Prints a markdown section.
#   bench/scale.sh [RUNS] [N...]        (default: 3 rounds; 10 100 300 1000)
#   SCALE_BASE_PORT   first port (default 20000, below the ephemeral range
#                     that clients such as wrk and curl bind); worker i on BASE+i
#   ISOPROF_BEFORE    another isoprof binary whose `targets` is timed in the
#                     same rounds (a before/after comparison)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-3}
shift
NS=${*:-10 100 300 1000}
BASE=${SCALE_BASE_PORT:-20000}
WIN_MS=5000
WARM_JOBS=4

WORK=$(mktemp -d /tmp/isoprof-scale.XXXXXX)
SPID=
scale_stop() {
	if [ -n "$SPID" ]; then
		kill "$SPID" 2>/dev/null
		wait "$SPID" 2>/dev/null
		rm -f "/tmp/perf-$SPID.map"
		SPID=
	fi
}
trap 'load_stop; scale_stop; rm -rf "$WORK"' EXIT
WORKERD=${WORKERD:-$(bash "$TOP/scripts/install-workerd.sh")}
for tool in wrk perf curl node; do
	command -v $tool >/dev/null || { echo "scale: $tool is needed (scripts/setup.sh)"; exit 0; }
done

# ports_free N: none of BASE..BASE+N-1 is listening
ports_free() {
	! ss -Hltn | awk -v lo="$BASE" -v hi="$((BASE + $1 - 1))" \
		'{ n = split($4, a, ":"); p = a[n] + 0 } p >= lo && p <= hi { f = 1 } END { exit !f }'
}

# scale_start N: generates and starts the workerd (SPID), waits for its
# last port, warms every worker; writes "START_S WARM_S" to $WORK/up
scale_start() {
	local n=$1 dir=$WORK/w$1 t0 t1 t2 last=$((BASE + $1 - 1))

	bash "$TOP/bench/scale-gen.sh" "$dir" "$n" "$BASE" || return 1
	t0=$(now_s)
	(cd "$dir" && exec "$WORKERD" serve config.capnp >"$dir/workerd.log" 2>&1) &
	SPID=$!
	until ss -Hltn "( sport = :$last )" | grep -q .; do
		kill -0 "$SPID" 2>/dev/null || { note "scale: workerd died: $(tail -3 "$dir/workerd.log")"; return 1; }
		[ "$(calc "(($(now_s) - $t0) > 600)" %d)" = 1 ] && { note "scale: workerd not up in 600 s"; return 1; }
		sleep 0.1
	done
	t1=$(now_s)
	seq "$BASE" "$last" | xargs -P "$WARM_JOBS" -I{} curl -s -o /dev/null --max-time 120 \
		"http://127.0.0.1:{}/warm"
	t2=$(now_s)
	echo "$(calc "$t1 - $t0" %.1f) $(calc "$t2 - $t1" %.1f)" >"$WORK/up"
}

# sizes DIR PID: "LOG_MB MAP_LINES MAP_MB"
sizes() {
	local logs map=/tmp/perf-$2.map
	logs=$(find "$1/v8logs" -name "isolate-0x*-$2-v8.log" -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	read -r lines bytes < <(wc -lc <"$map" 2>/dev/null || echo "n/a n/a")
	echo "$(calc "$logs / 1048576" %.1f) $lines $(fmt "$(calc "${bytes:-0} / 1048576")" %.1f)"
}

# isoprof_run: "ARMED_MS SYMBOLS_MS POST_MS" then "RSS_MB PROFILES HOT CPU_MS"
# (CPU_MS: the whole run's user + system time, what a busy machine's wall
# time hides)
isoprof_run() {
	local d=$WORK/rec
	rm -rf "$d"
	/usr/bin/time -f '%M %U %S' -o "$WORK/time.rec" "$ISOPROF" record --pid "$SPID" \
		--duration-ms "$WIN_MS" --out-dir "$d" >/dev/null 2>"$WORK/rec.err"
	sed -n 's/.*armed \([0-9.]*\) ms after launch (symbols loaded at \([0-9.]*\) ms), post-processing \([0-9.]*\) ms.*/\1 \2 \3/p' \
		"$WORK/rec.err" | grep . || { note "scale: record: $(head -2 "$WORK/rec.err")"; echo "n/a n/a n/a"; }
	read -r kb us ss < <(tail -1 "$WORK/time.rec")
	echo "$(calc "$kb / 1024" %.1f) $(find "$d" -name '*.pb.gz' 2>/dev/null | wc -l)" \
		"$(hot_on_top "$d") $(calc "($us + $ss) * 1e3" %.0f)"
	rm -rf "$d"
}

# hot_on_top DIR: how many of the two loaded workers (w0, w1) have one of
# their own functions among the top 5 of their own isolate's profile and
# none of the other's, read with go tool pprof (the third-party reader)
hot_on_top() {
	local i f top ok=0
	for i in 0 1; do
		f=$(find "$1" \( -name "w$i.js-*.pb.gz" -o -name "w$i-*.pb.gz" \) | head -1)
		[ -n "$f" ] || continue
		top=$(go tool pprof -top -nodecount=5 "$f" 2>/dev/null | sed -n '/flat%/,$p' | tail -n +2)
		if grep -Eq "(hot_w$i|w${i}_f[0-9]+)( |$)" <<<"$top" &&
			! grep -Eq "(hot_w$((1 - i))|w$((1 - i))_f[0-9]+)( |$)" <<<"$top"; then
			ok=$((ok + 1))
		fi
	done
	echo "$ok"
}

# perf_run: "FIRST_SAMPLE_MS SCRIPT_MS RECORD_RSS_MB SCRIPT_RSS_MB"
perf_run() {
	local t0 first s0 s1
	t0=$(now_s)
	/usr/bin/time -f '%M' -o "$WORK/time.perf" perf record -q -g -F 1000 -k CLOCK_REALTIME \
		-p "$SPID" -o "$WORK/perf.data" -- sleep $((WIN_MS / 1000)) >/dev/null 2>&1
	first=$(perf script -i "$WORK/perf.data" -F time --ns 2>/dev/null | tr -d ' :' | grep . |
		sort -g | head -1)
	s0=$(now_s)
	/usr/bin/time -f '%M' -o "$WORK/time.script" perf script -i "$WORK/perf.data" \
		>"$WORK/script.txt" 2>/dev/null
	s1=$(now_s)
	[ -n "$first" ] && calc "($first - $t0) * 1e3" %.0f || echo n/a
	echo "$(calc "($s1 - $s0) * 1e3" %.0f) $(calc "$(tail -1 "$WORK/time.perf") / 1024" %.1f)" \
		"$(calc "$(tail -1 "$WORK/time.script") / 1024" %.1f)"
	rm -f "$WORK/perf.data" "$WORK/script.txt"
}

# isolates whose version id is known and whose scripts include their worker's
COMPLETE_JS='
const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log(t[0].code_logs.filter((l) => l.version && l.version !== "unknown" &&
	(l.version_full || "").length === 64 && (l.scripts || []).some((s) =>
		!s.internal && /^w[0-9]+\.js$/.test(s.name) && s.sha256)).length);'

# targets_run BINARY N: "MS RSS_MB COMPLETE CPU_MS" (COMPLETE: isolates listed
# with a user script and a version id, of N; CPU_MS: user + system time, what
# the busy machine's wall time hides)
targets_run() {
	local t0 t1
	t0=$(now_s)
	/usr/bin/time -f '%M %U %S' -o "$WORK/time.tg" "$1" targets --json --pid "$SPID" \
		>"$WORK/targets.json" 2>"$WORK/targets.err"
	t1=$(now_s)
	read -r kb us ss < <(tail -1 "$WORK/time.tg")
	echo "$(calc "($t1 - $t0) * 1e3" %.0f) $(calc "$kb / 1024" %.1f)" \
		"$(node -e "$COMPLETE_JS" "$WORK/targets.json" 2>/dev/null || echo 0)" \
		"$(calc "($us + $ss) * 1e3" %.0f)"
	rm -f "$WORK/targets.json"
}

med() { echo "$@" | median; }
cell() { echo "$(med "$@") ($(echo "$@" | spread))"; }

declare -A R
DONE=()
for n in $NS; do
	ports_free "$n" || { note "scale: a port in $BASE..$((BASE + n - 1)) is taken"; continue; }
	note "scale: $n isolates: starting and warming ..."
	scale_start "$n" || { scale_stop; continue; }
	read -r st wm <"$WORK/up"
	read -r logmb maplines mapmb < <(sizes "$WORK/w$n" "$SPID")
	R[$n,up]="$st s / $wm s" R[$n,logs]=$logmb R[$n,map]="$maplines lines, $mapmb MB"
	load_start 3600 "http://127.0.0.1:$BASE/" "http://127.0.0.1:$((BASE + 1))/"
	sleep 1
	unset rcpu hots arm sym post rss prof pfirst pscr prrss psrss rpost rrss rfirst rarm tms trss tok tcpu bms brss bok bcpu
	declare -a rcpu hots arm sym post rss prof pfirst pscr prrss psrss rpost rrss rfirst rarm tms trss tok tcpu bms brss bok bcpu
	for r in $(seq "$RUNS"); do
		mapfile -t L < <(isoprof_run)
		read -r a s p <<<"${L[0]}"
		read -r m pr hot rc <<<"${L[1]}"
		arm+=("$a") sym+=("$s") post+=("$p") rss+=("$m") prof+=("$pr") hots+=("$hot") rcpu+=("$rc")
		mapfile -t L < <(perf_run)
		read -r f <<<"${L[0]}"
		read -r ps prr psr <<<"${L[1]}"
		pfirst+=("$f") pscr+=("$ps") prrss+=("$prr") psrss+=("$psr")
		rfirst+=("$(ratio "$f" "$s" %.2f)") rarm+=("$(ratio "$f" "$a" %.2f)") rpost+=("$(ratio "$ps" "$p" %.2f)")
		rrss+=("$(ratio "$psr" "$m" %.2f)")
		read -r t tr ok tc < <(targets_run "$ISOPROF" "$n")
		tms+=("$t") trss+=("$tr") tok+=("$ok") tcpu+=("$tc")
		if [ -n "${ISOPROF_BEFORE:-}" ]; then
			read -r bt btr bk bc < <(targets_run "$ISOPROF_BEFORE" "$n")
			bms+=("$bt") brss+=("$btr") bok+=("$bk") bcpu+=("$bc")
			note "scale: targets before: $bt ms ($bc ms CPU), $btr MB, $bk/$n complete"
		fi
		note "scale: $n isolates, round $r/$RUNS: record armed $a ms, symbols $s ms, post $p ms, $m MB, $rc ms CPU, hot on top $hot/2;" \
			"perf first sample $f ms, script $ps ms, $psr MB; targets $t ms ($tc ms CPU), $tr MB, $ok/$n complete"
	done
	load_stop
	scale_stop
	rm -rf "$WORK/w$n"
	R[$n,arm]=$(cell "${arm[@]}") R[$n,sym]=$(cell "${sym[@]}") R[$n,post]=$(cell "${post[@]}")
	R[$n,rcpu]=$(cell "${rcpu[@]}")
	R[$n,rss]=$(cell "${rss[@]}") R[$n,prof]=$(med "${prof[@]}")
	R[$n,hot]="$(echo "${hots[@]}" | tr ' ' '\n' | sort -g | head -1) of 2"
	R[$n,pfirst]=$(cell "${pfirst[@]}") R[$n,pscr]=$(cell "${pscr[@]}")
	R[$n,prrss]=$(cell "${prrss[@]}") R[$n,psrss]=$(cell "${psrss[@]}")
	R[$n,rfirst]=$(med "${rfirst[@]}") R[$n,rarm]=$(med "${rarm[@]}") R[$n,rpost]=$(med "${rpost[@]}") R[$n,rrss]=$(med "${rrss[@]}")
	R[$n,tcpu]=$(cell "${tcpu[@]}")
	R[$n,tms]=$(cell "${tms[@]}") R[$n,trss]=$(cell "${trss[@]}") R[$n,tok]=$(echo "${tok[@]}" | tr ' ' '\n' | sort -g | head -1)
	if [ -n "${ISOPROF_BEFORE:-}" ]; then
		R[$n,bcpu]=$(cell "${bcpu[@]}")
		R[$n,bms]=$(cell "${bms[@]}") R[$n,brss]=$(cell "${brss[@]}")
		R[$n,bok]=$(echo "${bok[@]}" | tr ' ' '\n' | sort -g | head -1)
	fi
	summary "scale_record_armed_ms_$n" "$(med "${arm[@]}")"
	summary "scale_record_symbols_ms_$n" "$(med "${sym[@]}")"
	summary "scale_record_post_ms_$n" "$(med "${post[@]}")"
	summary "scale_record_rss_mb_$n" "$(med "${rss[@]}")"
	summary "scale_record_cpu_ms_$n" "$(med "${rcpu[@]}")"
	summary "scale_targets_ms_$n" "$(med "${tms[@]}")"
	summary "scale_targets_rss_mb_$n" "$(med "${trss[@]}")"
	summary "scale_targets_cpu_ms_$n" "$(med "${tcpu[@]}")"
	DONE+=("$n")
done

[ ${#DONE[@]} -gt 0 ] || { echo "scale: no workerd could be measured"; exit 0; }
hdr="| |" sep="|---|"
for n in "${DONE[@]}"; do
	hdr+=" $n: isoprof | $n: perf | $n: perf / isoprof |"
	sep+="---|---|---|"
done
row() {
	local i p r line="| $1 |"
	shift
	for n in "${DONE[@]}"; do
		i=${R[$n,$1]:-} p=${R[$n,$2]:-} r=${R[$n,$3]:-}
		line+=" ${i:-–} | ${p:-–} | ${r:-–} |"
	done
	echo "$line"
}
echo "$hdr"
echo "$sep"
row "workerd: start-up / warm-up (a GET /warm per worker)" up none none
row "code logs on disk, MB" logs none none
row "perf map" map none none
row "start-up, ms: record armed · perf record's first sample" arm pfirst rarm
row "start-up, ms: record's symbol tables loaded · perf record's first sample" sym pfirst rfirst
row "post-processing, ms (record's own · perf script)" post pscr rpost
row "peak RSS, MB (record · perf script)" rss psrss rrss
row "record: CPU ms (user + system, the whole run)" rcpu none none
row "perf record: peak RSS, MB" none prrss none
row "record: profiles written" prof none none
row "record: loaded workers with their own hot functions on top (worst round)" hot none none
row "targets --json: ms" tms none none
row "targets --json: CPU ms (user + system)" tcpu none none
row "targets --json: peak RSS, MB" trss none none
row "targets: isolates listed with scripts and version id (worst round)" tok none none
if [ -n "${ISOPROF_BEFORE:-}" ]; then
	row "targets before (\`$ISOPROF_BEFORE\`): ms" bms none none
	row "targets before: CPU ms" bcpu none none
	row "targets before: peak RSS, MB" brss none none
	row "targets before: isolates complete" bok none none
fi
echo
echo "Each N: one workerd of N workers from \`bench/scale-gen.sh\` (~80 KB, 400 functions each," \
	"all warmed), wrk -t1 -c2 on workers 0 and 1 throughout; $RUNS rounds of record" \
	"(--duration-ms $WIN_MS --out-dir), then perf record -g -F 1000 for the same window and" \
	"perf script, then targets. Cells: median (min–max); ratios are perf / isoprof per round," \
	"median. perf record's start-up is from its launch to its first sample (CLOCK_REALTIME);" \
	"post-processing is perf script's wall time on the same perf map."
exit 0
