#!/usr/bin/env bash
# `isoprof serve`'s pull route, GET /debug/pprof/profile (docs/daemon.md),
# against a real workerd running the demo's two workers under wrk traffic
# (and an idle one): `go tool pprof -top URL` as Go users and Parca call
# it, by script (alpha's hot function, not beta's), by pid, and with no
# parameter at all (30 s of every V8 target: both workers, isolate
# labels); Go's headers; 400s for seconds 0, 51, abc and script with pid;
# 404 for an unknown script, 409 for the idle one, 405 for HEAD; a second
# pull of a running target 429 with Retry-After; the bearer token (curl:
# go tool pprof sends no header).
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"
. "$TOP/tests/serve_lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
PA=$(free_port) PB=$(free_port) PIDLE=$(free_port) PORT=$(free_port) PORT_TOK=$(free_port)
cleanup() {
	kill "${SERVE_PIDS[@]}" $(jobs -p) 2>/dev/null
	demo_stop
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/tmp" "$T/pprof"
export TMPDIR=$T/tmp
# where go tool pprof saves what it fetched
export PPROF_TMPDIR=$T/pprof
BASE=http://127.0.0.1:$PORT
PULL=$BASE/debug/pprof/profile

# pprof_url NAME URL: go tool pprof -top fetches URL; its listing in $T/NAME.top.
# pprof gives a pull 1.5 x seconds + 5 s for the whole answer; the
# sanitizer build, on a test host busy with other runtimes (a workerd of
# 1000 isolates makes record's start and symbolization slow), may need
# more than that, hence -timeout (docs/daemon.md has the release build's
# times).
pprof_url() {
	HOME=$T go tool pprof -timeout=120 -top "$2" >"$T/$1.top" 2>&1
}

# has_fn FUNCTION FILE: FUNCTION is a row of a -top listing
has_fn() {
	awk -v fn="$1" '$6 == fn { found = 1 } END { exit !found }' "$2"
}

# --- workerd: the demo's workers under names unique on this host, and an idle one
ALPHA=pull-alpha-$$.js
BETA=pull-beta-$$.js
IDLE=pull-idle-$$.js
SVC_ALPHA=alpha$$ SVC_BETA=beta$$ SVC_IDLE=idle$$
mkdir -p "$T/wd"
cp "$TOP/scripts/demo/alpha.js" "$T/wd/$ALPHA"
cp "$TOP/scripts/demo/beta.js" "$T/wd/$BETA"
cp "$TOP/tests/fixtures/workerd/idle.js" "$T/wd/$IDLE"
start_wd "$T/wd" "$SVC_ALPHA" "$ALPHA" "$PA" "$SVC_BETA" "$BETA" "$PB" "$SVC_IDLE" "$IDLE" "$PIDLE"
(cd "$T/wd" && exec "$(demo_workerd_bin)" serve config.capnp) >"$T/wd/workerd.log" 2>&1 &
WORKERD_PID=$!
if ! demo_wait_http "http://127.0.0.1:$PA/" || ! demo_wait_http "http://127.0.0.1:$PB/"; then
	tail -5 "$T/wd/workerd.log"
	fail "workerd start" "the demo workers did not start"
	exit 0
fi
for _ in 1 2 3; do curl -s "http://127.0.0.1:$PA/" >/dev/null; curl -s "http://127.0.0.1:$PB/" >/dev/null; done
wrk -t1 -c1 -d300s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
WRK_A=$!
wrk -t1 -c1 -d300s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
WRK_B=$!

if ! start_serve "$PORT" "$T/serve.log"; then
	fail "serve start" "$(cat "$T/serve.log")"
	exit 0
fi

# --- no parameter at all: Go's default, 30 s of every V8 target of the host,
# running while the rest goes on (it is a target of its own)
curl -s -o "$T/all.pb.gz" -w '%{http_code} %{time_total}' "$PULL" >"$T/all.status" &
ALL=$!

# --- by script: what a Go user types ----------------------------------------------------
pprof_url alpha "$PULL?seconds=3&script=$SVC_ALPHA"
if has_fn fibAlpha "$T/alpha.top" && ! has_fn sieveBeta "$T/alpha.top" &&
	[ "$(awk '/^ *flat +flat%/ { getline; print $6; exit }' "$T/alpha.top")" = fibAlpha ]; then
	pass "go tool pprof -top '.../debug/pprof/profile?seconds=3&script=$SVC_ALPHA': fibAlpha on top, no sieveBeta"
else
	head -15 "$T/alpha.top"
	fail "pprof by script" "fibAlpha not on top, or sieveBeta present"
fi

# what Go's net/http/pprof sends; unknown parameters (Go clients add some) and a
# repeat of the same value are taken; the module name and a version too
req GET "$PULL?seconds=2&script=$ALPHA&version=latest&debug=0&seconds=2"
if [ "$STATUS" = 200 ] && is_gzip "$T/body" && [ "$(top_fn "$T/body")" = fibAlpha ] &&
	[ "$(header Content-Type)" = application/octet-stream ] &&
	[ "$(header Content-Disposition)" = 'attachment; filename="profile"' ]; then
	pass "200, gzip, application/octet-stream, attachment; filename=\"profile\" (as Go's net/http/pprof)"
else
	fail "pull headers" "HTTP $STATUS, $(header Content-Type), $(header Content-Disposition), top '$(top_fn "$T/body")'"
fi

# --- by pid: both workers of that workerd -------------------------------------------------
pprof_url pid "$PULL?seconds=3&pid=$WORKERD_PID"
if has_fn fibAlpha "$T/pid.top" && has_fn sieveBeta "$T/pid.top"; then
	pass "?pid=$WORKERD_PID: the process's two workers (fibAlpha and sieveBeta)"
else
	head -15 "$T/pid.top"
	fail "pprof by pid" "fibAlpha or sieveBeta missing"
fi

# --- errors: the daemon's envelope ---------------------------------------------------------
req GET "$PULL?seconds=0&script=$SVC_ALPHA"
envelope_ok "seconds=0" 400 10003 "1 to 50"
req GET "$PULL?seconds=51"
envelope_ok "seconds=51 (past the daemon's 50 s)" 400 10003 "1 to 50"
req GET "$PULL?seconds=abc"
envelope_ok "seconds=abc" 400 10002 seconds
req GET "$PULL?seconds=3&seconds=4"
envelope_ok "seconds twice, two values" 400 10006 twice
req GET "$PULL?script=$SVC_ALPHA&pid=$WORKERD_PID"
envelope_ok "script and pid together" 400 10006 "not both"
req GET "$PULL?seconds=1&script=no-such-$$"
envelope_ok "unknown script" 404 10020 "no-such-$$"
req GET "$PULL?seconds=1&script=$SVC_IDLE"
envelope_ok "a worker with no traffic" 409 10030 retry
req HEAD "$PULL?seconds=1"
[ "$STATUS" = 405 ] && [ "$(header Allow)" = GET ] && pass "HEAD: 405, Allow: GET" ||
	fail "HEAD" "HTTP $STATUS, Allow '$(header Allow)'"
req POST "$PULL?seconds=1"
envelope_ok "POST" 405 10022 GET
req GET "$PULL?seconds=1" -H 'Host: rebound.example'
envelope_ok "a non-loopback Host without a token" 403 10012

# --- one capture per target: a second pull of the same one gets 429 -------------------------
curl -s -o "$T/first.pb.gz" -w '%{http_code}' "$PULL?seconds=4&script=$SVC_ALPHA" >"$T/first.status" &
FIRST=$!
sleep 1.5
req GET "$PULL?seconds=1&script=$SVC_ALPHA"
envelope_ok "a second pull of a running target" 429 10050 "$SVC_ALPHA"
ra=$(header Retry-After)
if [[ $ra =~ ^[0-9]+$ ]] && [ "$ra" -ge 1 ] && [ "$ra" -le 4 ]; then
	pass "429 Retry-After $ra s (what is left of the running pull)"
else
	fail "Retry-After" "'$ra'"
fi
wait $FIRST
[ "$(cat "$T/first.status")" = 200 ] && [ "$(top_fn "$T/first.pb.gz")" = fibAlpha ] &&
	pass "the first of the two pulls: 200, fibAlpha" || fail "first pull" "HTTP $(cat "$T/first.status")"

# --- bearer token: the same rules as the POST route -------------------------------------------
head -c 24 /dev/urandom | base64 >"$T/token"
chmod 600 "$T/token"
TOKEN=$(head -1 "$T/token")
if start_serve "$PORT_TOK" "$T/tok.log" --token-file "$T/token"; then
	B=http://127.0.0.1:$PORT_TOK/debug/pprof/profile
	req GET "$B?seconds=1&script=$SVC_ALPHA"
	envelope_ok "token daemon: no Authorization" 401 10010
	req GET "$B?seconds=1&script=$SVC_ALPHA" -H "Authorization: Bearer ${TOKEN}x"
	envelope_ok "token daemon: wrong token" 403 10011
	req GET "$B?seconds=2&script=$SVC_ALPHA" -H "Authorization: Bearer $TOKEN"
	[ "$STATUS" = 200 ] && [ "$(top_fn "$T/body")" = fibAlpha ] &&
		pass "token daemon: curl with the bearer token pulls alpha's profile" ||
		fail "token pull" "HTTP $STATUS $(head -c 200 "$T/body")"
	grep -q "$TOKEN" "$T/tok.log" && fail "token in the log" "the daemon logged it" ||
		pass "the token never reaches the log"
else
	fail "token daemon" "did not start: $(cat "$T/tok.log")"
fi

# --- the pull with no parameter ------------------------------------------------------------------
wait $ALL
read -r all_status took <"$T/all.status"
took=${took%.*}
pprof_top "$T/all.pb.gz" >"$T/all.top"
tags=$(HOME=$T go tool pprof -tags "$T/all.pb.gz" 2>/dev/null)
if [ "$all_status" = 200 ] && [ "${took:-0}" -ge 30 ] && has_fn fibAlpha "$T/all.top" &&
	has_fn sieveBeta "$T/all.top" && grep -q ' isolate:' <<<"$tags"; then
	pass "no parameter: 30 s (${took} s with symbolization) of every V8 target: fibAlpha and sieveBeta, isolate labels"
else
	head -15 "$T/all.top"
	fail "pull with no parameter" "HTTP $all_status, ${took} s, labels: $(grep -c isolate <<<"$tags")"
fi

# --- the log: one line per pull, with what record did ------------------------------------------
if grep -qE "^isoprof serve: 127\.0\.0\.1 GET /debug/pprof/profile 200 [0-9]+ ms \(record cpu 3000 ms: exit 0\)" "$T/serve.log"; then
	pass "log: GET /debug/pprof/profile 200 (record cpu 3000 ms: exit 0)"
else
	fail "request log" "$(grep debug/pprof "$T/serve.log" | head -3)"
fi

# what each pull took, window included (for docs/daemon.md's times)
grep -E 'GET /debug/pprof/profile[^ ]* 200 ' "$T/serve.log" | sed 's/^isoprof serve: /measured: /'
kill $WRK_A $WRK_B 2>/dev/null
for log in "$T/serve.log" "$T/tok.log"; do
	[ -f "$log" ] || continue
	no_sanitizer_report "$log" || { fail "sanitizers" "report in $log"; grep -A20 ERROR "$log" | head -40; }
done
[ "$(ls "$TMPDIR" | grep -c isoprof-serve)" = 0 ] && pass "no temporary directory left behind" ||
	fail "temp dirs" "$(ls "$TMPDIR")"
exit 0
