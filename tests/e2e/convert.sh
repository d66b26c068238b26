#!/usr/bin/env bash
# isoprof convert on real profiles: a BPF capture of a busy node (pprof →
# .cpuprofile → pprof keeps every function's flat count), node --cpu-prof
# output (.cpuprofile → pprof → .cpuprofile keeps every function's self
# count), node --heap-prof output (→ pprof, read by go tool pprof), folded
# stacks, stdin/stdout, and the error messages.  go tool pprof reads every
# pprof written here; tests/fixtures/v8/check.js checks the .cpuprofile
# structure independently of our parser.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/convert.XXXXXX")
# node writes its CPU.*.cpuprofile / Heap.*.heapprofile into its cwd
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; cd /; rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT

V8=$TOP/tests/fixtures/v8
CHECK=(node "$V8/check.js")

if ! command -v go >/dev/null; then
	fail pprof "go not found: go tool pprof is the reference reader"
	exit 0
fi

# conv NAME ARGS...: isoprof convert exits 0 with no sanitizer report
conv() {
	local name=$1
	shift
	"$ISOPROF" convert "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	if [ $rc -ne 0 ] || ! no_sanitizer_report "$T/$name.err"; then
		cat "$T/$name.err"
		fail "$name" "isoprof convert $* exited $rc or a sanitizer reported"
		return 1
	fi
	return 0
}

# flat FILE [ARGS]: "count name file" per function with a nonzero flat count, from pprof -top
flat() {
	local f=$1
	shift
	HOME=${HOME:-/root} go tool pprof -symbolize=none -top -filefunctions -nodefraction=0 \
		-edgefraction=0 -sample_index=samples "$@" "$f" 2>/dev/null |
		awk 'rows && $1 != 0 { line = $1; for (i = 6; i <= NF; i++) line = line " " $i; print line }
		     /flat%/ { rows = 1 }' | sort
}

# --- pprof from a real BPF capture → .cpuprofile → pprof ----------------------
node --perf-basic-prof "$V8/spin.js" 4000 >/dev/null &
np=$!
sleep 0.7
if "$ISOPROF" record -q --pid $np --duration-ms 2000 -o "$T/rec.pb.gz" 2>"$T/record.err" &&
	no_sanitizer_report "$T/record.err"; then
	wait $np
	if conv bpf_to_cpuprofile "$T/rec.pb.gz" "$T/rec.cpuprofile" &&
		conv cpuprofile_to_pprof "$T/rec.cpuprofile" "$T/rec2.pb.gz"; then
		if "${CHECK[@]}" structure "$T/rec.cpuprofile" >"$T/struct.out" 2>&1; then
			pass "BPF capture → .cpuprofile: DevTools structure ($(cat "$T/struct.out"))"
		else
			fail "BPF capture → .cpuprofile structure" "$(cat "$T/struct.out")"
		fi
		flat "$T/rec.pb.gz" >"$T/rec.flat"
		flat "$T/rec2.pb.gz" >"$T/rec2.flat"
		n=$(wc -l <"$T/rec.flat")
		hot=$(awk '$2 == "hotA" { print $1 }' "$T/rec.flat")
		if [ "$n" -ge 2 ] && [ "${hot:-0}" -gt 100 ] && diff -u "$T/rec.flat" "$T/rec2.flat"; then
			pass "pprof → .cpuprofile → pprof: pprof -top flat counts identical ($n functions, hotA $hot)"
		else
			head -20 "$T/rec.flat"
			fail "pprof → .cpuprofile → pprof" "per-function flat counts differ (or hotA missing: '$hot')"
		fi
		# the converted-back profile keeps the capture's period
		p1=$(HOME=${HOME:-/root} go tool pprof -raw "$T/rec.pb.gz" 2>/dev/null | sed -n 's/^Period: //p')
		p2=$(HOME=${HOME:-/root} go tool pprof -raw "$T/rec2.pb.gz" 2>/dev/null | sed -n 's/^Period: //p')
		if [ -n "$p1" ] && [ "$p1" = "$p2" ]; then
			pass "round trip keeps the period ($p1 ns)"
		else
			fail "round trip period" "'$p1' vs '$p2'"
		fi
	fi
	# folded: root first, counts sum to the samples, back to pprof with the same leaves
	if conv to_folded "$T/rec.pb.gz" "$T/rec.folded" --sample-index samples &&
		conv from_folded "$T/rec.folded" "$T/rec3.pb.gz"; then
		total=$(awk '{ s += $NF } END { print s }' "$T/rec.folded")
		want=$(HOME=${HOME:-/root} go tool pprof -top -sample_index=samples "$T/rec.pb.gz" 2>/dev/null |
			sed -nE 's/.*Total samples = ([0-9]+).*/\1/p; s/.* of ([0-9]+) total$/\1/p' | head -1)
		flat "$T/rec.pb.gz" | awk '{ print $1, $2 }' | sort >"$T/rec.names"
		flat "$T/rec3.pb.gz" | awk '{ print $1, $2 }' | sort >"$T/rec3.names"
		if [ "$total" = "$want" ] && grep -q ';node::Start;.*;hotA [0-9]*$' "$T/rec.folded" &&
			diff -u "$T/rec.names" "$T/rec3.names"; then
			pass "pprof → folded → pprof: $total samples, root first, same flat counts by name"
		else
			head -3 "$T/rec.folded"
			fail "folded round trip" "total $total vs $want, or flat counts by name differ"
		fi
	fi
