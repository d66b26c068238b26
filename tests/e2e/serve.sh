#!/usr/bin/env bash
# `isoprof serve` (docs/daemon.md) against the real workerd demo under wrk
# traffic: captures through the HTTP API read back by `go tool pprof`, raw
# and gzip, heap with and without an inspector, every error class with its
# status and JSON envelope (python3 reads it), one capture per target, the
# capture slots and the rate limit, bearer tokens, the loopback rule, a
# clean stop with a capture running, and the page in Chromium
# (tests/browser/serve_page.js).
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"
. "$TOP/tests/serve_lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
PA=18971 PB=18972 PI=18973 PIDLE=18974 PORT=18975 PORT_TOK=18976 PORT_LIM=18977 PORT_STOP=18978
IDLE_WD=
cleanup() {
	kill "${SERVE_PIDS[@]}" $(jobs -p) 2>/dev/null
	[ -n "$IDLE_WD" ] && kill "$IDLE_WD" 2>/dev/null
	demo_stop
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/tmp"
export TMPDIR=$T/tmp
BASE=http://127.0.0.1:$PORT

profile_url() {
	echo "$1/accounts/local/workers/workers/$2/versions/${3:-latest}/profile"
}

# --- workerd: the demo's two workers (inspector on), and an idle one (no inspector)
ALPHA=serve-alpha-$$.js
BETA=serve-beta-$$.js
IDLE=serve-idle-$$.js
SVC_ALPHA=alpha$$
mkdir -p "$T/wd" "$T/idle"
cp "$TOP/scripts/demo/alpha.js" "$T/wd/$ALPHA"
cp "$TOP/scripts/demo/beta.js" "$T/wd/$BETA"
cp "$TOP/tests/fixtures/workerd/idle.js" "$T/idle/$IDLE"
start_wd "$T/wd" "$SVC_ALPHA" "$ALPHA" $PA "beta$$" "$BETA" $PB
start_wd "$T/idle" "idle$$" "$IDLE" $PIDLE
(cd "$T/wd" && exec "$(demo_workerd_bin)" serve config.capnp --inspector-addr="127.0.0.1:$PI") \
	>"$T/wd/workerd.log" 2>&1 &
WORKERD_PID=$!
if ! demo_wait_http "http://127.0.0.1:$PA/" || ! demo_wait_http "http://127.0.0.1:$PB/"; then
	tail -5 "$T/wd/workerd.log"
	fail "workerd start" "the demo workers did not start"
	exit 0
fi
DEMO_PID=$WORKERD_PID
(cd "$T/idle" && exec "$(demo_workerd_bin)" serve config.capnp) >"$T/idle/workerd.log" 2>&1 &
IDLE_WD=$!
WORKERD_PID=$IDLE_WD demo_wait_http "http://127.0.0.1:$PIDLE/" || fail "idle workerd" "did not start"
WORKERD_PID=$DEMO_PID
for _ in 1 2 3; do curl -s "http://127.0.0.1:$PA/" >/dev/null; curl -s "http://127.0.0.1:$PB/" >/dev/null; done
wrk -t1 -c2 -d300s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
WRK=$!

# --- the daemon: start-up rules ---------------------------------------------------
"$ISOPROF" serve --listen 0.0.0.0:$PORT 2>"$T/nonloop.err"
rc=$?
if [ $rc -eq 2 ] && grep -q 'token-file' "$T/nonloop.err" && ! curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
	pass "a non-loopback --listen without --token-file is refused at start (exit 2)"
else
	fail "non-loopback listen" "exit $rc: $(cat "$T/nonloop.err")"
fi
head -c 24 /dev/urandom | base64 >"$T/token"
TOKEN=$(head -1 "$T/token")
chmod 644 "$T/token"
"$ISOPROF" serve --listen 127.0.0.1:$PORT_TOK --token-file "$T/token" 2>"$T/tokperm.err"
rc=$?
if [ $rc -eq 2 ] && grep -q 'chmod 600' "$T/tokperm.err"; then
	pass "a token file others can read is refused (exit 2)"
else
	fail "token file permissions" "exit $rc: $(cat "$T/tokperm.err")"
fi
chmod 600 "$T/token"

if ! start_serve $PORT "$T/serve.log"; then
	fail "serve start" "$(cat "$T/serve.log")"
	exit 0
fi
pass "serve listens on 127.0.0.1:$PORT"

# --- page and targets -------------------------------------------------------------
req GET "$BASE/"
if [ "$STATUS" = 200 ] && [[ $(header Content-Type) == text/html* ]] && grep -q 'id="target"' "$T/body"; then
	pass "GET / serves the page"
else
	fail "GET /" "HTTP $STATUS $(header Content-Type)"
fi
req GET "$BASE/app.js"
[ "$STATUS" = 200 ] && grep -q 'v1/targets' "$T/body" && pass "GET /app.js serves the page's script" ||
	fail "GET /app.js" "HTTP $STATUS"
req GET "$BASE/v1/targets"
if [ "$STATUS" = 200 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
pids = [p["pid"] for p in d]
assert int(sys.argv[2]) in pids, pids
# isolates are shown by service name; the module is among their scripts
names = [s["name"] for p in d if p["pid"] == int(sys.argv[2]) for l in p.get("code_logs", [])
         for s in (l.get("scripts") or [])]
assert sys.argv[3] in names, names
' "$T/body" "$DEMO_PID" "$ALPHA"; then
	pass "GET /v1/targets: the JSON of isoprof targets --json, with the workerd pid $DEMO_PID and $ALPHA"
else
	fail "GET /v1/targets" "HTTP $STATUS $(head -c 300 "$T/body")"
fi

# --- captures -----------------------------------------------------------------------
req POST "$(profile_url "$BASE" $ALPHA)" -d '{"duration_ms": 2000}'
pprof_top "$T/body" >"$T/alpha.top"
fn=$(top_fn "$T/body")
if [ "$STATUS" = 200 ] && is_gzip "$T/body" && [ "$fn" = fibAlpha ]; then
	pass "POST profile $ALPHA latest 2000 ms: 200, gzip pprof, go tool pprof -top has fibAlpha on top"
else
	head -12 "$T/alpha.top"
	fail "capture $ALPHA" "HTTP $STATUS, top '$fn', $(head -c 200 "$T/body")"
fi
req POST "$(profile_url "$BASE" $ALPHA)" -d '{"duration_ms": 1000, "profile_type": "cpu"}' \
	-H 'Accept: application/vnd.google.protobuf'
fn=$(top_fn "$T/body")
if [ "$STATUS" = 200 ] && ! is_gzip "$T/body" && [ "$fn" = fibAlpha ] &&
	[ "$(header Content-Type)" = application/vnd.google.protobuf ]; then
	pass "Accept: application/vnd.google.protobuf: raw protobuf, go tool pprof reads it"
else
	fail "raw capture" "HTTP $STATUS, top '$fn', $(header Content-Type)"
fi
# {script} may be the workerd service name (issue 14): isoprof reads the
# config workerd runs and matches services to isolates by content.
req POST "$(profile_url "$BASE" $SVC_ALPHA)" -d '{"duration_ms": 1000}'
if [ "$STATUS" = 200 ] && [ "$(top_fn "$T/body")" = fibAlpha ]; then
	pass "the service name $SVC_ALPHA as {script}: 200, alpha's profile"
else
	fail "service name $SVC_ALPHA" "HTTP $STATUS: $(head -c 300 "$T/body")"
fi
# a namespace no worker of the config declares: 404, naming those present (none)
ACTOR=$(printf '%064x' 48879)
req POST "$(profile_url "$BASE" $ALPHA)" -d "{\"duration_ms\": 1000, \"namespace_id\": \"Counter\", \"actor_id\": \"$ACTOR\"}"
envelope_ok "namespace_id of no declared namespace" 404 10020 "namespaces: none"

# heap: through the demo's inspector, and refused where there is none.  On
# beta, which allocates per request (fibAlpha allocates nothing, so alpha's
# heap profile may hold no JS frame to map it to its isolate by).
wrk -t1 -c1 -d5s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
wrk_beta=$!
sleep 1
req POST "$(profile_url "$BASE" $BETA)" -d '{"duration_ms": 2000, "profile_type": "heap"}'
wait $wrk_beta
pprof_top "$T/body" -sample_index=alloc_space >"$T/heap.top"
if [ "$STATUS" = 200 ] && is_gzip "$T/body" && grep -q 'flat%' "$T/heap.top" &&
	grep -q "$BETA" <(HOME=${HOME:-/root} go tool pprof -raw "$T/body" 2>/dev/null); then
	pass "heap capture: 200, go tool pprof -sample_index=alloc_space reads it"
else
	head -5 "$T/heap.top"
	fail "heap capture" "HTTP $STATUS $(head -c 300 "$T/body")"
fi

# --- error classes -------------------------------------------------------------------
U=$(profile_url "$BASE" $ALPHA)
req POST "$U" -d '{"duration_ms": 2000'
envelope_ok "malformed JSON" 400 10001
req POST "$U" -d '[2000]'
envelope_ok "a JSON array, not an object" 400 10001
req POST "$U" -d '{"duration_ms": "2000"}'
envelope_ok "duration_ms as a string" 400 10002 duration_ms
req POST "$U" -d '{"duration_ms": 2000.5}'
envelope_ok "duration_ms not an integer" 400 10002 duration_ms
req POST "$U" -d '{"duration_ms": 2000, "profile_type": 1}'
envelope_ok "profile_type not a string" 400 10002 profile_type
req POST "$U" -d '{"duration_ms": 2000, "profile_type": "wall"}'
envelope_ok "profile_type unknown" 400 10003 profile_type
req POST "$U" -d '{"duration_ms": 999}'
envelope_ok "duration_ms 999" 400 10003 1000
req POST "$U" -d '{"duration_ms": 50001}'
envelope_ok "duration_ms 50001" 400 10003 50000
req POST "$U" -d '{"profile_type": "cpu"}'
envelope_ok "duration_ms missing" 400 10004 duration_ms
req POST "$U" -d '{"duration_ms": 2000, "namespace_id": "Counter"}'
envelope_ok "namespace_id without actor_id" 400 10005 actor_id
req POST "$U" -d "{\"duration_ms\": 2000, \"namespace_id\": \"Counter\", \"actor_id\": \"${ACTOR:1}\"}"
envelope_ok "actor_id of 63 hex digits" 400 10005 "64 hex"
req POST "$U" -d "{\"duration_ms\": 2000, \"namespace_id\": \"Counter\", \"actor_id\": \"${ACTOR:1}z\"}"
envelope_ok "actor_id not hex" 400 10005 "64 hex"
req POST "$(profile_url "$BASE" 'bad%zzname')" -d '{"duration_ms": 1000}'
envelope_ok "bad percent-encoding in the path" 400 10006
req POST "$(profile_url "$BASE" no-such-script-$$)" -d '{"duration_ms": 1000}'
envelope_ok "unknown script" 404 10020 "no-such-script-$$"
req POST "$(profile_url "$BASE" "dir%2Fno-such-$$.js")" -d '{"duration_ms": 1000}'
envelope_ok "an encoded '/' stays in the script name" 404 10020 "dir/no-such-$$.js"
req POST "$(profile_url "$BASE" $ALPHA ffffffffffff)" -d '{"duration_ms": 1000}'
envelope_ok "unknown version" 404 10020
req POST "$(profile_url "$BASE" $IDLE)" -d '{"duration_ms": 1000}'
envelope_ok "idle worker (no traffic)" 409 10030 "retry"
wrk -t1 -c1 -d3s "http://127.0.0.1:$PIDLE/" >/dev/null 2>&1 &
IDLE_WRK=$!
req POST "$(profile_url "$BASE" $IDLE)" -d '{"duration_ms": 1000, "profile_type": "heap"}'
envelope_ok "heap without an inspector" 503 10071 "--inspector-addr"
wait $IDLE_WRK
head -c 100000 /dev/zero | tr '\0' ' ' >"$T/huge"
req POST "$U" --data-binary @"$T/huge"
envelope_ok "100 kB body" 413 10040 16384
req POST "$U" --data-binary @"$T/huge" -H 'Transfer-Encoding: chunked'
envelope_ok "100 kB chunked body" 413 10040 16384
req GET "$BASE/accounts/local/workers/workers"
envelope_ok "unknown path" 404 10021
req POST "$BASE/nope"
envelope_ok "POST to an unknown path" 404 10021
req GET "$U"
envelope_ok "GET on the profile path" 405 10022
[ "$(header Allow)" = POST ] && pass "405 says Allow: POST" || fail "405 Allow" "'$(header Allow)'"
req DELETE "$BASE/v1/targets"
envelope_ok "DELETE /v1/targets" 405 10022
[ "$(header Allow)" = "GET, HEAD" ] && pass "405 says Allow: GET, HEAD" || fail "405 Allow" "'$(header Allow)'"
req POST "$U" -d '{"duration_ms": 1000}' -H 'Origin: http://evil.example'
envelope_ok "a cross-site Origin without a token" 403 10012
req GET "$BASE/v1/targets" -H 'Host: rebound.example'
envelope_ok "a non-loopback Host without a token (DNS rebinding)" 403 10012

# one capture per target: the second gets 429 with the seconds left
curl -s -o "$T/first.body" -w '%{http_code}' -d '{"duration_ms": 4000}' "$U" >"$T/first.status" &
FIRST=$!
sleep 1
req POST "$U" -d '{"duration_ms": 1000}'
envelope_ok "a second capture of a running target" 429 10050
ra=$(header Retry-After)
if [[ $ra =~ ^[0-9]+$ ]] && [ "$ra" -ge 1 ] && [ "$ra" -le 4 ]; then
	pass "429 Retry-After $ra s (what is left of the running capture)"
else
	fail "Retry-After" "'$ra'"
fi
wait $FIRST
if [ "$(cat "$T/first.status")" = 200 ] && is_gzip "$T/first.body"; then
	pass "the first of two simultaneous captures: 200"
else
	fail "first capture" "HTTP $(cat "$T/first.status")"
fi

# --- slots and the rate limit --------------------------------------------------------
if start_serve $PORT_LIM "$T/lim.log" --max-captures 1 --rate-limit 3/300; then
	L=http://127.0.0.1:$PORT_LIM
	curl -s -o /dev/null -d '{"duration_ms": 3000}' "$(profile_url "$L" $ALPHA)" &
	BG=$!
	sleep 1
	req POST "$(profile_url "$L" beta.js)" -d '{"duration_ms": 1000}'
	envelope_ok "--max-captures 1: another target while one runs" 429 10052
	[[ $(header Retry-After) =~ ^[1-3]$ ]] && pass "slots full: Retry-After $(header Retry-After)" ||
		fail "slots Retry-After" "'$(header Retry-After)'"
	wait $BG
	req POST "$(profile_url "$L" no-such-$$)" -d '{"duration_ms": 1000}'
	s2=$STATUS
	req POST "$(profile_url "$L" no-such-$$)" -d '{"duration_ms": 1000}'
	s3=$STATUS
	req POST "$(profile_url "$L" no-such-$$)" -d '{"duration_ms": 1000}'
	envelope_ok "--rate-limit 3/300: the fourth capture" 429 10051
	ra=$(header Retry-After)
	if [ "$s2$s3" = 404404 ] && [[ $ra =~ ^[0-9]+$ ]] && [ "$ra" -ge 90 ] && [ "$ra" -le 100 ]; then
		pass "rate limit: captures 2 and 3 ran (404), then Retry-After $ra s (one token per 100 s)"
	else
		fail "rate limit" "statuses $s2 $s3, Retry-After '$ra'"
	fi
else
	fail "limited daemon" "did not start: $(cat "$T/lim.log")"
fi

# --- bearer token ---------------------------------------------------------------------
if start_serve $PORT_TOK "$T/tok.log" --token-file "$T/token"; then
	B=http://127.0.0.1:$PORT_TOK
	req GET "$B/v1/targets"
	envelope_ok "token daemon: no Authorization" 401 10010
	[[ $(header WWW-Authenticate) == Bearer* ]] && pass "401 carries WWW-Authenticate: Bearer" ||
		fail "WWW-Authenticate" "'$(header WWW-Authenticate)'"
	req POST "$(profile_url "$B" $ALPHA)" -d '{"duration_ms": 1000}' -H "Authorization: Bearer ${TOKEN}x"
	envelope_ok "token daemon: wrong token" 403 10011
	req POST "$(profile_url "$B" $ALPHA)" -d '{"duration_ms": 1000}' -H "Authorization: Basic $TOKEN"
	envelope_ok "token daemon: not a bearer credential" 401 10010
	req GET "$B/v1/targets" -H "Authorization: Bearer $TOKEN"
	[ "$STATUS" = 200 ] && pass "token daemon: the right token lists targets" ||
		fail "right token targets" "HTTP $STATUS"
	req POST "$(profile_url "$B" $ALPHA)" -d '{"duration_ms": 1000}' -H "Authorization: Bearer $TOKEN"
	[ "$STATUS" = 200 ] && [ "$(top_fn "$T/body")" = fibAlpha ] &&
		pass "token daemon: the right token captures" || fail "right token capture" "HTTP $STATUS"
	req GET "$B/"
	[ "$STATUS" = 200 ] && pass "token daemon: the page itself needs no token" ||
		fail "token daemon page" "HTTP $STATUS"
	if grep -q "$TOKEN" "$T/tok.log"; then
		fail "token in the log" "the daemon logged the token"
	else
		pass "the token never reaches the log"
	fi
else
	fail "token daemon" "did not start: $(cat "$T/tok.log")"
fi

# --- the page in a browser -------------------------------------------------------------
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
SHOTS=$BUILD/screenshots
mkdir -p "$SHOTS"
if [ ! -x "$CHROMIUM" ]; then
	fail browser "$CHROMIUM missing: run scripts/setup.sh (package chromium)"
elif ! NODE_PATH=$(bash "$TOP/scripts/install-playwright.sh"); then
	fail browser "cannot install playwright-core (scripts/install-playwright.sh)"
else
	export NODE_PATH CHROMIUM
	timeout 180 node "$TOP/tests/browser/serve_page.js" "$BASE/" "$SVC_ALPHA" fibAlpha "$SHOTS" "$T/page" \
		>"$T/browser.out" 2>&1
	brc=$?
	while read -r status rest; do
		case $status in
		ok) pass "browser: $rest" ;;
		FAIL) fail "browser: ${rest%%: *}" "${rest#*: }" ;;
		*) echo "$status $rest" ;;
		esac
	done <"$T/browser.out"
	if [ $brc -ne 0 ] && ! grep -q '^FAIL' "$T/browser.out"; then
		fail browser "serve_page.js exited $brc"
	fi
	if [ -s "$T/page/download.pb.gz" ]; then
		[ "$(top_fn "$T/page/download.pb.gz")" = fibAlpha ] &&
			pass "browser: the downloaded pprof reads in go tool pprof, fibAlpha on top" ||
			fail "browser download" "go tool pprof: $(pprof_top "$T/page/download.pb.gz" | head -3)"
	fi
	[ -s "$SHOTS/serve-page.png" ] && echo "screenshot: $SHOTS/serve-page.png"
