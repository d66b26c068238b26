#!/usr/bin/env bash
# Benchmark 11, causal accuracy on real code.
# node 20 runs a large real npm codebase (TypeScript's checker; acorn's
# parser: scripts/install-codebases.sh pins them) in a steady loop, in a
# copy where one function first does COST steps of an integer hash
# (tests/fixtures/causal/patch.js).  workerd runs the acorn cases too
# (tests/fixtures/causal/worker.js: a worker that loads the same acorn.js,
# unchanged or patched, and per request does one iteration of node's loop,
# two parses of TypeScript's typingsInstaller.js, a text module; sequential
# requests, wrk with one connection).  Only acorn on workerd: TypeScript's
# compiler reads its lib .d.ts files through a filesystem workerd does not
# give a worker.  The truth: the cost's share of the JS thread's CPU time
# (node's main thread; workerd's main thread, which runs its isolate),
# (T_changed - T_unchanged) / T_changed, from alternating runs of both
# variants in fresh processes (schedstat around each iteration or request
# after a warm-up; medians; the range over the pairs).
# Then the changed variant is profiled, RUNS times each:
#   code log   node --perf-basic-prof --interpreted-frames-native-stack
#              --log-code --log-source-code; workerd v8Flags "--perf-basic-prof",
#              "--log-code", "--logfile-per-isolate", "--logfile=DIR/v8.log"
#   V8         node only: the same with --inspect, `isoprof record --v8`:
#              V8's own profiler through node's inspector (a run of its own:
#              V8's sampling costs the main thread time, which lowers every share)
#   perf map   only --perf-basic-prof (node: and --interpreted-frames-native-stack)
#   no flags   no V8 flag; JS named from the heap (isoprof calibrate of the
#              runtime's binary), inlined functions placed by the code
#              objects (node: source positions; workerd: deoptimization data)
# and the function's flat share of the JS thread's samples is read with
# `isoprof top` (pprof's numbers; its inlined frames count).  "inlined" is how
# pprof marks the function in the code-log profile: inline (every sample in
# code that inlined it), partial, no.  ISOPROF_BEFORE=path/to/isoprof adds a
# code-log column for that binary (a before/after comparison).
# Prints a markdown section, one row per case and runtime.
#   bench/causal.sh [RUNS] [SECONDS] [CASE...]   CASE: codebase:function:cost
#   RUNTIMES="node workerd" (the default): the runtimes to run; workerd
#   runs the acorn cases only.  CAUSAL_KEEP=DIR keeps each profile run's
#   files (record's stderr, the profiles, the code log) in DIR
set -uo pipefail
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/fixtures/causal/causal-lib.sh"
RUNS=${1:-3}
SECS=${2:-8}
shift 2 2>/dev/null || shift $#
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(
	typescript:getMergedSymbol:300
	typescript:isArrayOrTupleType:300
	acorn:fullCharCodeAtPos:10
	acorn:isIdentifierChar:10
	acorn:readWord1:300
)
BEFORE=${ISOPROF_BEFORE:-}
RUNTIMES=${RUNTIMES:-node workerd}
has_runtime() { [[ " $RUNTIMES " == *" $1 "* ]]; }

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'causal_stop; kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
NM=$(bash "$TOP/scripts/install-codebases.sh") || { echo "causal: cannot install the codebases"; exit 1; }
STATE=$WORK/state
# the calibration run's runtime runs as nobody, in a directory under TMPDIR
chmod 0711 "$WORK"
mkdir -p "$WORK/tmp"
if has_runtime node; then
	TMPDIR=$WORK/tmp "$ISOPROF" calibrate --state-dir "$STATE" "$(command -v node)" \
		>"$WORK/calibrate.out" 2>&1 ||
		note "causal: calibrate node failed, its no-flags column is n/a: $(tail -1 "$WORK/calibrate.out")"
