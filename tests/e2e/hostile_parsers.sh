#!/usr/bin/env bash
# Hostile input sized to find quadratic work (issue 12): a .cpuprofile that
# is one 200,000-deep chain with a sample on every node (2e10 frames if
# every stack were written) through both commands that read one (convert,
# crosscheck; top and flame read pprof), each within 20 s (4-6 s measured on
# a loaded 2-core machine; 50 s and then ENOMEM at 4.7 GB before the fix)
# and a 1 GiB address space, with a clear refusal; and a 5,000-deep chain, which converts with its stacks
# cut to their leaf-most frames and a comment that says so.  The release
# build is measured (sanitizers reserve terabytes of address space); the
# 100,000 code-move log is test_v8inline's test_many_moves.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/hostile_parsers.XXXXXX")
trap 'rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT
REL=$(realpath "${ISOPROF_RELEASE:-$TOP/build/isoprof}")

# chain N FILE: a .cpuprofile whose nodes form one chain, each with one hit
chain() {
	awk -v n="$1" 'BEGIN {
		printf "{\"nodes\":["
		for (i = 1; i <= n; i++) {
			printf "%s{\"id\":%d,\"callFrame\":{\"functionName\":\"%s\",\"scriptId\":\"1\",", \
				(i > 1 ? "," : ""), i, (i == 1 ? "(root)" : "f" i)
			printf "\"url\":\"%s\",\"lineNumber\":%d,\"columnNumber\":0},", \
				(i == 1 ? "" : "file:///chain.js"), i
			printf "\"hitCount\":%d,\"children\":[%s]}", (i == 1 ? 0 : 1), (i < n ? i + 1 : "")
		}
		printf "],\"startTime\":0,\"endTime\":%d}", n * 1000
	}' >"$2"
}

# bounded NAME CMD...: CMD ends within 20 s in 1 GiB of address space; its
# stderr in $T/NAME.err, exit status in $rc, seconds in $secs
bounded() {
	local name=$1 t0
	shift
	t0=$(date +%s.%N)
	timeout 20 prlimit --as=$((1 << 30)) "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	secs=$(echo "$(date +%s.%N) $t0" | awk '{ printf "%.2f", $1 - $2 }')
}

chain 200000 "$T/chain.cpuprofile"
chain 5000 "$T/deep.cpuprofile"
"$REL" convert "$T/deep.cpuprofile" "$T/small.pb.gz" 2>/dev/null

for cmd in convert crosscheck; do
	case $cmd in
	convert) bounded $cmd "$REL" convert "$T/chain.cpuprofile" "$T/chain.pb.gz" ;;
	crosscheck) bounded $cmd "$REL" crosscheck "$T/small.pb.gz" "$T/chain.cpuprofile" ;;
	esac
	cat "$T/$cmd.err"
	if [ $rc -ne 124 ] && [ $rc -ne 0 ] && grep -q "frames in all" "$T/$cmd.err" &&
		! grep -qi "memory" "$T/$cmd.err"; then
		pass "200k-deep chain, $cmd: refused in $secs s, under 1 GiB, with the reason"
	else
		fail "200k-deep chain, $cmd" "exit $rc after $secs s (124: timed out)"
	fi
done

bounded deep "$REL" convert "$T/deep.cpuprofile" "$T/deep.pb.gz"
if [ $rc -eq 0 ] && HOME=${HOME:-/root} go tool pprof -comments "$T/deep.pb.gz" 2>/dev/null |
	grep -q "stacks deeper than 2048 frames keep their 2048 leaf-most frames"; then
	pass "5000-deep chain: converts in $secs s, the cut stacks named in a comment"
else
	cat "$T/deep.err"
	fail "5000-deep chain" "exit $rc, or no comment about cut stacks"
fi
# the sanitizer build agrees (and reports nothing)
"$ISOPROF" convert "$T/deep.cpuprofile" "$T/deep-asan.pb.gz" 2>"$T/deep-asan.err"
rc=$?
if [ $rc -eq 0 ] && no_sanitizer_report "$T/deep-asan.err"; then
	pass "5000-deep chain under ASan/UBSan"
else
	cat "$T/deep-asan.err"
	fail "5000-deep chain under ASan/UBSan" "exit $rc"
fi
exit 0