else
	cat "$T/record.err"
	fail "record node" "isoprof record failed"
	kill $np 2>/dev/null
fi

# --- node --cpu-prof → pprof → .cpuprofile ------------------------------------
rm -f CPU.*.cpuprofile
node --cpu-prof --cpu-prof-interval 500 "$V8/busy.js" >/dev/null
cpu=$(ls CPU.*.cpuprofile 2>/dev/null | head -1)
if [ -z "$cpu" ]; then
	fail "node --cpu-prof" "no CPU.*.cpuprofile written"
elif conv v8_to_pprof "$cpu" "$T/v8.pb.gz" && conv v8_back "$T/v8.pb.gz" "$T/v8back.cpuprofile"; then
	"${CHECK[@]}" self "$cpu" >"$T/v8.self"
	"${CHECK[@]}" self "$T/v8back.cpuprofile" >"$T/v8back.self"
	fib=$(awk '$2 == "fib" { print $1 }' "$T/v8.self")
	if [ "${fib:-0}" -gt 10 ] && diff -u "$T/v8.self" "$T/v8back.self"; then
		pass ".cpuprofile → pprof → .cpuprofile: self counts identical ($(wc -l <"$T/v8.self") functions, fib $fib)"
	else
		fail ".cpuprofile round trip" "self counts differ (fib '$fib')"
	fi
	if "${CHECK[@]}" structure "$T/v8back.cpuprofile" >"$T/struct2.out" 2>&1; then
		pass ".cpuprofile written back: DevTools structure"
	else
		fail ".cpuprofile written back" "$(cat "$T/struct2.out")"
	fi
	# go tool pprof reads the converted profile and sees V8's own counts
	pfib=$(flat "$T/v8.pb.gz" | awk '$2 == "fib" { print $1 }')
	top=$(pprof_top "$T/v8.pb.gz" -sample_index=samples)
	if [ "$pfib" = "$fib" ] && grep -q "source: V8 CPU profiler (.cpuprofile)" <<<"$top"; then
		pass "go tool pprof reads node's profile as pprof (fib $pfib samples, source comment)"
	else
		echo "$top" | head -15
		fail "pprof reads node's profile" "fib '$pfib' vs '$fib' or no source comment"
	fi
	# class labels: gc and js come from V8's own node names
	tags=$(HOME=${HOME:-/root} go tool pprof -tags "$T/v8.pb.gz" 2>/dev/null)
	if grep -q ' js$' <<<"$tags" && grep -qE ' (gc|program|v8-builtin)$' <<<"$tags"; then
		pass "samples carry class labels"
	else
		echo "$tags" | head
		fail "class labels" "no js / gc|program|v8-builtin class tags"
	fi
fi

# --- node --heap-prof → pprof -------------------------------------------------
rm -f Heap.*.heapprofile
node --heap-prof --heap-prof-interval=524288 "$V8/heap.js" >/dev/null
heap=$(ls Heap.*.heapprofile 2>/dev/null | head -1)
if [ -z "$heap" ]; then
	fail "node --heap-prof" "no Heap.*.heapprofile written"
elif conv heap_to_pprof "$heap" "$T/heap.pb.gz" --heap-interval 524288; then
	pprof_top "$T/heap.pb.gz" -sample_index=alloc_space -unit=B >"$T/heap.top"
	share=$(share_of bigAlloc "$T/heap.top")
	total=$(sed -nE 's/.* of ([0-9]+)B total$/\1/p' "$T/heap.top")
	want=$("${CHECK[@]}" heaptotal "$heap")
	if awk -v s="$share" 'BEGIN { exit !(s >= 90) }' && [ "$total" = "$want" ] &&
		grep -q "this is not retained memory" "$T/heap.top"; then
		pass "heap profile → pprof: bigAlloc $share% of alloc_space, total $total B = Σ selfSize"
	else
		head -12 "$T/heap.top"
		fail "heap profile → pprof" "bigAlloc $share%, total '$total' vs Σ selfSize '$want'"
	fi
	if pprof_top "$T/heap.pb.gz" -sample_index=alloc_objects | grep -q bigAlloc; then
		pass "heap profile: alloc_objects readable"
	else
		fail "heap alloc_objects" "bigAlloc missing"
	fi
	if conv heap_folded "$heap" "$T/heap.folded" && grep -q 'bigAlloc [0-9]*$' "$T/heap.folded"; then
		pass "heap profile → folded (alloc_space)"
	else
		fail "heap → folded" "no bigAlloc line"
	fi
