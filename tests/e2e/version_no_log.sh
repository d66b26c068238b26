#!/usr/bin/env bash
# Version ids without a code log (docs/attribution.md, "Versions without a
# code log"): the same scripts run once with V8's code log and once with no
# V8 flag at all carry the same version id, from the log in one run and
# from the scripts' own files in the other.  Real workerd (three workers:
# one module; a main module with an imported, an unimported, a JSON and a
# CommonJS module; a service worker script) and real node (a single-file
# CommonJS script with a shebang and UTF-8, a single-file ES module, and a
# script of two files, whose version without the log is unknown, never
# another id).  JS frames are named from V8's heap (layouts calibrated into
# the test's own state directory); the ids are read from `record --json`
# and from the profiles' labels with go tool pprof.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; demo_stop 2>/dev/null; rm -rf "$T"' EXIT
STATE=$T/state
FIX=$TOP/tests/fixtures/version_no_log
PA=26301 PG=26302 PS=26303
SERVICES="alpha gamma sigma"

WD=$(demo_workerd_bin) || { fail "workerd" "cannot install workerd"; exit 0; }
NODE=$(command -v node) || { fail "node" "not on PATH"; exit 0; }

# JS frames named with no flag: each binary's V8 layout, learnt once
for bin in "$WD" "$NODE"; do
	"$ISOPROF" calibrate --state-dir "$STATE" "$bin" >"$T/cal.out" 2>&1
	rc=$?
	check "calibrate $(basename "$bin"): exit 0 ($rc)" test $rc -eq 0
	[ $rc -eq 0 ] || cat "$T/cal.out"
done

# json_of FILE: "script service version version_from version_why" per isolate
json_of() {
	python3 -c '
import json, sys
for i in json.load(open(sys.argv[1]))["isolates"]:
    if i.get("isolate"):
        print(i["script"], i["service"] or "-", i["version"], i["version_from"] or "-",
              (i["version_why"] or "-").replace(" ", "_"))' "$1" 2>/dev/null
}

# version_of RUN NAME: the version id RUN's --json gives the isolate shown as NAME
version_of() {
	awk -v n="$2" '$1 == n { print $3; exit }' "$T/$1.iso"
}

# field_of RUN NAME COLUMN: another column of that line (4: version_from, 5: why)
field_of() {
	awk -v n="$2" -v c="$3" '$1 == n { print $c; exit }' "$T/$1.iso"
}

# label_of FILE: the one version label of FILE's samples (go tool pprof -tags), or ""
label_of() {
	HOME=${HOME:-/root} go tool pprof -tags "$1" 2>/dev/null |
		awk '$1 == "version:" { on = 1; next } on && /%\):/ { n++; v = $NF } on && !/%\):/ { on = 0 }
			END { if (n == 1) print v }'
}

# record RUN PID: a 3 s capture of PID into $T/RUN/, its summary in $T/RUN.json
# and $T/RUN.err, the isolates in $T/RUN.iso
record() {
	local run=$1 pid=$2
	"$ISOPROF" record -q --no-calibrate --state-dir "$STATE" --pid "$pid" --duration-ms 3000 \
		--out-dir "$T/$run" --json >"$T/$run.json" 2>"$T/$run.err"
	local rc=$?
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$run.err"; then
		pass "record $run: exit 0"
	else
		cat "$T/$run.err"
		fail "record $run" "exit $rc"
	fi
	json_of "$T/$run.json" >"$T/$run.iso"
	cat "$T/$run.iso"
}

# --- workerd -----------------------------------------------------------------
# start_workerd DIR FLAGS: the fixture in DIR, run with v8Flags = [FLAGS]
start_workerd() {
	local dir=$1 flags=$2
	mkdir -p "$dir/lib" "$dir/v8logs"
	cp "$FIX"/alpha.js "$FIX"/gamma.js "$FIX"/sigma.js "$dir/"
	cp "$FIX"/lib/util.js "$FIX"/lib/unused.js "$FIX"/lib/weights.json "$FIX"/lib/scale.cjs \
		"$dir/lib/"
	sed -e "s|@V8FLAGS@|$flags|" -e "s|@PORT_ALPHA@|$PA|" -e "s|@PORT_GAMMA@|$PG|" \
		-e "s|@PORT_SIGMA@|$PS|" "$FIX/config.capnp.in" >"$dir/config.capnp"
	(cd "$dir" && exec "$WD" serve config.capnp) >"$dir/workerd.log" 2>&1 &
	WORKERD_PID=$!
	demo_wait_http "http://127.0.0.1:$PA/" && demo_wait_http "http://127.0.0.1:$PG/" &&
		demo_wait_http "http://127.0.0.1:$PS/"
}

# capture_workerd RUN: the three workers under load, recorded
capture_workerd() {
	local run=$1 p
	for p in $PA $PG $PS; do
		wrk -t1 -c1 -d6s "http://127.0.0.1:$p/" >/dev/null 2>&1 &
	done
	sleep 1.5
	record "$run" "$WORKERD_PID"
	wait $(jobs -p | grep -vx "$WORKERD_PID") 2>/dev/null
	demo_stop
}

LOGFLAGS="\"--log-code\", \"--log-source-code\", \"--logfile-per-isolate\", \"--logfile=$T/wdlog/v8logs/v8.log\""
if start_workerd "$T/wdlog" "$LOGFLAGS"; then
	capture_workerd wd-log
else
	fail "workerd start (code log)" "$(tail -3 "$T/wdlog/workerd.log")"
