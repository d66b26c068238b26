#!/usr/bin/env bash
# `isoprof merge` and serve's GET /v1/profiles on window files made from
# real captures: the demo's workerd (alpha, beta) under wrk, three
# `record --out-dir` captures, their per-isolate profiles kept under the
# names `continuous --out-dir` gives windows (user/report/window_files.h).
# go tool pprof reads every merged profile: alpha's hot function and not
# beta's, total samples equal to the inputs' sum, time ranges, a corrupt
# window skipped with a note, and the daemon's route with its 404 and 400.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
SERVE_PID=
cleanup() {
	[ -n "$SERVE_PID" ] && kill "$SERVE_PID" 2>/dev/null
	kill $(jobs -p) 2>/dev/null
	demo_stop
	rm -rf "$T"
}
trap cleanup EXIT

# free_ports N: N distinct TCP ports nothing listens on right now
free_ports() {
	python3 -c 'import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()' "$1"
}

# samples_in FILE [pprof args]: total of the samples type, by go tool pprof
samples_in() {
	local f=$1
	shift
	HOME=${HOME:-/root} go tool pprof -raw -sample_index=samples "$@" "$f" 2>/dev/null |
		awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		     on && $1 ~ /^[0-9]+$/ && NF >= 3 { n += $1 } END { print n + 0 }'
}

top_fn() {
	pprof_top "$@" | awk '/^ *flat +flat%/ { getline; print $6; exit }'
}

# stamp UNIX: a window file's start stamp
stamp() {
	date -u -d "@$1" +%Y%m%dT%H%M%SZ
}

read -r PA PB PORT <<<"$(free_ports 3)"
if ! demo_start "$T/wd" "$PA" "$PB"; then
	fail "workerd start" "the demo did not start: $(tail -3 "$T/wd/workerd.log")"
	exit 0
fi
for _ in 1 2 3 4 5; do curl -s "http://127.0.0.1:$PA/" >/dev/null; curl -s "http://127.0.0.1:$PB/" >/dev/null; done
wrk -t1 -c2 -d30s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
wrk -t1 -c2 -d30s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
sleep 2