fi

# --- the log: one line per request, no token ----------------------------------------------
n=$(grep -c '^isoprof serve: 127.0.0.1 ' "$T/serve.log")
if [ "$n" -ge 40 ] && grep -qE '^isoprof serve: 127\.0\.0\.1 POST /accounts/local/workers/workers/serve-alpha-[0-9]+\.js/versions/latest/profile 200 [0-9]+ ms' "$T/serve.log"; then
	pass "one log line per request ($n): method, path, status, duration"
else
	fail "request log" "$n lines"
	tail -5 "$T/serve.log"
fi

# --- stop with a capture running: the child is stopped, its directory removed --------------
if start_serve $PORT_STOP "$T/stop.log"; then
	curl -s -o "$T/stop.body" -w '%{http_code}' -d '{"duration_ms": 20000}' \
		"$(profile_url "http://127.0.0.1:$PORT_STOP" $ALPHA)" >"$T/stop.status" &
	CURL=$!
	sleep 2
	child=$(pgrep -f -- "record --script=$ALPHA --version=latest --duration-ms=20000" | head -1)
	ls "$TMPDIR" | grep -q isoprof-serve && had_dir=1 || had_dir=0
	SP=${SERVE_PIDS[-1]}
	t0=$(date +%s)
	kill -TERM "$SP"
	wait "$SP"
	src=$?
	t1=$(date +%s)
	wait $CURL
	left=$(ls "$TMPDIR" | grep -c isoprof-serve)
	if [ -n "$child" ] && [ "$had_dir" = 1 ] && [ $src -eq 0 ] && [ $((t1 - t0)) -le 6 ] &&
		! kill -0 "$child" 2>/dev/null && [ "$left" = 0 ]; then
		pass "SIGTERM with a capture running: child $child stopped, temp dir removed, exit 0 in $((t1 - t0)) s (client got $(cat "$T/stop.status"))"
	else
		fail "stop" "child '$child' alive? $(kill -0 "$child" 2>/dev/null && echo yes), exit $src, $((t1 - t0)) s, dirs left $left, had $had_dir"
	fi
else
	fail "stop daemon" "did not start"
fi

for log in "$T/serve.log" "$T/lim.log" "$T/tok.log" "$T/stop.log"; do
	[ -f "$log" ] || continue
	no_sanitizer_report "$log" || { fail "sanitizers" "report in $log"; grep -A20 ERROR "$log" | head -40; }
done
[ "$(ls "$TMPDIR" | grep -c isoprof-serve)" = 0 ] && pass "no temporary directory left behind" ||
	fail "temp dirs" "$(ls "$TMPDIR")"
kill $WRK 2>/dev/null
exit 0
