#!/usr/bin/env bash
# isoprof record on native workloads: real BPF, real processes, read back
# with go tool pprof and isoprof top.
set -u
. "$(dirname "$0")/../lib.sh"

T=$TEST_TMP
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT

# within A B PP: |A - B| <= PP
within() {
	awk -v a="$1" -v b="$2" -v pp="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= pp) }'
}

# record_ok NAME ARGS...: runs isoprof record, keeps stderr in $T/NAME.err
record_ok() {
	local name=$1
	shift
	"$ISOPROF" record -q "$@" 2>"$T/$name.err"
	local rc=$?
	if ! no_sanitizer_report "$T/$name.err"; then
		cat "$T/$name.err"
		fail "$name" "sanitizer report"
		return 1
	fi
	if [ $rc -ne 0 ]; then
		cat "$T/$name.err"
		fail "$name" "isoprof record exited $rc"
		return 1
	fi
	return 0
}

# --- ground truth: three functions in known shares --------------------------
"$FIXTURES/ground_truth" 7 "$T/gt.txt" &
gt=$!
sleep 1
if record_ok ground_truth_record --pid $gt --duration-ms 4000 -o "$T/gt.pb.gz"; then
	wait $gt
	pprof_top "$T/gt.pb.gz" >"$T/gt.pprof.txt"
	"$ISOPROF" top "$T/gt.pb.gz" >"$T/gt.isoprof.txt" 2>&1
	cat "$T/gt.txt"
	head -12 "$T/gt.pprof.txt"
	for fn in spin_alpha spin_beta spin_gamma; do
		truth=$(awk -v f=$fn '$1 == f { print $2 }' "$T/gt.txt")
		got=$(share_of $fn "$T/gt.pprof.txt")
		got_top=$(share_of $fn "$T/gt.isoprof.txt")
		if within "$got" "$truth" 3; then
			pass "ground truth $fn: pprof $got% vs measured $truth%"
		else
			fail "ground truth $fn" "pprof says $got%, the workload measured $truth% (> 3 pp)"
		fi
		if [ "$got_top" = "$got" ]; then
			pass "isoprof top agrees with pprof on $fn ($got_top%)"
		else
			fail "isoprof top agrees with pprof on $fn" "isoprof top $got_top% vs pprof $got%"
		fi
	done
	# the profile states its window, rate and losses
	HOME=${HOME:-/root} go tool pprof -comments "$T/gt.pb.gz" >"$T/gt.comments" 2>&1
	if grep -q '^rate: 1000 Hz' "$T/gt.comments" && grep -q '^samples: .* lost: 0' "$T/gt.comments" &&
		grep -q '^window: ' "$T/gt.comments" && grep -q '^command: .*record' "$T/gt.comments"; then
		pass "profile comments give command, window, rate and losses"
	else
		cat "$T/gt.comments"
		fail "profile comments" "missing command/window/rate/lost lines"
	fi
	if grep -qE '^isoprof: lost 0 samples' "$T/ground_truth_record.err"; then
		pass "summary reports lost samples"
	else
		cat "$T/ground_truth_record.err"
		fail "summary reports lost samples" "no 'lost' line"
	fi
else
	kill $gt 2>/dev/null
fi

# --- a syscall-heavy workload shows kernel frames under the user function ---
"$FIXTURES/syscall_heavy" 5 &
sh_pid=$!
sleep 0.5
if record_ok syscall_record --pid $sh_pid --duration-ms 2000 -o "$T/sys.pb.gz"; then
	pprof_top "$T/sys.pb.gz" -focus=do_syscalls >"$T/sys.txt"
	head -20 "$T/sys.txt"
	kshare=$(awk '$6 ~ /^(ksys_read|vfs_read|__x64_sys_read)$/ { sub("%", "", $5); if ($5 > m) m = $5 } END { print m + 0 }' "$T/sys.txt")
	if awk -v k="$kshare" 'BEGIN { exit !(k >= 30) }'; then
		pass "kernel frames under do_syscalls (read path cum $kshare%)"
	else
		fail "kernel frames under do_syscalls" "read path cum $kshare% < 30%"
	fi
fi
wait $sh_pid 2>/dev/null

# --- multi-threaded: every thread appears, labelled --------------------------
"$FIXTURES/threads" 5 4 &
th=$!
sleep 0.5
if record_ok threads_record --pid $th --duration-ms 2000 -o "$T/th.pb.gz"; then
	HOME=${HOME:-/root} go tool pprof -tags "$T/th.pb.gz" >"$T/th.tags" 2>&1
	missing=""
	for i in 0 1 2 3; do
		grep -qE "^ +[0-9.]+[a-z]* \( *[0-9.]+%\): worker-$i\$" "$T/th.tags" || missing="$missing worker-$i"
	done
	if [ -z "$missing" ] && grep -q "^ *thread:" "$T/th.tags" && grep -q "^ *tid:" "$T/th.tags" &&
		grep -q "^ *pid:" "$T/th.tags"; then
		pass "every thread appears, labelled with thread, tid and pid"
	else
		cat "$T/th.tags"
		fail "every thread appears" "missing:$missing"
	fi
