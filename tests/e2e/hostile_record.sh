#!/usr/bin/env bash
# The root boundary of `record` and `targets` on a hostile host: the
# privileges they hold while they read other users' processes, a target's
# pid taken by another process mid-window, signals at every stage, out-dirs
# others can write to, symlinks planted at output names, and a script named
# with terminal escapes.  Real processes, real BPF.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/hostile_record.XXXXXX")
chmod 755 "$TEST_TMP" "$T"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
		rm -f "/tmp/perf-$p.map"
	done
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
cp "$FIXTURES/ground_truth" "$FIXTURES/syscall_heavy" "$T/"
chmod 755 "$T/ground_truth" "$T/syscall_heavy"

# has_bit HEX BIT: is BIT set in the capability mask HEX?
has_bit() {
	(( (16#$1 >> $2) & 1 ))
}

# status_of PID FIELD: a field of /proc/PID/status
status_of() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# --- record: what it holds while the window runs ---------------------------
"${NOBODY[@]}" "$T/ground_truth" 120 /dev/null &
victim=$!
PIDS+=("$victim")
sleep 0.3
"$ISOPROF" record -q --pid "$victim" --duration-ms 3000 -o "$T/caps.pb.gz" 2>"$T/caps.err" &
rec=$!
sleep 1.5
eff=$(status_of $rec CapEff)
prm=$(status_of $rec CapPrm)
nnp=$(status_of $rec NoNewPrivs)
wait $rec
rc=$?
echo "record in its window: CapEff $eff CapPrm $prm NoNewPrivs $nnp"
if [ -n "$eff" ] && ! has_bit "$eff" 1 && ! has_bit "$eff" 21 && ! has_bit "$prm" 1 &&
	! has_bit "$prm" 21 && [ "$nnp" = 1 ]; then
	pass "record after arming: no CAP_DAC_OVERRIDE or CAP_SYS_ADMIN, NoNewPrivs 1 (CapEff $eff)"
else
	fail "record after arming" "CapEff $eff CapPrm $prm NoNewPrivs $nnp"
fi
# where the kernel checks every bpf() command, record keeps CAP_BPF (caps.c)
if needs_feature drop_cap_bpf "record after arming: no CAP_BPF"; then
	if [ -n "$eff" ] && ! has_bit "$eff" 39; then
		pass "record after arming: no CAP_BPF (CapEff $eff)"
	else
		fail "record after arming: CAP_BPF" "CapEff $eff"
	fi
fi
if [ $rc -eq 0 ] && pprof_top "$T/caps.pb.gz" | grep -q spin_beta && no_sanitizer_report "$T/caps.err"; then
	pass "record with reduced privileges names a nobody target's functions"
else
	cat "$T/caps.err"
	fail "record with reduced privileges" "rc=$rc or spin_beta missing"
fi

# What ran before the window ran without them too: the first capset comes
# before the first read of the target's /proc entries.
# (LeakSanitizer cannot run under ptrace: leaks are checked by the runs above)
ASAN_OPTIONS=detect_leaks=0 strace -f -o "$T/record.strace" -e trace=prctl,capset,openat \
	"$ISOPROF" record -q --pid "$victim" --duration-ms 1000 -o "$T/st.pb.gz" 2>"$T/st.err"
first_cap=$(grep -n 'capset(' "$T/record.strace" | head -1 | cut -d: -f1)
first_proc=$(grep -n "openat(.*\"/proc/$victim/" "$T/record.strace" | head -1 | cut -d: -f1)
cap_line=$(grep 'capset(' "$T/record.strace" | head -1)
if [ -n "$first_cap" ] && [ -n "$first_proc" ] && [ "$first_cap" -lt "$first_proc" ] &&
	grep -q 'PR_SET_NO_NEW_PRIVS' "$T/record.strace" &&
	! echo "$cap_line" | grep -qE 'CAP_DAC_OVERRIDE|CAP_SYS_ADMIN'; then
	pass "record drops CAP_DAC_OVERRIDE and CAP_SYS_ADMIN before it reads the target"
else
	echo "$cap_line"
	fail "record drops before discovery" "capset at line ${first_cap:-none}, /proc/$victim at ${first_proc:-none}"
fi

# --- targets: the same, by its system calls (it is over too soon to watch) ---
ASAN_OPTIONS=detect_leaks=0 strace -f -o "$T/targets.strace" -e trace=prctl,capset,openat \
	"$ISOPROF" targets >"$T/targets.out" 2>"$T/targets.err"
rc=$?
first_cap=$(grep -n 'capset(' "$T/targets.strace" | head -1 | cut -d: -f1)
first_proc=$(grep -nE 'openat\(.*"/proc/[0-9]+/' "$T/targets.strace" | head -1 | cut -d: -f1)
cap_line=$(grep 'capset(' "$T/targets.strace" | tail -1)
echo "targets: $cap_line"
if [ -n "$first_cap" ] && [ -n "$first_proc" ] && [ "$first_cap" -lt "$first_proc" ] &&
	grep -q 'PR_SET_NO_NEW_PRIVS, 1' "$T/targets.strace" &&
	! echo "$cap_line" | grep -qE 'CAP_DAC_OVERRIDE|CAP_SYS_ADMIN|CAP_BPF|CAP_PERFMON' &&
	[ $rc -le 1 ] && no_sanitizer_report "$T/targets.err"; then
	pass "targets: NO_NEW_PRIVS, only reading capabilities, set before it reads /proc"
else
	fail "targets privileges" "capset at ${first_cap:-none}, /proc at ${first_proc:-none}, rc=$rc"
fi

# --- a target exits and another process takes its pid mid-window -----------
"$T/ground_truth" 1.2 /dev/null &
old=$!
"$ISOPROF" record -q --pid "$old" --duration-ms 8000 -o "$T/reuse.pb.gz" 2>"$T/reuse.err" &
rec=$!
wait $old
# the next fork takes the pid just freed (root writes the last pid given out)
new=""
for try in $(seq 30); do
	echo $((old - 1)) >/proc/sys/kernel/ns_last_pid 2>/dev/null || break
	"$T/syscall_heavy" 3 &
	if [ $! -eq "$old" ]; then
		new=$!
		break
	fi
	kill $! 2>/dev/null
	wait $! 2>/dev/null
done
wait $rec
rc=$?
[ -n "$new" ] && wait "$new" 2>/dev/null
if [ -z "$new" ]; then
	fail "pid reuse" "could not hand pid $old to a new process (ns_last_pid)"
elif [ $rc -eq 0 ] && grep -q "note: pid $old exited" "$T/reuse.err" &&
	pprof_top "$T/reuse.pb.gz" >"$T/reuse.top" && grep -q spin_ "$T/reuse.top" &&
	! grep -qE 'do_syscalls|syscall_heavy' "$T/reuse.top" && no_sanitizer_report "$T/reuse.err"; then
	pass "pid $old reused mid-window: a note, the profile written, nothing of the newcomer in it ($(grep -o "note: pid $old exited.*" "$T/reuse.err" | cut -c1-120))"
else
	cat "$T/reuse.err"
	head -20 "$T/reuse.top" 2>/dev/null
	fail "pid reuse" "rc=$rc, no note, or the newcomer's samples in the profile"
fi

# --- a script named with terminal escapes ----------------------------------
mkdir -p "$T/js" "$T/logs"
evil=$'evil\e]0;owned\a\e[31mred.js'
cat >"$T/js/$evil" <<'JS'
function spin() { let x = 0; for (let i = 0; i < 2e6; i++) x += i % 7; return x; }
setInterval(spin, 5);
JS
(cd "$T/js" && exec node --perf-basic-prof --log-code --log-source-code --logfile-per-isolate \
	--logfile="$T/logs/v8.log" "$evil") >/dev/null 2>&1 &
node_pid=$!
PIDS+=("$node_pid")
sleep 2
"$ISOPROF" targets --pid "$node_pid" >"$T/evil.targets" 2>&1
"$ISOPROF" record --pid "$node_pid" --duration-ms 1000 -o "$T/evil.pb.gz" 2>"$T/evil.err"
rc=$?
if grep -qF 'evil\x1b]0;owned\x07\x1b[31mred.js' "$T/evil.targets" && ! grep -q $'\e' "$T/evil.targets" &&
	! grep -q $'\a' "$T/evil.targets"; then
	pass "targets prints a script name with control bytes escaped"
else
	cat -v "$T/evil.targets"
	fail "targets escapes script names" "no escaped name, or a raw control byte"
fi
if [ $rc -eq 0 ] && grep -qF 'evil\x1b]0;owned\x07\x1b[31mred.js' "$T/evil.err" &&
	! grep -q $'\e' "$T/evil.err" && no_sanitizer_report "$T/evil.err"; then
	pass "record's summary prints the script name escaped"
else
	cat -v "$T/evil.err"
	fail "record escapes script names" "rc=$rc, no escaped name, or a raw ESC"
fi

# --- SIGTERM during discovery (every V8 runtime on the host) ---------------
"$ISOPROF" record -q --duration-ms 5000 -o "$T/term1.pb.gz" 2>"$T/term1.err" &
rec=$!
# NoNewPrivs is set just after the handlers are installed, before discovery
for i in $(seq 500); do
	[ "$(status_of $rec NoNewPrivs 2>/dev/null)" = 1 ] && break
	sleep 0.005
done
kill -TERM $rec
wait $rec
rc=$?
if grep -q "stopping before sampling began" "$T/term1.err" && [ $rc -eq 1 ] &&
	[ ! -e "$T/term1.pb.gz" ] && no_sanitizer_report "$T/term1.err"; then
	pass "SIGTERM before the window: a clear message, exit 1, nothing half-written"
elif [ $rc -eq 0 ] && [ -s "$T/term1.pb.gz" ] && no_sanitizer_report "$T/term1.err"; then
	pass "SIGTERM early (the window had begun): the profile is written"
else
	cat "$T/term1.err"
	fail "SIGTERM during discovery" "rc=$rc"
fi

# --- SIGTERM during post-processing ---------------------------------------
# Writing begins when the sampler's perf events are closed.
perf_fds() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'perf_event'
}
"$ISOPROF" record -q --pid "$victim" --duration-ms 2000 --frequency 5000 -o "$T/term2.pb.gz" \
	2>"$T/term2.err" &
rec=$!
armed=0
sent=0
for i in $(seq 800); do
	n=$(perf_fds $rec)
	[ "$n" -gt 0 ] && armed=1
	if [ $armed -eq 1 ] && [ "$n" -eq 0 ]; then
		kill -TERM $rec 2>/dev/null && sent=1
		break
	fi
	sleep 0.01
done
wait $rec
rc=$?
if [ $sent -eq 1 ] && grep -q "writing what was collected first" "$T/term2.err" && [ $rc -eq 0 ] &&
	pprof_top "$T/term2.pb.gz" | grep -q spin_ && no_sanitizer_report "$T/term2.err"; then
	pass "SIGTERM during post-processing: a message, the profile still written"
else
	cat "$T/term2.err"
	fail "SIGTERM during post-processing" "sent=$sent rc=$rc"
fi

# --- out-dirs others can write to ----------------------------------------
mkdir -m 0777 "$T/ww" && chmod 0777 "$T/ww"
"$ISOPROF" record -q --pid "$victim" --duration-ms 1000 --out-dir "$T/ww" 2>"$T/ww.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "refusing to write into this directory: writable by every user" "$T/ww.err" &&
	[ -z "$(ls -A "$T/ww")" ]; then
	pass "a world-writable out-dir that is not sticky is refused (exit 2)"
else
	cat "$T/ww.err"
	fail "world-writable out-dir" "rc=$rc"
fi
# another user's directory: written as that user, so isoprof can do there
# nothing they could not (tests/e2e/output_owner.sh); a planted symlink
# is replaced, its target untouched; theirs, but group-writable: refused
mkdir -m 0755 "$T/theirs" && chmod 0755 "$T/theirs" && chown 65534:65534 "$T/theirs"
"${NOBODY[@]}" ln -s "$T/precious0" "$T/theirs/x.pb.gz"
printf 'root only\n' >"$T/precious0" && chmod 0600 "$T/precious0"
"$ISOPROF" record -q --pid "$victim" --duration-ms 1000 -o "$T/theirs/x.pb.gz" 2>"$T/theirs.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(stat -c %u:%g "$T/theirs/x.pb.gz")" = 65534:65534 ] &&
	[ ! -L "$T/theirs/x.pb.gz" ] && [ "$(cat "$T/precious0")" = "root only" ] &&
	[ "$(stat -c %u "$T/precious0")" = 0 ] && pprof_top "$T/theirs/x.pb.gz" | grep -q spin_; then
	pass "an output directory owned by another user: written as that user (the file is nobody's), a symlink there replaced"
else
	cat "$T/theirs.err"
	fail "foreign out-dir" "rc=$rc $(ls -la "$T/theirs")"
fi
mkdir -m 0775 "$T/theirs_g" && chmod 0775 "$T/theirs_g" && chown 65534:65534 "$T/theirs_g"
"$ISOPROF" record -q --pid "$victim" --duration-ms 1000 -o "$T/theirs_g/x.pb.gz" 2>"$T/theirs_g.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "refusing to write into this directory: writable by its group" "$T/theirs_g.err" &&
	[ -z "$(ls -A "$T/theirs_g")" ]; then
	pass "another user's group-writable output directory is refused (exit 2)"
else
	cat "$T/theirs_g.err"
	fail "foreign group-writable out-dir" "rc=$rc"
fi

# --- symlinks planted at output names in a sticky directory ---------------
mkdir -m 1777 "$T/sticky" && chmod 1777 "$T/sticky"
printf 'root only\n' >"$T/precious" && chmod 0600 "$T/precious"
last=$(cat /proc/sys/kernel/ns_last_pid)
for p in $(seq $((last + 1)) $((last + 60))); do
	"${NOBODY[@]}" ln -s "$T/precious" "$T/sticky/out.pb.gz.tmp-$p"
done
"${NOBODY[@]}" ln -s "$T/precious" "$T/sticky/out.pb.gz"
"${NOBODY[@]}" ln -s "$T/precious" "$T/sticky/.out.pb.gz.tmp.XXXXXXXXXX"
"$ISOPROF" record -q --pid "$victim" --duration-ms 1000 -o "$T/sticky/out.pb.gz" 2>"$T/sticky.err"
rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$T/precious")" = "root only" ] && [ -f "$T/sticky/out.pb.gz" ] &&
	[ ! -L "$T/sticky/out.pb.gz" ] && pprof_top "$T/sticky/out.pb.gz" | grep -q spin_; then
	pass "symlinks planted at output names: their target untouched, the profile written"
else
	cat "$T/sticky.err"
	fail "planted symlinks" "rc=$rc, precious: $(cat "$T/precious")"
fi
exit 0
