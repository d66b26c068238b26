#!/usr/bin/env bash
# Outputs in another user's directory (lib/fileio.h, struct fileio_owner;
# user/capture/caps.h, "Outputs for another user").  Run as root,
# `isoprof record -o prof.pb.gz` in a directory that another user alone
# can write (a home, as `sudo isoprof record` from it) writes there as that
# user: the file is theirs, `--out-dir NEW` is made theirs, a symlink at the
# name is replaced, not followed, and nothing is left behind; where that
# user cannot write (0555), neither can isoprof; a directory its group can
# write is still refused.  Under sudo (SUDO_UID/SUDO_GID), a file in a
# directory of root's is given to the sudo user.  flame and convert write
# into the user's directory as the user, as root or under sudo (where they
# run as the user).  The output capabilities are held only when the output
# needs them, and never effective in the window.  Real BPF, a real node;
# go tool pprof reads every profile.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/output_owner.XXXXXX")
# the users below cross these on their way to their directories
chmod 755 "$TEST_TMP" "$T"
NP=
cleanup() {
	if [ -n "$NP" ]; then
		kill "$NP" 2>/dev/null
		wait "$NP" 2>/dev/null
		rm -f "/tmp/perf-$NP.map"
	fi
	cd /
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

# Two uids nobody uses here: no passwd entry, no process, no file of theirs in $T.
free_uid() {
	local u=$1
	while getent passwd "$u" >/dev/null || getent group "$u" >/dev/null ||
		pgrep -U "$u" >/dev/null 2>&1 || [ "$u" = "${SKIP_UID:-}" ]; do
		u=$((u + 1))
	done
	echo "$u"
}
U=$(free_uid 4242)
SKIP_UID=$U
S=$(free_uid 4243)
echo "directory owner uid $U, sudo user uid $S"

if ! command -v go >/dev/null; then
	fail pprof "go not found: go tool pprof is the reference reader"
	exit 0
fi

# js_profile FILE: go tool pprof reads FILE, with the script's JS in it (by
# their perf map names: hotA/hotB, or the script's top level once TurboFan
# has inlined them into it)
js_profile() {
	pprof_top "$1" >"$T/top.txt" && grep -qE 'hotA|hotB|\(anonymous\)' "$T/top.txt" &&
		grep -q Builtins_JSEntry "$T/top.txt"
}

# owner FILE: uid:gid
owner() {
	stat -c %u:%g "$1"
}

# no_tmp DIR: no temporary file of the atomic writer is left in DIR
no_tmp() {
	! ls -A "$1" | grep -q '\.tmp\.'
}

# has_bit HEX BIT: is BIT set in the capability mask HEX?
has_bit() {
	(( (16#$1 >> $2) & 1 ))
}

status_of() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"
}

# rec NAME ARGS...: isoprof record of the node target, from the current
# directory; status in $rc, stderr in $T/NAME.err
rec() {
	local name=$1
	shift
	"$ISOPROF" record -q --pid "$NP" --duration-ms 1000 "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	if ! no_sanitizer_report "$T/$name.err"; then
		cat "$T/$name.err"
		fail "$name" "sanitizer report"
	fi
}

# node writes its code logs into its working directory
cd "$T" || exit 1
node --perf-basic-prof "$TOP/tests/fixtures/v8/spin.js" 120000 >/dev/null &
NP=$!
sleep 0.7

H=$T/home
mkdir "$H"
chown "$U:$U" "$H"
chmod 0755 "$H"

# --- -o FILE in another user's directory, relative, from inside it --------
cd "$H" || exit 1
rec home -o prof.pb.gz
if [ "$rc" -eq 0 ] && [ "$(owner prof.pb.gz)" = "$U:$U" ] && no_tmp "$H" &&
	js_profile "$H/prof.pb.gz"; then
	pass "record -o prof.pb.gz in uid $U's 0755 directory: exit 0, the file is $U:$U, pprof reads it, no temporary file left"
else
	cat "$T/home.err"
	ls -la "$H"
	fail "record into another user's directory" "rc=$rc owner=$(owner prof.pb.gz 2>&1)"
fi

# --- the same as `sudo isoprof record` run by that user from their home -----
SUDO_UID=$U SUDO_GID=$U rec sudo_home -o mine.pb.gz
if [ "$rc" -eq 0 ] && [ "$(owner mine.pb.gz)" = "$U:$U" ] && no_tmp "$H" &&
	js_profile "$H/mine.pb.gz" && grep -q "owned by $U:$U" "$T/sudo_home.err"; then
	pass "SUDO_UID=$U, from uid $U's home: mine.pb.gz is $U:$U, and the summary says so"
else
	cat "$T/sudo_home.err"
	fail "sudo record from one's home" "rc=$rc owner=$(owner mine.pb.gz 2>&1)"
fi

# --- --out-dir NEW there: made as the owner, every file the owner's ---------
rec outdir --out-dir sub
n=$(find "$H/sub" -type f | wc -l)
others=$(find "$H/sub" ! -user "$U" | wc -l)
first=$(find "$H/sub" -type f -name '*-cpu.pb.gz' ! -name 'no-isolate-*' | head -1)
if [ "$rc" -eq 0 ] && [ "$(owner "$H/sub")" = "$U:$U" ] && [ "$n" -ge 1 ] && [ "$others" -eq 0 ] &&
	no_tmp "$H/sub" && [ -n "$first" ] && js_profile "$first"; then
	pass "record --out-dir sub there: sub made $U:$U, its $n files all uid $U's, pprof reads them"
else
	cat "$T/outdir.err"
	ls -laR "$H/sub"
	fail "--out-dir in another user's directory" "rc=$rc files=$n not-owned=$others"
fi

# --- a symlink planted at the output name: replaced, never followed ---------
echo precious >"$T/victim"
chmod 0644 "$T/victim"
ln -sfn "$T/victim" "$H/prof.pb.gz"
chown -h "$U:$U" "$H/prof.pb.gz"
rec symlink -o prof.pb.gz
if [ "$rc" -eq 0 ] && [ ! -L "$H/prof.pb.gz" ] && [ -f "$H/prof.pb.gz" ] &&
	[ "$(owner "$H/prof.pb.gz")" = "$U:$U" ] && [ "$(cat "$T/victim")" = precious ] &&
	[ "$(owner "$T/victim")" = 0:0 ] && no_tmp "$H"; then
	pass "a symlink at the output name is replaced by uid $U's file; its target is untouched"
else
	cat "$T/symlink.err"
	fail "symlink at the output name" "rc=$rc victim=$(cat "$T/victim") $(ls -la "$H/prof.pb.gz")"
fi

# --- what record holds: the output capabilities permitted, never effective --
"$ISOPROF" record -q --pid "$NP" --duration-ms 4000 -o "$H/caps.pb.gz" 2>"$T/caps.err" &
r=$!
sleep 2.5
eff=$(status_of $r CapEff)
prm=$(status_of $r CapPrm)
wait $r
rc1=$?
"$ISOPROF" record -q --pid "$NP" --duration-ms 4000 -o "$T/rootcaps.pb.gz" 2>"$T/rootcaps.err" &
r=$!
sleep 2.5
eff2=$(status_of $r CapEff)
prm2=$(status_of $r CapPrm)
wait $r
rc2=$?
echo "into uid $U's directory: CapEff $eff CapPrm $prm; into root's: CapEff $eff2 CapPrm $prm2"
# CAP_CHOWN 0, CAP_SETGID 6, CAP_SETUID 7, CAP_DAC_OVERRIDE 1
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ -n "$eff" ] && [ -n "$eff2" ] &&
	has_bit "$prm" 6 && has_bit "$prm" 7 && ! has_bit "$prm" 0 && ! has_bit "$prm" 1 &&
	! has_bit "$eff" 6 && ! has_bit "$eff" 7 && ! has_bit "$eff" 0 &&
	! has_bit "$prm2" 6 && ! has_bit "$prm2" 7 && ! has_bit "$prm2" 0 &&
	[ "$(owner "$H/caps.pb.gz")" = "$U:$U" ] && [ "$(owner "$T/rootcaps.pb.gz")" = 0:0 ]; then
	pass "in the window: CAP_SETUID/CAP_SETGID permitted, not effective, only for uid $U's directory; none of them (nor CAP_CHOWN) for root's"
else
	fail "output capabilities" "rc=$rc1/$rc2 CapEff $eff CapPrm $prm; root's dir: CapEff $eff2 CapPrm $prm2"
fi

# --- still refused: a directory its group can write, not sticky -------------
G=$T/shared
mkdir "$G"
chown "$U:$U" "$G"
chmod 0775 "$G"
cd "$G" || exit 1
rec groupw -o prof.pb.gz
if [ "$rc" -eq 2 ] && [ -z "$(ls -A "$G")" ] &&
	grep -q "isoprof: \.: refusing to write into this directory: writable by its group (mode 0775) and not sticky" "$T/groupw.err"; then
	pass "a group-writable, non-sticky directory of uid $U: refused, exit 2, nothing written ($(head -1 "$T/groupw.err"))"
else
	cat "$T/groupw.err"
	fail "group-writable directory" "rc=$rc"
fi

# --- as the owner: where the owner cannot write, neither can isoprof ------
RO=$T/readonly
mkdir "$RO"
chown "$U:$U" "$RO"
chmod 0555 "$RO"
cd "$RO" || exit 1
rec readonly -o prof.pb.gz
if [ "$rc" -eq 1 ] && [ -z "$(ls -A "$RO")" ] &&
	grep -q "isoprof: \.: cannot write there as uid $U (its owner): Permission denied" "$T/readonly.err"; then
	pass "uid $U's 0555 directory: refused before the window, as $U would be ($(head -1 "$T/readonly.err"))"
else
	cat "$T/readonly.err"
	fail "read-only directory of another user" "rc=$rc"
fi

# --- under sudo, in a directory of root's: the file is the sudo user's ------
R=$T/rootdir
mkdir "$R"
chmod 0755 "$R"
cd "$R" || exit 1
SUDO_UID=$S SUDO_GID=$S rec sudo -o prof.pb.gz
if [ "$rc" -eq 0 ] && [ "$(owner "$R/prof.pb.gz")" = "$S:$S" ] && no_tmp "$R" &&
	js_profile "$R/prof.pb.gz"; then
	pass "SUDO_UID=$S SUDO_GID=$S, root's 0755 directory: prof.pb.gz is $S:$S, pprof reads it"
else
	cat "$T/sudo.err"
	fail "sudo user's file in root's directory" "rc=$rc owner=$(owner "$R/prof.pb.gz" 2>&1)"
fi
SUDO_UID=$S SUDO_GID=$S rec sudo_outdir --out-dir new
others=$(find "$R/new" ! -user "$S" | wc -l)
n=$(find "$R/new" -type f | wc -l)
if [ "$rc" -eq 0 ] && [ "$(owner "$R/new")" = "$S:$S" ] && [ "$n" -ge 1 ] && [ "$others" -eq 0 ]; then
	pass "under sudo, --out-dir new in root's directory: new is $S:$S with its $n files"
else
	cat "$T/sudo_outdir.err"
	ls -laR "$R/new"
	fail "sudo --out-dir" "rc=$rc files=$n not-owned=$others"
fi
# a malformed SUDO_UID names nobody: root's file, as without sudo
SUDO_UID=${S}x SUDO_GID=$S rec sudo_bad -o bad.pb.gz
if [ "$rc" -eq 0 ] && [ "$(owner "$R/bad.pb.gz")" = 0:0 ]; then
	pass "SUDO_UID='${S}x' is no uid: the file stays root's"
else
	cat "$T/sudo_bad.err"
	fail "malformed SUDO_UID" "rc=$rc owner=$(owner "$R/bad.pb.gz" 2>&1)"
fi

# --- flame and convert into uid U's directory -------------------------------
cd "$H" || exit 1
cp "$H/prof.pb.gz" "$T/in.pb.gz"
chmod 0644 "$T/in.pb.gz"
ln -sfn "$T/victim" "$H/flame.html"
"$ISOPROF" flame -o "$H/flame.html" "$T/in.pb.gz" 2>"$T/flame.err"
rc=$?
"$ISOPROF" convert prof.pb.gz prof.cpuprofile 2>"$T/convert.err"
rc2=$?
if [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(owner "$H/flame.html")" = "$U:$U" ] &&
	[ ! -L "$H/flame.html" ] && [ "$(cat "$T/victim")" = precious ] &&
	[ "$(owner "$H/prof.cpuprofile")" = "$U:$U" ] && no_tmp "$H" &&
	no_sanitizer_report "$T/flame.err" && no_sanitizer_report "$T/convert.err"; then
	pass "as root, flame (over a planted symlink) and convert write uid $U's files into its directory"
else
	cat "$T/flame.err" "$T/convert.err"
	fail "flame/convert as root" "rc=$rc/$rc2 $(ls -la "$H")"
fi
# under sudo a file tool is the sudo user: theirs where they can write, refused where not
SUDO_UID=$U SUDO_GID=$U "$ISOPROF" convert prof.pb.gz again.cpuprofile 2>"$T/sconvert.err"
rc=$?
SUDO_UID=$U SUDO_GID=$U "$ISOPROF" flame -o "$R/flame.svg" prof.pb.gz 2>"$T/sflame.err"
rc2=$?
if [ $rc -eq 0 ] && [ "$(owner "$H/again.cpuprofile")" = "$U:$U" ] && [ $rc2 -ne 0 ] &&
	[ ! -e "$R/flame.svg" ] && grep -q "Permission denied" "$T/sflame.err" && no_tmp "$R" &&
	no_sanitizer_report "$T/sconvert.err" && no_sanitizer_report "$T/sflame.err"; then
	pass "under sudo, convert runs as uid $U (its output $U:$U); flame into root's 0755 directory is refused as it would be for $U ($(head -1 "$T/sflame.err"))"
else
	cat "$T/sconvert.err" "$T/sflame.err"
	fail "file tools under sudo" "rc=$rc/$rc2"
fi