fi
if start_workerd "$T/wdnone" ""; then
	check "workerd without a code log: its config has no V8 flag" \
		grep -q 'v8Flags = \[  \]' "$T/wdnone/config.capnp"
	capture_workerd wd-none
	check "workerd without a code log: no code log written" \
		bash -c "! ls '$T'/wdnone/v8logs/*.log >/dev/null 2>&1"
else
	fail "workerd start (no flags)" "$(tail -3 "$T/wdnone/workerd.log")"
fi
for s in $SERVICES; do
	a=$(version_of wd-log "$s") b=$(version_of wd-none "$s")
	if [ -n "$a" ] && [ "$a" != unknown ] && [ "$a" = "$b" ] &&
		[ "$(field_of wd-log "$s" 4)" = code_log ] && [ "$(field_of wd-none "$s" 4)" = files ]; then
		pass "workerd $s: the same version id with and without a code log ($a)"
	else
		fail "workerd $s: version ids" "code log '$a' ($(field_of wd-log "$s" 4)), none '$b' ($(field_of wd-none "$s" 4))"
	fi
	for run in wd-log wd-none; do
		f=$(ls "$T/$run/$s"-*-cpu.pb.gz 2>/dev/null | head -1)
		l=$([ -n "$f" ] && label_of "$f")
		check "workerd $s, $run: every sample's version label is the id ($l)" \
			test -n "$l" -a "$l" = "$(version_of "$run" "$s")"
	done
done
check "workerd without a code log: the summary says where the versions came from" \
	grep -qE "version ids only from the scripts' own files \(3 of 3 isolates\)" "$T/wd-none.err"
check "workerd without a code log: the profile says so in a comment" \
	bash -c "HOME=\${HOME:-/root} go tool pprof -comments '$(ls "$T"/wd-none/alpha-*-cpu.pb.gz | head -1)' 2>/dev/null |
		grep -q \"^version: [0-9a-f]\\{64\\} (isolate 0x[0-9a-f]*): from its scripts' own files\""
check "workerd without a code log: the summary line says so" \
	grep -qE "isolate 0x[0-9a-f]+ alpha version [0-9a-f]{12} \(pid [0-9]+, version from its files\)" \
	"$T/wd-none.err"

# --- node --------------------------------------------------------------------
mkdir -p "$T/node/lib" "$T/nodelogs"
cp "$FIX"/main.js "$FIX"/esm.mjs "$FIX"/two.js "$T/node/"
cp "$FIX"/lib/two_lib.js "$T/node/lib/"

# capture_node RUN SCRIPT [NODE FLAGS...]: node SCRIPT in $T/node, recorded
capture_node() {
	local run=$1 script=$2 pid
	shift 2
	(cd "$T/node" && exec node "$@" "$script" 12) >"$T/$run.node.log" 2>&1 &
	pid=$!
	sleep 1.5
	record "$run" "$pid"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

NODELOG=(--log-code --log-source-code --logfile-per-isolate --logfile="$T/nodelogs/v8.log")
for script in main.js esm.mjs two.js; do
	capture_node "node-log-$script" "$script" "${NODELOG[@]}"
	capture_node "node-none-$script" "$script"
done
for script in main.js esm.mjs; do
	case $script in
	main.js) name=$T/node/main.js ;;
	esm.mjs) name=file://$T/node/esm.mjs ;;
	esac
	a=$(version_of "node-log-$script" "$name") b=$(version_of "node-none-$script" "$name")
	if [ -n "$a" ] && [ "$a" != unknown ] && [ "$a" = "$b" ] &&
		[ "$(field_of "node-log-$script" "$name" 4)" = code_log ] &&
		[ "$(field_of "node-none-$script" "$name" 4)" = files ]; then
		pass "node $script: the same version id with and without a code log ($a)"
	else
		fail "node $script: version ids" "code log '$a', none '$b' (named $name)"
	fi
	for run in "node-log-$script" "node-none-$script"; do
		f=$(ls "$T/$run/"*-"$(version_of "$run" "$name")"-*-cpu.pb.gz 2>/dev/null | head -1)
		l=$([ -n "$f" ] && label_of "$f")
		check "node $script, $run: every sample's version label is the id ($l)" \
			test -n "$l" -a "$l" = "$(version_of "$run" "$name")"
	done
done
# two files: the log knows both; without it only one file is known, so no id
a=$(awk '$1 ~ /two(_lib)?\.js$/ { print $3; exit }' "$T/node-log-two.js.iso")
b=$(awk '$1 ~ /two(_lib)?\.js$/ { print $3; exit }' "$T/node-none-two.js.iso")
why=$(awk '$1 ~ /two(_lib)?\.js$/ { print $5; exit }' "$T/node-none-two.js.iso")
if [ -n "$a" ] && [ "$a" != unknown ] && [ "$b" = unknown ] && [ "$why" != - ]; then
	pass "node two.js: the code log's id ($a); without the log unknown, and why (${why//_/ })"
else
	fail "node two.js" "code log '$a', none '$b' ($why)"
fi
# whichever of its files the window saw: two scripts, the other one, or what main loads
check "node two.js without a code log: the summary says why there is no id" \
	grep -qE "isolate 0x[0-9a-f]+ \(.*\): no version id: .*(2 scripts|not the script node runs|may load other scripts)" \
	"$T/node-none-two.js.err"
# the id as docs/attribution.md computes it from the file: name, NUL, bytes, NUL
sum=$({ printf '%s\0' "$T/node/main.js"; cat "$T/node/main.js"; printf '\0'; } | sha256sum | cut -c1-12)
check "node main.js: the id is sha256(name NUL file NUL) ($sum)" \
	test "$sum" = "$(version_of node-none-main.js "$T/node/main.js")"
