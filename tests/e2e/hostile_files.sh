#!/usr/bin/env bash
# Files a target controls, made hostile: record must finish on time, write
# its profile, name the refused file and why, and never open what a link or
# another mount namespace points at.  Real processes, real BPF:
#   - node run as nobody whose perf map is replaced by a FIFO, a symlink to
#     /etc/shadow, a root-owned planted file naming PLANTED_FRAME, a sparse
#     1 TB file (docs/security.md, "Files a target controls");
#   - a process in its own mount namespace that maps a file it mounted at
#     /dev/full: the host's device must not be opened;
#   - a .so owned by nobody, truncated while mapped and sampled;
#   - a perf map deleted during the window, another file planted at its path;
#   - a perf map rewritten over and over during the window.
set -u
. "$(dirname "$0")/../lib.sh"

T=$TEST_TMP
chmod 755 "$T"
NOBODY=$(id -u nobody)
NOGROUP=$(id -g nobody)
mkdir -p "$T/nobody" && chown "$NOBODY:$NOGROUP" "$T/nobody"
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
		rm -f "/tmp/perf-$p.map"
	done
	wait 2>/dev/null
	[ -n "${KEEP_TMP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT

HAVE_STRACE=
if command -v strace >/dev/null; then
	HAVE_STRACE=1
fi

# A JS loop, JIT-compiled: its frames are named from the perf map.
HOT_JS='function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s }
let t = 0; for (;;) t += hot(100000);'

# start_node: a node run as nobody with --perf-basic-prof; its pid in $np.
start_node() {
	(cd "$T/nobody" && exec setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups \
		node --perf-basic-prof -e "$HOT_JS") &
	np=$!
	PIDS+=("$np")
	for _ in $(seq 50); do
		[ -s "/tmp/perf-$np.map" ] && return 0
		sleep 0.1
	done
	return 1
}

# record_ok NAME OUT ERR [STRACE-FILE] ARGS...: record, timed; 0 when it
# finished within the time limit without a sanitizer report and wrote a
# profile into OUT.
record_ok() {
	local name=$1 out=$2 err=$3 trace=$4 rc t0 t1 prof=
	shift 4
	mkdir -p "$out"
	t0=$(date +%s)
	if [ -n "$trace" ]; then
		# LeakSanitizer cannot run under ptrace
		ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=99 \
			timeout -k 5 60 strace -f -qq -y -e trace=open,openat,openat2 -o "$trace" \
			"$ISOPROF" record "$@" --out-dir "$out" 2>"$err"
	else
		timeout -k 5 60 "$ISOPROF" record "$@" --out-dir "$out" 2>"$err"
	fi
	rc=$?
	t1=$(date +%s)
	if [ $rc = 124 ]; then
		fail "$name" "record did not finish within 60 s"
		return 1
	fi
	if ! no_sanitizer_report "$err"; then
		cat "$err"
		fail "$name" "a sanitizer reported"
		return 1
	fi
	if [ $rc != 0 ] && [ $rc != 1 ] && [ $rc != 4 ]; then
		cat "$err"
		fail "$name" "record exited $rc"
		return 1
	fi
	# every profile written (one per isolate and one outside isolates), as pprof reads them
	: >"$out.raw"
	for prof in $(find "$out" -name '*.pb.gz'); do
		if ! HOME=${HOME:-/root} go tool pprof -raw "$prof" >>"$out.raw" 2>&1; then
			fail "$name" "go tool pprof cannot read $prof"
			return 1
		fi
	done
	if [ -z "$prof" ]; then
		cat "$err"
		fail "$name" "no profile in $out (record exited $rc)"
		return 1
	fi
	echo "  $name: record exited $rc after $((t1 - t0)) s"
	return 0
}

# hostile_map KIND REASON: node as nobody, its perf map replaced before the capture.
hostile_map() {
	local kind=$1 reason=$2 map out err trace=
	if ! start_node; then
		fail "$kind perf map" "node wrote no perf map"
		return
	fi
	map=/tmp/perf-$np.map
	# V8 keeps writing the unlinked original; the path now names this:
	rm -f "$map"
	case $kind in
	fifo)
		mkfifo "$map" && chown "$NOBODY:$NOGROUP" "$map" ;;
	symlink)
		ln -s /etc/shadow "$map" && chown -h "$NOBODY:$NOGROUP" "$map" ;;
	planted)
		# root's, not the target's: every user address named PLANTED_FRAME
		printf '1000 7ffffffff000 PLANTED_FRAME\n' >"$map" ;;
	sparse)
		truncate -s 1T "$map" && chown "$NOBODY:$NOGROUP" "$map" ;;
	esac
	out=$T/out-$kind
	err=$T/$kind.err
	[ "$kind" = symlink ] && [ -n "$HAVE_STRACE" ] && trace=$T/$kind.strace
	if record_ok "$kind perf map: record finishes and writes its profile" "$out" "$err" \
		"$trace" --pid "$np" --duration-ms 1000; then
		pass "$kind perf map: record finishes and writes its profile"
		if grep -q PLANTED_FRAME "$out.raw"; then
			fail "$kind perf map: no planted frame" "PLANTED_FRAME in the profile"
		else
			pass "$kind perf map: no frame from the file"
		fi
		if grep -qF "perf map $map: $reason" "$err"; then
			pass "$kind perf map: the summary names it ($reason)"
		else
			grep note "$err"
			fail "$kind perf map: the summary names it" "no 'perf map $map: $reason' note"
		fi
		if [ "$kind" = symlink ]; then
			if [ -z "$HAVE_STRACE" ]; then
				echo "  (strace not installed: not checked that /etc/shadow is never opened)"
			# -y: strace names the file each descriptor is, links resolved
			elif grep -q '/etc/shadow' "$trace"; then
				grep '/etc/shadow' "$trace" | head -3
				fail "symlink perf map: /etc/shadow never opened" "strace shows an open"
			else
				pass "symlink perf map: /etc/shadow never opened (strace)"
			fi
		fi
	fi
	kill "$np" 2>/dev/null
	wait "$np" 2>/dev/null
	rm -f "$map"
}

