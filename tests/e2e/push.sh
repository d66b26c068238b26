#!/usr/bin/env bash
# The pusher of `isoprof continuous` (user/push) against a real HTTP store
# that implements Pyroscope's /ingest (tests/fixtures/pyroscope_store.py):
# windows arrive with their name, labels and times, as profiles go tool
# pprof reads; a store that goes away mid-run gets every window once it is
# back, in order; a full spool drops the oldest; a refused window is
# logged and skipped; a killed pusher's spool is sent first by the next
# one, never its half-written or corrupt files; timeouts hold.  The driver
# (tests/fixtures/push_driver.c, ASan+UBSan build) submits windows as the
# continuous command does.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/push.XXXXXX")
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT

STORE=(python3 "$TOP/tests/fixtures/pyroscope_store.py")
DRIVER=$BUILD/asan/fixtures/push_driver
[ -x "$DRIVER" ] || DRIVER=$BUILD/fixtures/push_driver
if [ ! -x "$DRIVER" ]; then
	fail driver "$DRIVER missing: make BUILD=build/asan SANITIZE=1 unit"
	exit 0
fi
if ! command -v go >/dev/null; then
	fail pprof "go not found: go tool pprof is the reference reader"
	exit 0
fi

STORE_PID=
PORT=
# start_store DIR [ARGS...]: the store in the background on $PORT (any free one if empty)
start_store() {
	local dir=$1 out
	shift
	out=$(mktemp "$T/port.XXXXXX")
	"${STORE[@]}" --dir "$dir" --port "${PORT:-0}" "$@" >"$out" 2>"$out.err" &
	STORE_PID=$!
	for _ in $(seq 100); do
		grep -q '^port ' "$out" && break
		sleep 0.05
	done
	PORT=$(awk '/^port /{print $2}' "$out")
	[ -n "$PORT" ] || { cat "$out.err"; return 1; }
}

stop_store() {
	[ -n "$STORE_PID" ] && kill "$STORE_PID" 2>/dev/null && wait "$STORE_PID" 2>/dev/null
	STORE_PID=
}

# driver NAME ARGS...: the driver's stdout in $T/NAME.out, its log in $T/NAME.err
driver() {
	local name=$1
	shift
	"$DRIVER" --url "http://127.0.0.1:$PORT" "$@" >"$T/$name.out" 2>"$T/$name.err"
	local rc=$?
	if ! no_sanitizer_report "$T/$name.err"; then
		cat "$T/$name.err"
		fail "$name" "a sanitizer reported"
		return 1
	fi
	return $rc
}

# counter NAME KEY: a counter from the driver's "stats" line
counter() {
	sed -n 's/^stats //p' "$T/$1.out" | tr ' ' '\n' | sed -n "s/^$2=//p"
}

