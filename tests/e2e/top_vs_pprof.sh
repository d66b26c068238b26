#!/usr/bin/env bash
# isoprof top against go tool pprof -top on profiles written by our builder
# (test_pprof --gen): the whole output (header, numbers, order, names) must
# be identical for each option pair below.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/top_vs_pprof.XXXXXX")
# TEST_TMP may be ours (lib.sh made it) or shared: remove it only if empty
trap 'rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT

GEN=
for g in "$TOP/build/asan/tests/test_pprof" "$BUILD/tests/test_pprof"; do
	[ -x "$g" ] && GEN=$g && break
done
if [ -z "$GEN" ]; then
	fail generate "test_pprof not built (make unit)"
	exit 0
fi
if ! command -v go >/dev/null; then
	fail pprof "go not found: go tool pprof is the reference"
	exit 0
fi
if ! "$GEN" --gen "$T" 2>"$T/gen.err"; then
	cat "$T/gen.err"
	fail generate "test_pprof --gen failed"
	exit 0
fi

# same NAME FILE "ISOPROF ARGS" PPROF ARGS...: identical output, clean stderr
same() {
	local name=$1 file=$2 ours=$3
	shift 3
	local out=$T/$name
	# shellcheck disable=SC2086 # ours is a word list on purpose
	"$ISOPROF" top "$T/$file" $ours >"$out.isoprof" 2>"$out.err"
	local rc=$?
	HOME=${HOME:-/root} go tool pprof -top "$@" "$T/$file" >"$out.pprof" 2>"$out.pprof.err"
	if ! no_sanitizer_report "$out.err"; then
		cat "$out.err"
		fail "$name" "sanitizer report"
	elif [ $rc -ne 0 ]; then
		cat "$out.err"
		fail "$name" "isoprof top exited $rc"
	elif [ ! -s "$out.pprof" ]; then
		cat "$out.pprof.err"
		fail "$name" "go tool pprof printed nothing"
	elif diff -u "$out.pprof" "$out.isoprof" >"$out.diff"; then
		pass "$name ($(grep -c '%  ' "$out.isoprof") rows)"
	else
		head -30 "$out.diff"
		fail "$name" "isoprof top [$ours] differs from pprof -top [$*]"
	fi
}

for f in cpu.pb.gz wide.pb.gz odd.pb small.pb.gz heap.pb.gz idle.pb.gz negative.pb.gz; do
	b=${f%%.*}
	same "$b default" "$f" ""
	same "$b nodecount 12" "$f" "--nodecount 12" -nodecount=12
	same "$b sort cum" "$f" "--sort cum" -cum
	same "$b sort cum nodecount 7" "$f" "--sort cum --nodecount 7" -cum -nodecount=7
	same "$b lines" "$f" "--lines" -lines
	same "$b lines cum nodecount 25" "$f" "--lines --sort cum --nodecount 25" -lines -cum \
		-nodecount=25
	same "$b focus" "$f" "--focus fn_0[1-3]" '-focus=fn_0[1-3]'
	same "$b ignore" "$f" "--ignore handler" -ignore=handler
	same "$b focus+ignore" "$f" "--focus mod[37] --ignore fn_00" '-focus=mod[37]' -ignore=fn_00
	same "$b focus file" "$f" "--focus libc|/lib/" '-focus=libc|/lib/'
	same "$b focus empty match" "$f" "--focus ^$" '-focus=^$'
	same "$b sample index 0" "$f" "--sample-index 0" -sample_index=0
done
same "heap alloc_objects" heap.pb.gz "--sample-index alloc_objects" -sample_index=alloc_objects
same "heap inuse alias" heap.pb.gz "--sample-index inuse_alloc_space --lines" \
	-sample_index=inuse_alloc_space -lines

# --hide-idle has no pprof flag; here (idle) is only ever a root or a leaf and
# class=idle marks the same samples pprof's -ignore/-tagignore can express.
"$ISOPROF" top --hide-idle "$T/idle.pb.gz" 2>"$T/idle.err" |
	sed '/^Active filters:/,/hide_idle=/d' >"$T/idle.isoprof"
HOME=${HOME:-/root} go tool pprof -top '-ignore=^\(idle\)$' -tagignore=class=idle \
	"$T/idle.pb.gz" 2>/dev/null | sed '/^Active filters:/,/tagignore=/d' >"$T/idle.pprof"
if ! no_sanitizer_report "$T/idle.err"; then
	fail "hide idle" "sanitizer report"
elif grep -q '(idle)' "$T/idle.isoprof"; then
	fail "hide idle" "(idle) still listed"
elif diff -u "$T/idle.pprof" "$T/idle.isoprof"; then
	pass "hide idle = pprof -ignore (idle) -tagignore class=idle"
else
	fail "hide idle" "differs from pprof -ignore/-tagignore"
fi
if grep -q '(idle)' <("$ISOPROF" top "$T/idle.pb.gz" 2>/dev/null); then
	pass "idle listed without --hide-idle"
else
	fail "idle listed without --hide-idle" "(idle) missing"
fi

# Errors: unreadable or invalid file -> 1 and "isoprof: FILE: reason"; bad options -> 2.
# expect NAME STATUS PATTERN ARGS...
expect() {
	local name=$1 status=$2 pattern=$3
	shift 3
	"$ISOPROF" top "$@" >"$T/err.out" 2>"$T/err.err"
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

head -c 4000 /dev/urandom >"$T/random.bin"
printf '\x1f\x8b\x08\x00garbage' >"$T/badgzip.gz"
: >"$T/empty"
expect "missing file" 1 "^isoprof: $T/nope.pb.gz: No such file or directory$" "$T/nope.pb.gz"
expect "directory" 1 "^isoprof: $T: Is a directory$" "$T"
expect "random bytes" 1 "^isoprof: $T/random.bin: " "$T/random.bin"
expect "corrupt gzip" 1 "^isoprof: $T/badgzip.gz: gzip" "$T/badgzip.gz"
expect "empty file" 1 "^isoprof: $T/empty: " "$T/empty"
expect "no file" 2 "FILE"
expect "two files" 2 "unexpected argument" "$T/cpu.pb.gz" "$T/odd.pb"
expect "bad sort" 2 "--sort" --sort size "$T/cpu.pb.gz"
expect "bad nodecount" 2 "--nodecount" --nodecount -3 "$T/cpu.pb.gz"
expect "unknown option" 2 "unrecognized option" --flat "$T/cpu.pb.gz"
expect "bad regex" 2 "focus" --focus '(' "$T/cpu.pb.gz"
expect "bad sample index" 2 "must be one of: samples cpu" --sample-index wall "$T/cpu.pb.gz"
if "$ISOPROF" top --help | grep -q -- --hide-idle; then
	pass "help"
else
	fail "help" "--help does not list --hide-idle"
fi
exit 0