hostile_map fifo "a FIFO, not a regular file"
hostile_map symlink "symlink refused"
hostile_map planted "owned by uid 0, not the target's uid $NOBODY"
hostile_map sparse "larger than the 1 GiB cap"

# --- a mapping that names a host device from another mount namespace --------
# The process mounts a regular file of its own at /dev/full and maps it
# executable: its maps say /dev/full; the host's /dev/full is a device.
if [ -z "$HAVE_STRACE" ]; then
	echo "  (strace not installed: mount namespace case skipped)"
else
	cp /bin/true "$T/fake-dev"
	unshare -m --propagation private sh -c '
		mount --bind "$1" /dev/full || exit 1
		exec python3 -c "
import mmap, os, sys
fd = os.open(\"/dev/full\", os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ | mmap.PROT_EXEC, flags=mmap.MAP_PRIVATE)
t = 0
while True:
    t += sum(range(1000))
"' sh "$T/fake-dev" &
	up=$!
	PIDS+=("$up")
	for _ in $(seq 50); do
		grep -q ' /dev/full$' "/proc/$up/maps" 2>/dev/null && break
		sleep 0.1
	done
	if ! grep -q ' /dev/full$' "/proc/$up/maps" 2>/dev/null; then
		fail "mount namespace: /dev/full" "the process did not map its /dev/full"
	elif record_ok "mount namespace: record finishes" "$T/out-mntns" "$T/mntns.err" \
		"$T/mntns.strace" --pid "$up" --duration-ms 1000; then
		pass "mount namespace: record finishes and writes its profile"
		# by that path in our namespace, that is: not inside the process's root
		if grep -qE 'open(at2?)?\((AT_FDCWD[^,]*, )?"/dev/full"' "$T/mntns.strace"; then
			grep '/dev/full' "$T/mntns.strace" | head -3
			fail "mount namespace: host /dev/full never opened" "strace shows an open"
		else
			pass "mount namespace: the host's /dev/full never opened (strace)"
		fi
	fi
	kill "$up" 2>/dev/null
	wait "$up" 2>/dev/null
fi

# --- a .so owned by nobody, truncated while mapped and sampled ----------------
# Python calls into its own copy of libz; the copy is truncated mid-window
# (the caller then dies of SIGBUS itself).  record must survive and write
# what it has: the names of the .so come from a copy, not the mapping.
LIBZ=$(python3 -c 'import ctypes.util; print(ctypes.util.find_library("z") or "")')
LIBZ_PATH=$(ldconfig -p | awk -v n="$LIBZ" '$1 == n { print $NF; exit }')
if [ -z "$LIBZ_PATH" ]; then
	echo "  (no libz found: truncated .so case skipped)"
else
	mkdir -p "$T/so" && cp "$LIBZ_PATH" "$T/so/libz-copy.so"
	chown "$NOBODY:$NOGROUP" "$T/so/libz-copy.so"
	python3 -c "
import ctypes, sys
z = ctypes.CDLL(sys.argv[1])
buf = ctypes.create_string_buffer(1 << 16)
while True:
    z.adler32(0, buf, 1 << 16)
" "$T/so/libz-copy.so" &
	zp=$!
	PIDS+=("$zp")
	sleep 0.5
	(sleep 2.5; truncate -s 0 "$T/so/libz-copy.so") &
	if record_ok "truncated .so: record survives" "$T/out-so" "$T/so.err" "" \
		--pid "$zp" --duration-ms 3000; then
		pass "truncated .so: record survives and writes its profile"
	fi
	kill "$zp" 2>/dev/null
	wait "$zp" 2>/dev/null
fi

# --- a perf map deleted during the window --------------------------------------
# record reads the map after the window, from the file it opened when it
# tracked the target: deleted during the window, with a file of the
# target's user planted at its path, the JIT frames are still named from
# the original, and nothing from the planted one.
if start_node; then
	map=/tmp/perf-$np.map
	record_ok "deleted perf map: record finishes" "$T/out-deleted" "$T/deleted.err" "" \
		--pid "$np" --duration-ms 3000 >"$T/deleted.rec" &
	rp=$!
	sleep 1.5
	rm -f "$map"
	setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups \
		sh -c 'printf "1000 7ffffffff000 PLANTED_FRAME\n" >"$1"' sh "$map"
	if wait "$rp"; then
		cat "$T/deleted.rec"
		pass "deleted perf map: record finishes and writes its profile"
		if grep -q PLANTED_FRAME "$T/out-deleted.raw"; then
			fail "deleted perf map: no frame from the planted file" "PLANTED_FRAME in the profile"
		else
			pass "deleted perf map: no frame from the planted file"
		fi
		if grep -qw hot "$T/out-deleted.raw"; then
			pass "deleted perf map: the JS frames are named from the original (hot)"
		else
			grep note "$T/deleted.err"
			fail "deleted perf map: the JS frames are named" "no frame 'hot' in the profile"
		fi
	else
		cat "$T/deleted.rec"
	fi
	kill "$np" 2>/dev/null
	wait "$np" 2>/dev/null
	rm -f "$map"
else
	fail "deleted perf map" "node wrote no perf map"
fi

# --- a perf map rewritten during the window ------------------------------------
# The target's own file, rewritten in place every 50 ms (same inode, as a
# pid reuse looks): record must finish and not reread the whole map for
# every address it misses.
if start_node; then
	map=/tmp/perf-$np.map
	big=$T/nobody/big.map
	{
		cat "$map"
		awk 'BEGIN { for (i = 0; i < 200000; i++) printf "%x 10 JS:~filler%d x.js:1:1\n", 4096 + 16 * i, i }'
	} >"$big"
	chown "$NOBODY:$NOGROUP" "$big"
	setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups \
		sh -c 'while :; do cp "$1" "$2"; sleep 0.05; done' sh "$big" "$map" &
	wp=$!
	PIDS+=("$wp")
	trace=
	[ -n "$HAVE_STRACE" ] && trace=$T/rewrite.strace
	if record_ok "rewritten perf map: record finishes" "$T/out-rewrite" "$T/rewrite.err" \
		"$trace" --pid "$np" --duration-ms 2000; then
		pass "rewritten perf map: record finishes and writes its profile"
		if [ -n "$trace" ]; then
			opens=$(grep -c "\"$map\"" "$trace")
			echo "  rewritten perf map: opened $opens times"
			if [ "$opens" -le 40 ]; then
				pass "rewritten perf map: reread a bounded number of times ($opens)"
			else
				fail "rewritten perf map: rereads" "opened $opens times"
			fi
		else
			echo "  (strace not installed: rereads not counted)"
		fi
	fi
	kill "$wp" "$np" 2>/dev/null
	wait "$wp" "$np" 2>/dev/null
	rm -f "$map"
else
	fail "rewritten perf map" "node wrote no perf map"
fi