# arrived DIR: the window label of each stored request, in arrival order
arrived() {
	local f
	for f in "$1"/*.json; do
		[ -e "$f" ] || continue
		python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["labels"]["window"])' "$f"
	done | tr '\n' ' ' | sed 's/ $//'
}

# --- every window arrives, as Pyroscope documents the request -----------------
S=$T/basic
printf 'sekrit-token-42\n' >"$T/token"
start_store "$S" --token-file "$T/token" --tenant team-a || { fail basic "store did not start"; exit 0; }
if driver basic --windows 6 --token-file "$T/token" --tenant team-a --spool "$T/spool-basic"; then
	got=$(arrived "$S")
	if [ "$got" = "0 1 2 3 4 5" ] && [ "$(counter basic pushed)" = 6 ]; then
		pass "6 windows pushed, in order ($got)"
	else
		fail "basic order" "arrived: '$got', $(cat "$T/basic.out")"
	fi
	if python3 - "$S" <<'EOF'; then
import glob, json, sys
ok = True
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    m = json.load(open(f))
    i = int(m["labels"]["window"])
    want_labels = {"window": str(i), "script": "app.js", "version": "v1",
                   "isolate": "0x1000", "pid": "4242", "bad_na_me": "a_b_c"}
    q = m["query"]
    checks = [
        (m["app"] == "my-worker", "app %r" % m["app"]),
        (m["labels"] == want_labels, "labels %r" % m["labels"]),
        (m["from"] == 1700000000 + 10 * i, "from %r" % m["from"]),
        (m["until"] == 1700000000 + 10 * (i + 1), "until %r" % m["until"]),
        (q["format"] == "pprof" and q["spyName"] == "isoprof" and q["sampleRate"] == "100",
         "query %r" % q),
        (m["content_type"] == "application/octet-stream", "content type %r" % m["content_type"]),
        (m["authorized"] and m["tenant"] == "team-a", "token/tenant"),
    ]
    for good, what in checks:
        if not good:
            print("%s: %s" % (f, what))
            ok = False
sys.exit(0 if ok else 1)
EOF
		pass "name, labels (cleaned: bad,na}me= a,b}c → bad_na_me=a_b_c), from/until, format, token and tenant as sent"
	else
		fail "request fields" "see above"
	fi
	bad=0
	for f in "$S"/*.pb.gz; do
		i=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["labels"]["window"])' "${f%.pb.gz}.json")
		raw=$(HOME=${HOME:-/root} go tool pprof -raw "$f" 2>&1)
		# window i: fn_i, i + 1 samples
		if ! grep -q "fn_$i app.js" <<<"$raw" || ! grep -qE "^ +$((i + 1)) +$(((i + 1) * 10000000)): 1 *$" <<<"$raw"; then
			echo "$raw" | head -20
			bad=1
		fi
	done
	[ $bad = 0 ] && pass "go tool pprof -raw reads each body: fn_<i> with i+1 samples" ||
		fail "pprof bodies" "see above"
	if grep -q "sekrit-token" "$T/basic.err" "$T/basic.out" || ls -A "$T/spool-basic" | grep -q .; then
		fail "token and spool" "the token was logged or the spool was not emptied"
	else
		pass "the token is never logged; the spool is empty after the pushes"
	fi
else
	cat "$T/basic.err"
	fail basic "driver exited non-zero"
fi
stop_store

# a wrong token is a 401: the windows are kept and retried (the host's
# credentials are wrong, not the windows), logged without the token; once
# the token is right, they go
PORT=
start_store "$T/auth" --token-file "$T/token"
printf 'wrong\n' >"$T/token2"
driver auth --windows 2 --token-file "$T/token2" --spool "$T/spool-auth" --flush-ms 1500 \
	--close-ms 0
kept=$(find "$T/spool-auth" -type f -name '*.isp' | wc -l)
if [ "$(counter auth rejected)" = 0 ] && [ "$kept" = 2 ] && grep -q "HTTP 401" "$T/auth.err" &&
	! grep -q wrong "$T/auth.err"; then
	pass "a wrong token: HTTP 401 logged without the token, the 2 windows kept in the spool"
else
	fail "wrong token" "kept $kept; $(cat "$T/auth.out" "$T/auth.err")"
fi
driver auth2 --windows 0 --token-file "$T/token" --spool "$T/spool-auth"
if [ "$(counter auth2 pushed)" = 2 ] && [ "$(find "$T/spool-auth" -type f -name '*.isp' | wc -l)" = 0 ]; then
	pass "the right token: the kept windows go"
else
	fail "right token after a wrong one" "$(cat "$T/auth2.out" "$T/auth2.err")"
fi
stop_store

# a 503 keeps the windows (retried, never dropped); they go once the store takes them
S=$T/busy
PORT=
start_store "$S" --status 503
driver busy --windows 2 --spool "$T/spool-busy" --flush-ms 1500 --close-ms 0
stop_store
start_store "$S"
driver busy2 --spool "$T/spool-busy"
got=$(arrived "$S")
if [ "$(counter busy pushed)" = 0 ] && [ "$(counter busy rejected)" = 0 ] && [ "$(counter busy retries)" -ge 1 ] &&
	grep -q "store unreachable (HTTP 503: status 503 as told" "$T/busy.err" && [ "$got" = "0 1" ]; then
	pass "HTTP 503: kept and retried ($(counter busy retries) times in 1.5 s), sent by the next run ($got)"
else
	fail "HTTP 503" "arrived '$got': $(cat "$T/busy.out" "$T/busy.err" "$T/busy2.err")"
fi
stop_store

# TLS is verified: a store with a self-signed certificate gets nothing
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
		-keyout "$T/key.pem" -out "$T/cert.pem" >/dev/null 2>&1
	S=$T/tls
	PORT=
	start_store "$S" --tls-cert "$T/cert.pem" --tls-key "$T/key.pem"
	"$DRIVER" --url "https://127.0.0.1:$PORT" --windows 1 --flush-ms 1000 --close-ms 0 \
		>"$T/tls.out" 2>"$T/tls.err"
	if [ -z "$(arrived "$S")" ] && [ "$(counter tls queued)" = 1 ] &&
		grep -qi "store unreachable (SSL certificate problem" "$T/tls.err"; then
		pass "https with a self-signed certificate: refused by curl's verification, the window kept"
	else
		fail "TLS verification" "$(cat "$T/tls.out" "$T/tls.err")"
	fi
	stop_store
else
	skip "TLS verification" "no openssl to make a certificate"
fi

# --- the store goes away mid-run and comes back on the same port -------------
S=$T/outage
PORT=
start_store "$S"
"$DRIVER" --url "http://127.0.0.1:$PORT" --spool "$T/spool-outage" --windows 20 --interval-ms 150 \
	--flush-ms 60000 >"$T/outage.out" 2>"$T/outage.err" &
dpid=$!
sleep 1
stop_store
sleep 2.5
start_store "$S"
wait $dpid
rc=$?
got=$(arrived "$S")
# a request the store took but whose answer was lost may come twice: in order, no gap
uniq_got=$(tr ' ' '\n' <<<"$got" | uniq | tr '\n' ' ' | sed 's/ $//')
if [ $rc = 0 ] && [ "$uniq_got" = "$(seq -s ' ' 0 19)" ] && no_sanitizer_report "$T/outage.err"; then
	pass "store down for 2.5 s mid-run: all 20 windows arrive, in order, no gap ($(counter outage retries) retries)"
else
	cat "$T/outage.err"
	fail "outage" "rc $rc, arrived '$got'"
fi
if [ "$(grep -c 'store unreachable' "$T/outage.err")" = 1 ] && [ "$(grep -c 'store back after' "$T/outage.err")" = 1 ] &&
	[ "$(grep -c 'isoprof: push:' "$T/outage.err")" = 2 ]; then
	pass "the outage is two log lines: $(grep -o 'store unreachable ([^)]*)' "$T/outage.err"); $(grep -o 'store back.*' "$T/outage.err")"
else
	cat "$T/outage.err"
	fail "outage log" "expected one 'store unreachable' and one 'store back' line"
fi
stop_store

# without a spool: the same, in memory
S=$T/memory
start_store "$S"
stop_store
"$DRIVER" --url "http://127.0.0.1:$PORT" --windows 4 --flush-ms 30000 >"$T/memory.out" 2>"$T/memory.err" &
dpid=$!
sleep 1.5
start_store "$S"
wait $dpid
got=$(arrived "$S")
if [ "$got" = "0 1 2 3" ] && no_sanitizer_report "$T/memory.err"; then
	pass "no spool: the store starts 1.5 s late, the 4 windows held in memory arrive in order"
else
	fail "memory queue" "arrived '$got': $(cat "$T/memory.err")"
fi
stop_store

# --- a full spool drops the oldest ---------------------------------------------
# one window's spool file size first (store down: it stays)
SP=$T/spool-full
driver one --spool "$T/spool-one" --windows 1 --pad 30000 --flush-ms 0 --close-ms 0
size=$(stat -c %s "$T"/spool-one/w-*.isp 2>/dev/null | head -1)
if [ -z "$size" ]; then
	fail "spool size" "no spool file left with the store down: $(cat "$T/one.err")"
else
	max=$((size * 11 / 2))
	driver full --spool "$SP" --max-bytes $max --windows 12 --pad 30000 --flush-ms 0 --close-ms 0
	left=$(ls "$SP" | grep -c '^w-.*\.isp$')
	if [ "$(counter full dropped_full)" = 7 ] && [ "$left" = 5 ] && grep -q "spool full" "$T/full.err"; then
		pass "a spool of 5.5 windows ($max bytes): 12 submitted, the 7 oldest dropped and counted, 5 left"
	else
		fail "spool full" "dropped $(counter full dropped_full), $left files left: $(cat "$T/full.err")"
	fi
	S=$T/full-store
	start_store "$S"
	driver full2 --spool "$SP" --windows 0
	got=$(arrived "$S")
	if [ "$got" = "7 8 9 10 11" ] && [ "$(counter full2 recovered)" = 5 ]; then
		pass "the next run sends the 5 newest it found, in order ($got)"
	else
		fail "spool full, next run" "arrived '$got': $(cat "$T/full2.out" "$T/full2.err")"
	fi
	stop_store
fi

# --- a refused window is logged and skipped; later ones still arrive ----------
S=$T/reject
start_store "$S" --reject-label window=3
driver reject --windows 7 --spool "$T/spool-reject"
got=$(arrived "$S")
line=$(grep 'refused' "$T/reject.err")
if [ "$got" = "0 1 2 4 5 6" ] && [ "$(counter reject rejected)" = 1 ] && [[ $line == *"HTTP 400"* ]] &&
	[[ $line == *'\x1b[31m'* ]] && ! grep -q $'\x1b' "$T/reject.err"; then
	pass "window 3 refused (HTTP 400): one line, the reply escaped, 0 1 2 4 5 6 arrive"
else
	fail "reject" "arrived '$got': $(cat "$T/reject.out" "$T/reject.err" | cat -v)"
fi
stop_store

# --- kill -9 with windows spooled; the next run sends them first ---------------
SP=$T/spool-kill
S=$T/kill-store
start_store "$S"
stop_store
"$DRIVER" --url "http://127.0.0.1:$PORT" --spool "$SP" --windows 5 --hang >"$T/kill.out" 2>"$T/kill.err" &
dpid=$!
for _ in $(seq 100); do
	grep -q submitted "$T/kill.out" && break
	sleep 0.05
done
{ kill -9 $dpid && wait $dpid; } 2>/dev/null
# what a crash leaves: a temporary file of lib/fileio's, and a spool file gone bad
printf 'half a window' >"$SP/.w-00000000000000000001-0000000077.isp.tmp.abcdefghij"
first=$(ls "$SP" | grep '^w-.*\.isp$' | head -1)
head -c 100 "$SP/$first" >"$SP/w-00000000000000000001-0000000078.isp"
start_store "$S"
driver after-kill --spool "$SP" --first 5 --windows 3
got=$(arrived "$S")
if [ "$got" = "0 1 2 3 4 5 6 7" ]; then
	pass "kill -9 with 5 windows spooled: the next run sends them first, then its own ($got)"
else
	fail "kill -9" "arrived '$got': $(cat "$T/after-kill.err")"
fi
if [ ! -e "$SP/.w-00000000000000000001-0000000077.isp.tmp.abcdefghij" ] &&
	[ -e "$SP/w-00000000000000000001-0000000078.isp.corrupt" ] &&
	[ "$(counter after-kill corrupt)" = 1 ] && grep -q "removed 1 half-written" "$T/after-kill.err" &&
	grep -q "not a valid window (checksum mismatch" "$T/after-kill.err"; then
	pass "the torn temporary file is removed unsent; the corrupt file is set aside unsent, with a log line"
else
	ls -la "$SP"
	fail "torn and corrupt files" "$(cat "$T/after-kill.out" "$T/after-kill.err")"
fi
stop_store

# --- a slow store: the request timeout holds, close() ends on time ------------
S=$T/slow
start_store "$S" --slow-ms 5000
start=$(date +%s%N)
driver slow --windows 1 --spool "$T/spool-slow" --timeout-ms 500 --flush-ms 1500 --close-ms 300
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
if [ $rc = 4 ] && [ "$ms" -lt 4000 ] && [ "$(counter slow queued)" = 1 ] && [ "$(counter slow retries)" -ge 1 ] &&
	grep -q "kept in the spool" "$T/slow.err"; then
	pass "a store 5 s slow, 0.5 s timeout: the driver ends in $ms ms, the window kept in the spool"
else
	fail "slow store" "rc $rc after $ms ms: $(cat "$T/slow.out" "$T/slow.err")"
fi
stop_store