fi

# --- stdin/stdout, --raw, explicit formats ------------------------------------
if [ -n "${cpu:-}" ] && [ -f "$cpu" ]; then
	if "$ISOPROF" convert - - --to folded <"$cpu" >"$T/stdin.folded" 2>"$T/stdin.err" &&
		conv file_folded "$cpu" "$T/file.folded" && cmp -s "$T/stdin.folded" "$T/file.folded" &&
		no_sanitizer_report "$T/stdin.err"; then
		pass "stdin to stdout (- -) matches file to file"
	else
		cat "$T/stdin.err"
		fail "stdin/stdout" "output differs or failed"
	fi
	if conv raw "$cpu" "$T/raw.pprof" --raw && [ "$(head -c2 "$T/raw.pprof" | od -An -tx1 | tr -d ' ')" != "1f8b" ] &&
		pprof_top "$T/raw.pprof" | grep -q fib; then
		pass "--raw writes uncompressed protobuf that pprof reads"
	else
		fail "--raw" "compressed or unreadable"
	fi
	if conv repack "$T/raw.pprof" "$T/repacked.data" --to pprof && [ "$(head -c2 "$T/repacked.data" | od -An -tx1 | tr -d ' ')" = "1f8b" ] &&
		[ "$(flat "$T/repacked.data")" = "$(flat "$T/raw.pprof")" ]; then
		pass "pprof → pprof (--to) gzips and keeps the samples"
	else
		fail "pprof → pprof" "not gzip or samples differ"
	fi
fi

# --- errors: "isoprof: FILE: reason", 1 for bad input, 2 for bad usage -------
expect() {
	local name=$1 status=$2 pattern=$3
	shift 3
	"$ISOPROF" convert "$@" >"$T/err.out" 2>"$T/err.err"
	local rc=$?
	if ! no_sanitizer_report "$T/err.err"; then
		cat "$T/err.err"
		fail "$name" "sanitizer report"
	elif [ $rc -ne "$status" ]; then
		cat "$T/err.err"
		fail "$name" "exit $rc, want $status"
	elif ! grep -qE -- "$pattern" "$T/err.err"; then
		cat "$T/err.err"
		fail "$name" "stderr lacks /$pattern/"
	else
		pass "$name"
	fi
}
printf '{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[2]},{"id":2,"callFrame":{"functionName":"a","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"children":[1]}],"startTime":0,"endTime":1}' >"$T/cycle.cpuprofile"
printf '{"nodes": [1, 2' >"$T/trunc.json"
printf '\x1f\x8b\x08\x00garbage' >"$T/bad.pb.gz"
printf 'a;b;c\n' >"$T/nocount.folded"
printf 'main;work 3\n' >"$T/ok.folded"
expect "missing input" 1 "^isoprof: $T/nope.pb.gz: No such file or directory$" "$T/nope.pb.gz" "$T/o.cpuprofile"
expect "cycle named" 1 "^isoprof: $T/cycle.cpuprofile: .*cycle" "$T/cycle.cpuprofile" "$T/o.pb.gz"
expect "truncated JSON" 1 "^isoprof: $T/trunc.json: .*(truncated|ends early)" "$T/trunc.json" "$T/o.pb.gz"
expect "corrupt gzip" 1 "^isoprof: $T/bad.pb.gz: gzip" "$T/bad.pb.gz" "$T/o.cpuprofile"
expect "folded without count" 1 "^isoprof: $T/nocount.folded: line 1" "$T/nocount.folded" "$T/o.pb.gz"
expect "unwritable output" 1 "^isoprof: /nonexistent/o.pb.gz: " "$T/ok.folded" /nonexistent/o.pb.gz
expect "unknown output extension" 2 "use --to" "$T/trunc.json" "$T/o.xyz"
expect "bad --to" 2 "--to must be" --to svg "$T/trunc.json" "$T/o.pb.gz"
expect "heap as output" 2 "--to must be" --to heapprofile "$T/trunc.json" "$T/o.pb.gz"
expect "one argument" 2 "IN OUT" "$T/trunc.json"
if [ -e "$T/o.pb.gz" ] || [ -e "$T/o.cpuprofile" ] || ls "$T"/o.*.tmp.* >/dev/null 2>&1; then
	fail "no partial output" "a failed conversion left a file"
else
	pass "failed conversions leave no output file"
fi
exit 0
