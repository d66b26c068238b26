#!/usr/bin/env bash
# record on the bundled workerd demo started with subsets of the V8 flags
# isoprof asks for (docs/v8-frames.md): every subset still profiles, the
# summary says what each missing flag costs (one note per capability, not
# an error), and what the present flags give is in the profile:
#   none        isolates by address, native frames named, JS frames [jit]
#   perfbasic   --perf-basic-prof: JS frames named from the perf map
#   codelog     --log-code (no perf map): JS frames named from the code log
#   codesrc     + --log-source-code: scripts and version ids
#   all         no note
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/flags.XXXXXX")
PA=26101 PB=26102
cleanup() {
	kill $(jobs -p) 2>/dev/null
	demo_stop
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

# start VARIANT: the demo with that subset of flags in $T/VARIANT; WORKERD_PID
start() {
	local v=$1 f
	local pm='"--perf-basic-prof", ' cl='"--log-code", "--logfile-per-isolate", "--logfile=@LOGDIR@/v8.log", '
	case $v in
	none) f= ;;
	perfbasic) f=$pm ;;
	codelog) f=$cl ;;
	codesrc) f="$cl\"--log-source-code\", " ;;
	all) f="$pm\"--interpreted-frames-native-stack\", $cl\"--log-source-code\", " ;;
	esac
	mkdir -p "$T/src-$v"
	cp "$TOP"/scripts/demo/*.js "$T/src-$v/"
	awk -v f="$f" '/v8Flags = \[/ { print "  v8Flags = [ " f "],"; skip = 1; next }
		skip { if (/\],/) skip = 0; next } { print }' \
		"$TOP/scripts/demo/config.capnp.in" >"$T/src-$v/config.capnp.in"
	DEMO_SRC=$T/src-$v demo_start "$T/$v" "$PA" "$PB"
}

# record_variant VARIANT: record 2 s under load into $T/VARIANT.out, summary in .err
record_variant() {
	local v=$1 rc w1 w2
	for _ in $(seq 20); do
		curl -s "http://127.0.0.1:$PA/" >/dev/null
		curl -s "http://127.0.0.1:$PB/" >/dev/null
	done
	wrk -t1 -c2 -d7s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
	w1=$!
	wrk -t1 -c2 -d7s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
	w2=$!
	# long enough under load for V8 to compile the hot functions: CI once
	# sampled a worker still interpreted after 1 s (no JIT frame at all)
	sleep 3
	"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 2000 --out-dir "$T/$v.out" \
		2>"$T/$v.err"
	rc=$?
	wait "$w1" "$w2" 2>/dev/null
	cat "$T/$v.err"
	ls "$T/$v.out"
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$v.err"; then
		pass "$v: record exits 0"
	else
		fail "$v: record" "exit $rc or a sanitizer report"
	fi
}

# note_has VARIANT TEXT: the summary has a note with TEXT
note_has() {
	grep -q "^isoprof: note: pid $WORKERD_PID: .*$2" "$T/$1.err"
}

# isolate_profiles VARIANT: how many per-isolate profiles were written
isolate_profiles() {
	ls "$T/$1.out"/*-0x*-cpu.pb.gz 2>/dev/null | wc -l
}

# js_named TOPFILE: a demo JS function is a row of the pprof -top listing
# (alpha's fibAlpha may still run interpreted: then beta's functions)
js_named() {
	awk '$6 == "fibAlpha" || $6 == "sieveBeta" || $6 == "crossOutMultiples" { f = 1 }
	     END { exit !f }' "$1"
}

# top_of VARIANT FILE_GLOB: go tool pprof -top of the first profile matching
top_of() {
	local f
	f=$(ls "$T/$1.out"/$2 2>/dev/null | head -1)
	[ -n "$f" ] && pprof_top "$f" >"$T/$1.top" && cat "$T/$1.top"
}

for v in none perfbasic codelog codesrc all; do
	if ! start "$v"; then
		fail "$v: workerd start" "$(tail -3 "$T/$v/workerd.log")"
		continue
	fi
	record_variant "$v"
	case $v in
	none)
		note_has none "no V8 perf map .* and no code logs: JS frames are not named" &&
			pass "none: note: JS frames not named" ||
			fail "none: note" "no perf-map note"
		note_has none "no per-isolate code logs" &&
			pass "none: note: no code logs" || fail "none: note" "no code-log note"
		[ "$(isolate_profiles none)" -ge 2 ] &&
			pass "none: samples still attributed by isolate address" ||
			fail "none: isolates" "$(isolate_profiles none) per-isolate profiles"
		# any isolate's: a worker that ran interpreted all window has none
		jit=
		for f in "$T/none.out"/isolate-0x*-cpu.pb.gz; do
			pprof_top "$f" >"$T/none.top"
			grep -q '\[jit\]' "$T/none.top" && jit=$f && break
		done
		head -20 "$T/none.top"
		[ -n "$jit" ] && pass "none: JS frames are [jit] (${jit##*/})" ||
			fail "none: [jit]" "no [jit] frame in an isolate's profile"
		top_of none 'no-isolate-cpu.pb.gz' | head -10
		grep -qE ' (epoll_wait|.*kj::|.*workerd::|__libc|.*tcmalloc)' "$T/none.top" &&
			pass "none: native frames named" || fail "none: native" "no named native frame"
		grep -q "^isoprof: JIT frames have no names" "$T/none.err" &&
			fail "none: one note per capability" "the old perf-map hint is printed too" ||
			pass "none: one note per capability"
		;;
	perfbasic)
		for f in "$T"/perfbasic.out/*-0x*-cpu.pb.gz; do
			pprof_top "$f"
		done >"$T/perfbasic.top"
		js_named "$T/perfbasic.top" &&
			pass "perfbasic: JS frames named from the perf map" ||
			fail "perfbasic: names" "no demo function in the isolates' profiles: $(grep -m8 '%' "$T/perfbasic.top" | awk '{ print $6 }' | tr '\n' ' ')"
		note_has perfbasic "no per-isolate code logs" &&
			pass "perfbasic: note: no code logs" || fail "perfbasic: note" "no code-log note"
		note_has perfbasic "no V8 perf map" &&
			fail "perfbasic: note" "claims no perf map" || pass "perfbasic: no perf-map note"
		;;
	codelog | codesrc)
		for f in "$T/$v.out"/*-0x*-cpu.pb.gz; do
			pprof_top "$f"
		done >"$T/$v.top"
		js_named "$T/$v.top" &&
			pass "$v: JS frames named from the code log (no perf map)" ||
			fail "$v: names" "no demo function in the isolates' profiles: $(grep -m8 '%' "$T/$v.top" | awk '{ print $6 }' | tr '\n' ' ')"
		note_has "$v" "no V8 perf map (--perf-basic-prof): JS frames named from the code logs" &&
			pass "$v: note: named from the code logs" || fail "$v: note" "no perf-map note"
		# V8 15 logs script sources with --log-code alone; older V8 needs
		# --log-source-code: either version ids or the note saying why not
		if ls "$T/$v.out"/alpha-*-cpu.pb.gz 2>/dev/null | grep -vq -- '-unknown-'; then
			pass "$v: isolates named by script and version id"
			note_has "$v" "without script sources" &&
				fail "$v: note" "claims no sources" || pass "$v: no sources note"
		elif [ "$v" = codelog ]; then
			note_has codelog "without script sources" &&
				pass "codelog: no version ids, and a note says why" ||
				fail "codelog: note" "no version ids and no --log-source-code note"
		else
			fail "codesrc: versions" "no alpha-VERSION profile"
		fi
		note_has "$v" "no per-isolate code logs" &&
			fail "$v: note" "claims no code logs" || pass "$v: no code-log note"
		;;
	all)
		grep -q "^isoprof: note: pid $WORKERD_PID: " "$T/all.err" &&
			fail "all: no flag note" "$(grep "^isoprof: note: pid" "$T/all.err")" ||
			pass "all: no flag note"
		ls "$T/all.out"/alpha-*-cpu.pb.gz >/dev/null 2>&1 &&
			pass "all: alpha's own profile" || fail "all: scripts" "no alpha-* profile (named after the service)"
		;;
	esac
	demo_stop
done
exit 0