# Three captures, kept as three consecutive 10 s windows ending a few minutes ago.
W=$T/windows
mkdir -p "$W"
NOW=$(date +%s)
BASE=$(((NOW - 300) / 10 * 10))
declare -a ALPHA_FILES
for i in 0 1 2; do
	"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 2000 --out-dir "$T/rec$i" 2>"$T/rec$i.err"
	rc=$?
	if [ $rc -ne 0 ] || ! no_sanitizer_report "$T/rec$i.err"; then
		fail "record $i" "exit $rc: $(tail -3 "$T/rec$i.err")"
		exit 0
	fi
	for f in "$T/rec$i"/*-cpu.pb.gz; do
		b=$(basename "$f" -cpu.pb.gz)
		case $b in
		no-isolate) script=no-isolate ver=unknown iso=none ;;
		*) script=${b%%-*} rest=${b#*-} ver=${rest%%-*} iso=${rest#*-} ;;
		esac
		name="$(stamp $((BASE + 10 * i)))+10s+$script+$ver+$iso+cpu.pb.gz"
		cp "$f" "$W/$name"
		[ "$script" = alpha ] && ALPHA_FILES+=("$W/$name")
	done
done
ls "$W" >"$T/windows.txt"
if [ ${#ALPHA_FILES[@]} -ge 3 ] && grep -q '+beta+' "$T/windows.txt"; then
	pass "window files of alpha and beta from 3 captures (${#ALPHA_FILES[@]} of alpha)"
else
	fail "window files" "$(cat "$T/windows.txt")"
	exit 0
fi
want=0
for f in "${ALPHA_FILES[@]}"; do
	want=$((want + $(samples_in "$f")))
done

# --- the CLI: a directory, by script
"$ISOPROF" merge --script alpha "$W" >"$T/alpha.pb.gz" 2>"$T/merge.err"
rc=$?
if [ $rc -eq 0 ] && no_sanitizer_report "$T/merge.err" && pprof_top "$T/alpha.pb.gz" >"$T/alpha.top"; then
	pass "merge --script alpha DIR: exit 0, go tool pprof reads it ($(cat "$T/merge.err"))"
else
	fail "merge --script alpha" "exit $rc: $(cat "$T/merge.err")"
fi
top=$(top_fn "$T/alpha.pb.gz")
[ "$top" = fibAlpha ] && ! grep -q sieveBeta "$T/alpha.top" &&
	pass "alpha's hot function on top (fibAlpha), none of beta's" ||
	fail "merged alpha's functions" "top is '$top'; $(head -12 "$T/alpha.top")"
got=$(samples_in "$T/alpha.pb.gz")
[ "$got" -eq "$want" ] && [ "$want" -gt 0 ] &&
	pass "merged samples = sum of the windows' ($got)" ||
	fail "merged samples" "$got, the windows hold $want"
HOME=${HOME:-/root} go tool pprof -raw "$T/alpha.pb.gz" 2>/dev/null | grep -q "merged ${#ALPHA_FILES[@]} profiles" &&
	pass "the merge comment counts the windows" ||
	fail "merge comment" "$(HOME=${HOME:-/root} go tool pprof -raw "$T/alpha.pb.gz" 2>&1 | head -5)"

# the same through go tool pprof's own merge
HOME=${HOME:-/root} go tool pprof -proto "${ALPHA_FILES[@]}" >"$T/go.pb.gz" 2>/dev/null
gotgo=$(samples_in "$T/go.pb.gz")
[ "$gotgo" -eq "$got" ] && pass "go tool pprof -proto of the same files: the same total ($gotgo)" ||
	fail "against go tool pprof -proto" "go: $gotgo, isoprof: $got"

# --- time: the middle window only (RFC 3339 from, unix until), then the last two (relative)
mid=$(samples_in "${ALPHA_FILES[1]}")
from=$(date -u -d "@$((BASE + 10))" +%Y-%m-%dT%H:%M:%SZ)
"$ISOPROF" merge --script alpha --from "$from" --until $((BASE + 20)) -o "$T/mid.pb.gz" "$W" 2>"$T/mid.err"
got=$(samples_in "$T/mid.pb.gz")
[ "$got" -eq "$mid" ] && grep -q "merged 1 profile" "$T/mid.err" &&
	pass "--from RFC 3339 --until unix: the one window in range ($got samples)" ||
	fail "time range" "$got samples, want $mid: $(cat "$T/mid.err")"
last2=$(($(samples_in "${ALPHA_FILES[1]}") + $(samples_in "${ALPHA_FILES[2]}")))
rel=$(($(date +%s) - BASE - 15))
"$ISOPROF" merge --script alpha --from "-${rel}s" "$W" >"$T/last2.pb.gz" 2>"$T/last2.err"
got=$(samples_in "$T/last2.pb.gz")
[ "$got" -eq "$last2" ] && pass "--from -${rel}s: the last two windows ($got samples)" ||
	fail "relative --from" "$got samples, want $last2: $(cat "$T/last2.err")"
"$ISOPROF" merge --script alpha --from -1m "$W" >/dev/null 2>"$T/none.err"
rc=$?
[ $rc -eq 1 ] && grep -q "no window of script alpha" "$T/none.err" &&
	pass "no window in range: exit 1 ($(cat "$T/none.err"))" ||
	fail "none in range" "exit $rc: $(cat "$T/none.err")"
"$ISOPROF" merge --script alpha --from tomorrow "$W" >/dev/null 2>"$T/bad.err"
[ $? -eq 2 ] && grep -q "is not a time" "$T/bad.err" && pass "a bad time: exit 2" ||
	fail "bad time" "$(cat "$T/bad.err")"

# --- a corrupt window is skipped with a note, the rest merged
bad="$(stamp $((BASE + 30)))+10s+alpha+unknown+0x1+cpu.pb.gz"
printf '\x1f\x8bnot a profile' >"$W/$bad"
"$ISOPROF" merge --script alpha "$W" >"$T/skip.pb.gz" 2>"$T/skip.err"
rc=$?
got=$(samples_in "$T/skip.pb.gz")
[ $rc -eq 0 ] && grep -qF "$bad: skipped" "$T/skip.err" && [ "$got" -eq "$want" ] &&
	pass "a corrupt window: skipped with a note naming it, the rest merged" ||
	fail "corrupt window" "exit $rc, $got samples: $(cat "$T/skip.err")"

# --- files named
"$ISOPROF" merge -o "$T/two.pb.gz" "${ALPHA_FILES[0]}" "${ALPHA_FILES[2]}" "$W/$bad" 2>"$T/two.err"
rc=$?
two=$(($(samples_in "${ALPHA_FILES[0]}") + $(samples_in "${ALPHA_FILES[2]}")))
got=$(samples_in "$T/two.pb.gz")
[ $rc -eq 0 ] && [ "$got" -eq "$two" ] && grep -q skipped "$T/two.err" &&
	pass "FILES: two merged ($got samples), the corrupt one skipped" ||
	fail "FILES" "exit $rc, $got samples (want $two): $(cat "$T/two.err")"
"$ISOPROF" merge --help >/dev/null && pass "merge --help" || fail "merge --help" "exit $?"

# --- serve --out-dir: the daemon's unprivileged side reads the windows
chmod 711 "$T"
chmod 755 "$W"
chmod 644 "$W"/*
"$ISOPROF" serve --listen "127.0.0.1:$PORT" --out-dir "$W" 2>"$T/serve.log" &
SERVE_PID=$!
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	sleep 0.1
done
URL="http://127.0.0.1:$PORT/v1/profiles"
code=$(curl -s -o "$T/get.pb.gz" -D "$T/get.hdr" -w '%{http_code}' "$URL?script=alpha")
got=$(samples_in "$T/get.pb.gz")
if [ "$code" = 200 ] && [ "$(head -c 2 "$T/get.pb.gz" | od -An -tx1 | tr -d ' \n')" = 1f8b ] &&
	[ "$got" -eq "$want" ] && [ "$(top_fn "$T/get.pb.gz")" = fibAlpha ]; then
	pass "GET /v1/profiles?script=alpha: 200, gzip pprof, fibAlpha on top, $got samples"
else
	fail "GET /v1/profiles" "HTTP $code, $got samples (want $want): $(head -c 300 "$T/get.pb.gz"; tail -3 "$T/serve.log")"
fi
code=$(curl -s -o "$T/raw.pb" -H 'Accept: application/vnd.google.protobuf' -w '%{http_code}' \
	"$URL?script=alpha&from=$(date -u -d "@$((BASE + 10))" +%Y-%m-%dT%H%%3A%M%%3A%SZ)&until=$((BASE + 20))")
got=$(samples_in "$T/raw.pb")
[ "$code" = 200 ] && [ "$(head -c 2 "$T/raw.pb" | od -An -tx1 | tr -d ' \n')" != 1f8b ] && [ "$got" -eq "$mid" ] &&
	pass "raw protobuf with Accept, from/until: the middle window ($got samples)" ||
	fail "GET raw with a range" "HTTP $code, $got samples (want $mid)"

# error_is NAME QUERY STATUS CODE: the daemon's JSON envelope
error_is() {
	local code why
	code=$(curl -s -o "$T/err.json" -w '%{http_code}' "$URL?$2")
	why=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["success"] is False and d["result"] is None, d
assert d["errors"][0]["code"] == int(sys.argv[2]), d' "$T/err.json" "$4" 2>&1)
	[ "$code" = "$3" ] && [ -z "$why" ] && pass "$1: $3, code $4 ($(cat "$T/err.json"))" ||
		fail "$1" "HTTP $code (want $3): $why $(cat "$T/err.json")"
}
error_is "no window of that script" "script=nosuch" 404 10023
error_is "no window in that time" "script=alpha&from=-10s" 404 10023
error_is "a bad time" "script=alpha&from=yesterday" 400 10002
error_is "from after until" "script=alpha&from=-1h&until=-2h" 400 10003
error_is "no script" "from=-1h" 400 10004
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Origin: http://evil.example' "$URL?script=alpha")
[ "$code" = 403 ] && pass "another Origin: 403, as for the other routes" || fail "Origin" "HTTP $code"
kill "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=
no_sanitizer_report "$T/serve.log" && pass "serve: no sanitizer report" ||
	fail "serve sanitizer" "$(grep -A5 ERROR "$T/serve.log" | head -20)"

# a directory the unprivileged server cannot read: no start, exit 2, why
chmod 700 "$W"
"$ISOPROF" serve --listen "127.0.0.1:$PORT" --out-dir "$W" 2>"$T/serve2.log" &
pid=$!
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill $pid 2>/dev/null
wait $pid
rc=$?
[ $rc -eq 2 ] && grep -qi "nobody.*cannot open it: permission denied" "$T/serve2.log" &&
	pass "serve --out-dir unreadable by the server's user: exit 2 ($(grep -- --out-dir "$T/serve2.log"))" ||
	fail "unreadable --out-dir" "exit $rc: $(cat "$T/serve2.log")"