fi
if has_runtime workerd; then
	if WD=$(causal_workerd_bin); then
		TMPDIR=$WORK/tmp "$ISOPROF" calibrate --state-dir "$STATE" "$WD" \
			>"$WORK/calibrate-wd.out" 2>&1 ||
			note "causal: calibrate workerd failed, its no-flags column is n/a: $(tail -1 "$WORK/calibrate-wd.out")"
	else
		note "causal: no workerd (scripts/install-workerd.sh): its rows are left out"
		RUNTIMES=${RUNTIMES//workerd/}
	fi
fi

# profile RUNTIME CODEBASE CHANGED FN MODE [BINARY]: prints "SHARE HOW [V8SHARE]"
profile() {
	local rt=$1 cb=$2 changed=$3 fn=$4 mode=$5 bin=${6:-$ISOPROF} out=$WORK/p-$5 port pid files
	local -a flags=()
	rm -rf "$out"
	mkdir -p "$out/log"
	if [ "$rt" = workerd ]; then
		case $mode in
		log | before) flags=($CAUSAL_WD_FLAGS_LOG "--logfile=$out/log/v8.log") ;;
		map) flags=($CAUSAL_WD_FLAGS_MAP) ;;
		none) flags=() ;;
		*) echo "n/a n/a n/a"; return ;;
		esac
		causal_start_workerd "$changed" "$NM" "${flags[@]}" || { echo "n/a n/a n/a"; return; }
		causal_load $((SECS + 30))
	else
		case $mode in
		v8) flags=($CAUSAL_FLAGS_LOG "--logfile=$out/log/v8.log" --inspect=127.0.0.1:0) ;;
		log | before) flags=($CAUSAL_FLAGS_LOG "--logfile=$out/log/v8.log") ;;
		map) flags=($CAUSAL_FLAGS_MAP) ;;
		none) flags=() ;;
		esac
		causal_start "$cb" "$changed" "$NM" "${flags[@]}" || { echo "n/a n/a n/a"; return; }
	fi
	pid=$CAUSAL_PID
	if [ "$mode" = v8 ]; then
		port=$(sed -n 's|^Debugger listening on ws://127.0.0.1:\([0-9]*\)/.*|\1|p' "$CAUSAL_OUT" | head -1)
		"$bin" record -q --pid "$pid" --duration-ms $((SECS * 1000)) --v8 --state-dir "$STATE" \
			--inspector="127.0.0.1:$port" --out-dir "$out/pb" >"$out/record.out" 2>"$out/record.err"
	else
		"$bin" record -q --pid "$pid" --duration-ms $((SECS * 1000)) --state-dir "$STATE" \
			--out-dir "$out/pb" >"$out/record.out" 2>"$out/record.err"
	fi
	causal_stop
	files=$(ls "$out"/pb/*-cpu.pb.gz 2>/dev/null)
	# shellcheck disable=SC2086
	if [ -z "$files" ] || ! causal_main_thread "$out/main.pb.gz" "$pid" $files; then
		note "causal: $rt $cb $fn $mode: no profile: $(tail -2 "$out/record.err")"
		echo "n/a n/a n/a"
		return
	fi
	# what placed the JIT-leaf samples inside inlined functions, and which
	# thread ran the JS (the truth is timed on the main thread)
	note "causal: $rt $cb $fn $mode: JS thread $(causal_js_thread $files) (pid $pid);" \
		"$(grep -h 'inlined code:' "$out/record.err" | sed 's/^ *//' | head -1)"
	# (named by the profiled pid: profile runs in a subshell, a counter would not count)
	[ -n "${CAUSAL_KEEP:-}" ] && mkdir -p "$CAUSAL_KEEP" &&
		cp -r "$out" "$CAUSAL_KEEP/$rt-$cb-$fn-$mode-$pid"
	read -r share how < <(causal_share "$out/main.pb.gz" "$fn")
	v8=n/a
	files=$(ls "$out"/pb/*-cpu.v8.pb.gz 2>/dev/null | head -1)
	[ -n "$files" ] && read -r v8 _ < <(causal_share "$files" "$fn")
	echo "$share $how $v8"
}

# cell VALUES...: "median (min–max)", or the one value
cell() {
	local m s
	m=$(echo "$@" | tr ' ' '\n' | grep -v n/a | median)
	s=$(echo "$@" | tr ' ' '\n' | grep -v n/a | spread)
	[ "$m" = n/a ] && { echo n/a; return; }
	[ $# -gt 1 ] && echo "$m ($s)" || echo "$m"
}

rows=()
for c in "${CASES[@]}"; do
	IFS=: read -r cb fn cost <<<"$c"
	changed=$WORK/changed-$cb-$fn
	if ! causal_variant "$NM" "$changed" "$cb" "$fn" "$cost"; then
		note "causal: cannot patch $cb $fn"
		continue
	fi
	case $cb in typescript) iters=5 ;; *) iters=8 ;; esac
	for rt in $RUNTIMES; do
		if [ "$rt" = workerd ] && [ "$cb" != acorn ]; then
			note "causal: $cb $fn: not on workerd (TypeScript's compiler needs a filesystem)"
			continue
		fi
		note "causal: $rt $cb $fn: truth ($RUNS alternating runs of each variant)"
		read -r truth lo hi tu tc < <(causal_truth "$NM" "$changed" "$cb" "$RUNS" "$iters" "$rt")
		note "causal: $rt $cb $fn: an iteration ${tu:-?} ms unchanged, ${tc:-?} ms changed"
		declare -a slog=() shows=() sv8=() smap=() snone=() sbefore=()
		for ((r = 0; r < RUNS; r++)); do
			note "causal: $rt $cb $fn: profiles, run $((r + 1)) of $RUNS"
			read -r s h _ < <(profile "$rt" "$cb" "$changed" "$fn" log)
			slog+=("$s") shows+=("$h")
			if [ "$rt" = node ]; then
				read -r _ _ v < <(profile "$rt" "$cb" "$changed" "$fn" v8)
				sv8+=("$v")
			fi
			read -r s _ _ < <(profile "$rt" "$cb" "$changed" "$fn" map)
			smap+=("$s")
			read -r s _ _ < <(profile "$rt" "$cb" "$changed" "$fn" none)
			snone+=("$s")
			if [ -n "$BEFORE" ]; then
				read -r s _ _ < <(profile "$rt" "$cb" "$changed" "$fn" before "$BEFORE")
				sbefore+=("$s")
			fi
		done
		how=$(printf '%s\n' "${shows[@]}" | sort | uniq -c |
			awk -v runs="$RUNS" '{ printf "%s%s %d/%d", (NR > 1 ? ", " : ""), $2, $1, runs }')
		row="| $rt | $cb | \`$fn\` | $cost | ${truth:-n/a} (${lo:-?}–${hi:-?}) | $how | $(cell "${slog[@]}")"
		[ -n "$BEFORE" ] && row+=" | $(cell "${sbefore[@]}")"
		row+=" | $(cell "${smap[@]}") | $(cell "${snone[@]}") | $(cell "${sv8[@]:-n/a}") |"
		rows+=("$row")
		# node's keys as before; workerd's with its name
		key=causal_${cb}_${fn}
		[ "$rt" = node ] || key=causal_${rt}_${cb}_${fn}
		summary "${key}_truth" "${truth:-n/a}"
		summary "${key}_log" "$(echo "${slog[@]}" | median)"
		[ "$rt" = node ] && summary "${key}_v8" "$(echo "${sv8[@]}" | median)"
		[ "$rt" = node ] || summary "${key}_none" "$(echo "${snone[@]}" | median)"
		note "causal: $row"
	done
done

head="| runtime | codebase | function | cost (steps) | true share % (pairs) | inlined (runs) | isoprof, code log %"
sep="|---|---|---|---|---|---|---"
[ -n "$BEFORE" ] && head+=" | isoprof before, code log %" && sep+="|---"
echo "$head | isoprof, perf map only % | isoprof, no flags % | V8's profiler % |"
echo "$sep|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "Shares are of the JS thread (node's main thread; workerd's main thread, which runs its" \
	"isolate): the true share is the added cost's part of its CPU time (schedstat), medians of" \
	"$RUNS alternating runs of each variant (node: an iteration of its loop; workerd: a request," \
	"the same work); a profiler's is the function's flat share of that thread's samples over" \
	"${SECS} s (median, min–max over $RUNS runs), its inlined frames counted as pprof counts them." \
	"workerd runs the acorn cases only (TypeScript's compiler needs a filesystem workerd does" \
	"not give); its code log is v8Flags --perf-basic-prof --log-code --logfile-per-isolate" \
	"--logfile, its perf map only --perf-basic-prof, and V8's profiler is not run on it (n/a)." \
	"V8's profiler ran in runs of its own.  The function's own work before the cost is in its" \
	"share too, not in the truth."
exit 0