fi
wait $th 2>/dev/null

# --- a target that exits mid-capture keeps what was collected ---------------
"$FIXTURES/ground_truth" 1.5 "$T/early.txt" &
early=$!
sleep 0.2
if record_ok early_exit --pid $early --duration-ms 5000 -o "$T/early.pb.gz"; then
	if grep -q "exited .* into the window" "$T/early_exit.err" &&
		pprof_top "$T/early.pb.gz" | grep -q spin_gamma &&
		HOME=${HOME:-/root} go tool pprof -comments "$T/early.pb.gz" 2>&1 | grep -q "^note: pid $early .*exited"; then
		pass "target exiting mid-capture: profile written, with a note"
	else
		cat "$T/early_exit.err"
		fail "target exiting mid-capture" "no note or no profile"
	fi
fi

# --- Ctrl-C ends the capture early and still writes the profile -------------
"$FIXTURES/ground_truth" 6 "$T/int.txt" &
int_pid=$!
"$ISOPROF" record -q --pid $int_pid --duration-ms 20000 -o "$T/int.pb.gz" 2>"$T/int.err" &
rec=$!
sleep 2
kill -INT $rec
wait $rec
rc=$?
if [ $rc -eq 0 ] && pprof_top "$T/int.pb.gz" | grep -q spin_beta && no_sanitizer_report "$T/int.err"; then
	pass "SIGINT ends the capture and writes the profile"
else
	cat "$T/int.err"
	fail "SIGINT ends the capture" "rc=$rc or no profile"
fi
kill $int_pid 2>/dev/null
wait $int_pid 2>/dev/null

# --- bad input ----------------------------------------------------------------
# expect_error NAME WANT_RC REGEX ARGS...: one clear line on stderr, no crash
expect_error() {
	local name=$1 want=$2 re=$3
	shift 3
	"$ISOPROF" "$@" >"$T/bad.out" 2>"$T/bad.err"
	local rc=$?
	if [ $rc -eq "$want" ] && grep -qE "$re" "$T/bad.err" && no_sanitizer_report "$T/bad.err"; then
		pass "$name (exit $rc: $(head -1 "$T/bad.err"))"
	else
		cat "$T/bad.err"
		fail "$name" "exit $rc (want $want), stderr does not match /$re/"
	fi
}

expect_error "pid that does not exist" 3 '^isoprof: pid 999999: no such process$' \
	record --pid 999999 --duration-ms 1000 -o "$T/x.pb.gz"
expect_error "duration below range" 2 'duration-ms must be an integer from 1000 to 50000' \
	record --pid $$ --duration-ms 999 -o "$T/x.pb.gz"
expect_error "duration above range" 2 'duration-ms must be an integer from 1000 to 50000' \
	record --pid $$ --duration-ms 50001 -o "$T/x.pb.gz"
expect_error "frequency not a number" 2 'frequency must be an integer' \
	record --pid $$ --frequency fast -o "$T/x.pb.gz"
expect_error "--version without --script" 2 'version goes with --script' \
	record --pid $$ --version latest -o "$T/x.pb.gz"
expect_error "-o and --out-dir together" 2 'not both' \
	record --pid $$ -o "$T/x.pb.gz" --out-dir "$T/dir"
expect_error "unwritable output path" 1 '^isoprof: cannot write /nonexistent-dir/x.pb.gz: No such file or directory$' \
	record --pid $$ --duration-ms 1000 -o /nonexistent-dir/x.pb.gz
sleep 30 &
idle=$!
expect_error "idle target: nothing to sample" 4 'no samples: .*idle' \
	record --pid $idle --duration-ms 1000 -o "$T/idle.pb.gz"
kill $idle
[ ! -e "$T/idle.pb.gz" ] && pass "idle target: no file written" || fail "idle target" "a file was written"

# mapped files that are truncated ELF or not ELF at all
head -c 3000 "$FIXTURES/ground_truth" >"$T/truncated.elf"
printf 'this is not an ELF file, just text\n%.0s' {1..200} >"$T/not-elf.txt"
"$FIXTURES/maps_files" 4 "$T/truncated.elf" "$T/not-elf.txt" &
mf=$!
sleep 0.5
if record_ok odd_maps --pid $mf --duration-ms 1500 -o "$T/odd.pb.gz"; then
	if grep -q "note: .*truncated.elf" "$T/odd_maps.err" && grep -q "note: .*not-elf.txt" "$T/odd_maps.err" &&
		pprof_top "$T/odd.pb.gz" | grep -q spin_with_odd_maps; then
		pass "truncated and non-ELF mapped files: a note each, profile intact"
	else
		cat "$T/odd_maps.err"
		fail "truncated and non-ELF mapped files" "notes or profile missing"
	fi
fi
kill $mf 2>/dev/null
wait $mf 2>/dev/null
exit 0
