#!/usr/bin/env bash
# `isoprof serve` against a hostile network and host (docs/daemon.md,
# "Privilege split", "Security"; issue 12): the process that accepts HTTP
# is not root (no capabilities, NoNewPrivs) while captures still work
# through the root helper; 200 half-open connections from 127.0.0.2 do not
# lock out a client on 127.0.0.1 and are closed at the request deadline; a
# short token is refused at start; wrong tokens are backed off per
# address; nosniff and the page's CSP; a unix-socket listener; stale
# temporary directories of a SIGKILLed daemon are removed at the next start
# (and nothing of another user's, nor a symlink); `record` children run
# under the data-size limit (release build: ASan cannot run under one); a
# daemon started as nobody says once that there is no split; a daemon whose
# helper is killed stops.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
cd "$T" || exit 1
PA=18961 PORT=18962 PORT_TOK=18963 PORT_REL=18964 PORT_KILL=18965
SERVE_PIDS=()
HOLD=
cleanup() {
	[ -n "$HOLD" ] && kill "$HOLD" 2>/dev/null
	kill "${SERVE_PIDS[@]}" $(jobs -p) 2>/dev/null
	demo_stop
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/tmp"
export TMPDIR=$T/tmp
BASE=http://127.0.0.1:$PORT
RELEASE=$TOP/build/isoprof

if [ "$(id -u)" != 0 ]; then
	fail root "the privilege split needs a daemon started as root"
	exit 0
fi
if ! getent passwd nobody >/dev/null; then
	fail nobody "no user nobody on this host"
	exit 0
fi

# start_serve BIN PORT|unix:PATH LOG [ARGS...]: a daemon in the background; waits until it answers
start_serve() {
	local bin=$1 where=$2 log=$3 listen curlargs url
	shift 3
	if [[ $where == unix:* ]]; then
		listen=$where url=http://localhost/ curlargs=(--unix-socket "${where#unix:}")
	else
		listen=127.0.0.1:$where url=http://127.0.0.1:$where/ curlargs=()
	fi
	"$bin" serve --listen "$listen" "$@" 2>"$log" &
	SERVE_PIDS+=($!)
	for _ in $(seq 100); do
		curl -s -o /dev/null "${curlargs[@]}" "$url" && return 0
		kill -0 "${SERVE_PIDS[-1]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

req() {
	local method=$1 url=$2
	shift 2
	STATUS=$(curl -s -m 30 -X "$method" -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" "$url")
}

header() {
	grep -i "^$1:" "$T/hdr" | head -1 | sed -e 's/^[^:]*: *//' -e 's/\r$//'
}

code_of() {
	python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"][0]["code"])' "$T/body" 2>/dev/null
}

profile_url() {
	echo "$1/accounts/local/workers/workers/$2/versions/latest/profile"
}

top_fn() {
	pprof_top "$@" | awk '/^ *flat +flat%/ { getline; print $6; exit }'
}

status_field() {
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status" 2>/dev/null
}

# the pids holding TCP listening socket PORT
listeners() {
	ss -Hltnp "sport = :$1" | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u
}

# --- workerd: the demo's alpha under a name unique to this run ------------------------
ALPHA=hostile-alpha-$$.js
mkdir -p "$T/wd/v8logs"
cp "$TOP/scripts/demo/alpha.js" "$T/wd/$ALPHA"
cat >"$T/wd/config.capnp" <<EOF
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "alpha", worker = .alpha) ],
  sockets = [ (name = "http", address = "127.0.0.1:$PA", http = (), service = "alpha") ],
  v8Flags = [ "--perf-basic-prof", "--interpreted-frames-native-stack", "--log-code",
              "--logfile-per-isolate", "--logfile=$T/wd/v8logs/v8.log" ],
);
const alpha :Workerd.Worker = ( modules = [ (name = "$ALPHA", esModule = embed "$ALPHA") ],
  compatibilityDate = "2024-01-01" );
EOF
(cd "$T/wd" && exec "$(demo_workerd_bin)" serve config.capnp) >"$T/wd/workerd.log" 2>&1 &
WORKERD_PID=$!
if ! demo_wait_http "http://127.0.0.1:$PA/"; then
	tail -5 "$T/wd/workerd.log"
	fail "workerd start" "the demo worker did not start"
	exit 0
fi
wrk -t1 -c2 -d300s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &

# --- start-up refusals -------------------------------------------------------------------
printf 'short-token-of-20-ch\n' >"$T/short"
chmod 600 "$T/short"
"$ISOPROF" serve --listen 127.0.0.1:$PORT_TOK --token-file "$T/short" 2>"$T/short.err"
rc=$?
if [ $rc -eq 2 ] && grep -q 'at least 32' "$T/short.err" && ! curl -s -o /dev/null "http://127.0.0.1:$PORT_TOK/"; then
	pass "a 20-character token is refused at start (exit 2): $(head -1 "$T/short.err")"
else
	fail "short token" "exit $rc: $(cat "$T/short.err")"
fi
"$ISOPROF" serve --listen 127.0.0.1:$PORT_TOK --user root 2>"$T/rootuser.err"
rc=$?
[ $rc -eq 2 ] && grep -q 'uid 0' "$T/rootuser.err" && pass "--user root is refused (exit 2)" ||
	fail "--user root" "exit $rc: $(cat "$T/rootuser.err")"

# --- stale directories: a killed daemon's, and what must never be touched ----------------------
# A daemon SIGKILLed (with its helper and record child) during a capture leaves its directory.
if start_serve "$ISOPROF" $PORT_KILL "$T/kill.log"; then
	KP=${SERVE_PIDS[-1]}
	curl -s -o /dev/null -d '{"duration_ms": 20000}' "$(profile_url "http://127.0.0.1:$PORT_KILL" "$ALPHA")" &
	for _ in $(seq 50); do
		ls "$TMPDIR" | grep -q '^isoprof-serve\.' && break
		sleep 0.1
	done
	helper=$(pgrep -P "$KP" -x isoprof-priv)
	kill -KILL "$KP" $helper
	wait "$KP" 2>/dev/null
	sleep 0.5
	pkill -KILL -f -- "record --script=$ALPHA --version=latest --duration-ms=20000"
fi
STALE=$(ls "$TMPDIR" | grep '^isoprof-serve\.' | head -1)
# another user's directory, a symlink to a directory of root's, a name without a pid
sleep 0 &
DEAD=$!
wait $DEAD
mkdir -p "$TMPDIR/isoprof-serve.$DEAD.nobody" "$T/victim"
touch "$TMPDIR/isoprof-serve.$DEAD.nobody/keep" "$T/victim/keep"
chown -R nobody "$TMPDIR/isoprof-serve.$DEAD.nobody"
ln -s "$T/victim" "$TMPDIR/isoprof-serve.$DEAD.symlnk"
mkdir "$TMPDIR/isoprof-serve.XXold"

if ! start_serve "$ISOPROF" $PORT "$T/serve.log"; then
	fail "serve start" "$(cat "$T/serve.log")"
	exit 0
fi
pass "serve (ASan build) listens on 127.0.0.1:$PORT"
sleep 0.5
if [ -n "$STALE" ] && [ ! -e "$TMPDIR/$STALE" ] && grep -q 'removed 1 stale' "$T/serve.log"; then
	pass "the directory $STALE of the SIGKILLed daemon is removed at the next start"
else
	fail "stale directory" "'$STALE' still there? $(ls -la "$TMPDIR"); log: $(grep stale "$T/serve.log")"
fi
if [ -f "$TMPDIR/isoprof-serve.$DEAD.nobody/keep" ] && [ -L "$TMPDIR/isoprof-serve.$DEAD.symlnk" ] &&
	[ -f "$T/victim/keep" ] && [ -d "$TMPDIR/isoprof-serve.XXold" ]; then
	pass "another user's directory, a symlink (and what it points to) and a pid-less name are left alone"
else
	fail "stale cleanup went too far" "$(ls -la "$TMPDIR" "$T/victim")"
fi
rm -rf "$TMPDIR"/isoprof-serve.* "$T/victim"

# --- who parses HTTP ------------------------------------------------------------------------
SP=${SERVE_PIDS[-1]}
holders=$(listeners $PORT)
HELPER=$(pgrep -P "$SP" -x isoprof-priv)
uid=$(status_field "$holders" Uid)
capeff=$(status_field "$holders" CapEff)
nnp=$(status_field "$holders" NoNewPrivs)
if [ "$holders" = "$SP" ] && [ -n "$uid" ] && [ "$uid" != 0 ] && [ "$capeff" = 0000000000000000 ] && [ "$nnp" = 1 ]; then
	pass "the process holding the listening socket (pid $holders) runs as uid $uid, CapEff 0, NoNewPrivs 1"
else
	fail "HTTP process privileges" "holders '$holders' (daemon $SP): Uid $uid CapEff $capeff NoNewPrivs $nnp"
fi
if [ -n "$HELPER" ] && [ "$(status_field "$HELPER" Uid)" = 0 ] && ! ls -l "/proc/$HELPER/fd" 2>/dev/null | grep -q "socket:\[$(ss -Hltne "sport = :$PORT" | grep -o 'ino:[0-9]*' | cut -d: -f2)\]"; then
	pass "the root helper (pid $HELPER) does not hold the listening socket"
else
	fail "helper" "pid '$HELPER'"
fi

# --- a capture through the split, headers ------------------------------------------------------
req POST "$(profile_url "$BASE" "$ALPHA")" -d '{"duration_ms": 1500}'
fn=$(top_fn "$T/body")
if [ "$STATUS" = 200 ] && [ "$fn" = fibAlpha ]; then
	pass "a capture through the helper: 200, go tool pprof has fibAlpha on top"
else
	fail "capture" "HTTP $STATUS, top '$fn' $(head -c 200 "$T/body")"
fi
[ "$(header X-Content-Type-Options)" = nosniff ] && pass "a profile carries X-Content-Type-Options: nosniff" ||
	fail "nosniff on a profile" "'$(header X-Content-Type-Options)'"
req GET "$BASE/"
csp=$(header Content-Security-Policy)
if [ "$(header X-Content-Type-Options)" = nosniff ] && [[ $csp == *"script-src 'self'"* ]] &&
	[[ $csp == *"default-src 'none'"* ]] && [[ $csp != *unsafe* ]]; then
	pass "the page: nosniff and CSP '$csp'"
else
	fail "page headers" "nosniff '$(header X-Content-Type-Options)', CSP '$csp'"
fi
req GET "$BASE/nope"
[ "$(header X-Content-Type-Options)" = nosniff ] && [[ $(header Content-Security-Policy) == "default-src 'none'"* ]] &&
	pass "an error carries nosniff and CSP default-src 'none'" || fail "error headers" "$(cat "$T/hdr")"

# --- 200 half-open connections from 127.0.0.2 --------------------------------------------------
cat >"$T/hold.py" <<'EOF'
import socket, sys, time
port, n, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
socks, refused = [], 0
for _ in range(n):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /v1/targets HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        socks.append(s)
    except OSError:
        refused += 1
print("open", len(socks), "refused", refused, flush=True)
t0 = time.time()
closed = {}
while time.time() - t0 < secs and len(closed) < len(socks):
    for i, s in enumerate(socks):
        if i in closed:
            continue
        s.setblocking(False)
        try:
            if s.recv(1) == b"":
                closed[i] = time.time() - t0
        except BlockingIOError:
            pass
        except OSError:
            closed[i] = time.time() - t0
    time.sleep(0.2)
late = sorted(v for v in closed.values() if v > 1.0)
print("closed", len(closed), "of", len(socks), "late", len(late),
      "last %.1f" % (max(late) if late else 0), flush=True)
EOF
python3 "$T/hold.py" $PORT 200 16 >"$T/hold.out" 2>&1 &
HOLD=$!
sleep 2
t0=$(date +%s%N)
req GET "$BASE/v1/targets"
ms=$((($(date +%s%N) - t0) / 1000000))
if [ "$STATUS" = 200 ] && [ $ms -lt 5000 ]; then
	pass "with 200 half-open connections from 127.0.0.2, GET /v1/targets from 127.0.0.1 answers in $ms ms"
else
	fail "client locked out" "HTTP $STATUS after $ms ms; $(cat "$T/hold.out")"
fi
req GET "$BASE/"
[ "$STATUS" = 200 ] && pass "and the page too" || fail "page under load" "HTTP $STATUS"
wait $HOLD
HOLD=
read -r _ opened _ refused < <(head -1 "$T/hold.out")
read -r _ closed _ of _ late _ last < <(sed -n 2p "$T/hold.out")
# 8 per address are kept; those get the request deadline (10 s), the rest are closed at once
if [ "${closed:-0}" = "${of:-x}" ] && [ "${late:-0}" -le 8 ] && [ "${late:-0}" -ge 1 ] &&
	awk -v l="$last" 'BEGIN { exit !(l >= 8 && l <= 13) }'; then
	pass "127.0.0.2: $opened connected, all closed; $late held until the deadline (${last} s), the rest at once"
else
	fail "half-open connections" "$(cat "$T/hold.out")"
fi
grep -q 'closed [0-9]* connections\? that sent no whole request' "$T/serve.log" &&
	pass "the log says the deadline closed them" || fail "deadline log" "$(tail -3 "$T/serve.log")"

# --- wrong tokens are backed off per address ---------------------------------------------------
head -c 33 /dev/urandom | base64 >"$T/token"
chmod 600 "$T/token"
TOKEN=$(head -1 "$T/token")
if start_serve "$ISOPROF" $PORT_TOK "$T/tok.log" --token-file "$T/token"; then
	B=http://127.0.0.1:$PORT_TOK
	codes=
	for i in 1 2 3 4 5 6 7; do
		req GET "$B/v1/targets" -H "Authorization: Bearer wrong-$i-${TOKEN}"
		codes+="$STATUS "
	done
	ra=$(header Retry-After)
	if [ "$codes" = "403 403 403 403 403 429 429 " ] && [ "$(code_of)" = 10053 ] && [[ $ra =~ ^[0-9]+$ ]]; then
		pass "wrong tokens: 5 answered 403, then 429 (code 10053, Retry-After $ra)"
	else
		fail "backoff" "statuses $codes, code $(code_of), Retry-After '$ra'"
	fi
	req GET "$B/v1/targets" -H "Authorization: Bearer $TOKEN"
	[ "$STATUS" = 429 ] && pass "while backed off, even the right token from that address gets 429" ||
		fail "backoff right token" "HTTP $STATUS"
	req GET "$B/v1/targets" -H "Authorization: Bearer $TOKEN" --interface 127.0.0.2
	[ "$STATUS" = 200 ] && pass "another address (127.0.0.2) with the right token: 200" ||
		fail "backoff per address" "HTTP $STATUS"
	sleep "$((ra + 1))"
	req GET "$B/v1/targets" -H "Authorization: Bearer $TOKEN"
	[ "$STATUS" = 200 ] && pass "after Retry-After the right token works again" ||
		fail "backoff expiry" "HTTP $STATUS"
	grep -q "$TOKEN" "$T/tok.log" && fail "token in the log" "logged" || pass "the token never reaches the log"
else
	fail "token daemon" "did not start: $(cat "$T/tok.log")"
fi

# --- a unix-socket listener -------------------------------------------------------------------
mkdir -m 700 "$T/run"
: >"$T/run/file.sock"
"$ISOPROF" serve --listen "unix:$T/run/file.sock" 2>"$T/unixfile.err"
rc=$?
[ $rc -eq 2 ] && [ -f "$T/run/file.sock" ] && grep -q 'not a socket' "$T/unixfile.err" &&
	pass "unix:PATH on an existing regular file is refused (exit 2), the file kept" ||
	fail "unix over a file" "exit $rc: $(cat "$T/unixfile.err")"
SOCK=$T/run/isoprof.sock
if start_serve "$ISOPROF" "unix:$SOCK" "$T/unix.log"; then
	UP=${SERVE_PIDS[-1]}
	mode=$(stat -c %a "$SOCK")
	[ -S "$SOCK" ] && [ "$mode" = 600 ] && pass "unix socket $SOCK, mode 600" ||
		fail "unix socket mode" "$(ls -l "$SOCK")"
	req GET http://localhost/v1/targets --unix-socket "$SOCK"
	[ "$STATUS" = 200 ] && pass "curl --unix-socket: GET /v1/targets 200" || fail "unix targets" "HTTP $STATUS"
	req POST "$(profile_url http://localhost "$ALPHA")" --unix-socket "$SOCK" -d '{"duration_ms": 1000}'
	fn=$(top_fn "$T/body")
	[ "$STATUS" = 200 ] && [ "$fn" = fibAlpha ] &&
		pass "a capture over the unix socket: 200, fibAlpha on top" ||
		fail "unix capture" "HTTP $STATUS, top '$fn' $(head -c 200 "$T/body")"
	kill -TERM "$UP"
	wait "$UP"
	[ ! -e "$SOCK" ] && pass "the socket file is removed at stop" || fail "unix stop" "$(ls -l "$SOCK")"
else
	fail "unix daemon" "did not start: $(cat "$T/unix.log")"
fi

# --- the children's memory limit (release build) -------------------------------------------------
if [ ! -x "$RELEASE" ]; then
	fail "release build" "$RELEASE missing: make all"
elif start_serve "$RELEASE" $PORT_REL "$T/rel.log" --child-memory-mb 1024; then
	curl -s -o "$T/rel.body" -w '%{http_code}' -d '{"duration_ms": 4000}' \
		"$(profile_url "http://127.0.0.1:$PORT_REL" "$ALPHA")" >"$T/rel.status" &
	CURL=$!
	child=
	for _ in $(seq 50); do
		child=$(pgrep -f -- "record --script=$ALPHA --version=latest --duration-ms=4000" | head -1)
		[ -n "$child" ] && break
		sleep 0.1
	done
	lim=$(awk '/^Max data size/ { print $4 }' "/proc/$child/limits" 2>/dev/null)
	peak=0
	while kill -0 "$child" 2>/dev/null; do
		d=$(status_field "$child" VmData)
		[ -n "$d" ] && [ "$d" -gt "$peak" ] && peak=$d
		sleep 0.1
	done
	wait $CURL
	if [ "$lim" = 1073741824 ] && [ "$(cat "$T/rel.status")" = 200 ] &&
		[ "$(top_fn "$T/rel.body")" = fibAlpha ]; then
		pass "record child $child ran under RLIMIT_DATA 1 GiB (its VmData peaked at $((peak / 1024)) MiB) and its capture succeeded"
	else
		fail "child memory limit" "limit '$lim', HTTP $(cat "$T/rel.status"), VmData peak $peak kB"
	fi
	kill -TERM "${SERVE_PIDS[-1]}"
else
	fail "release daemon" "did not start: $(cat "$T/rel.log")"
fi

# --- not started as root: no split, said once, the page and the API still answer ---------------------
if command -v setpriv >/dev/null; then
	chmod 711 "$T"
	mkdir -m 777 "$T/nr"
	TMPDIR=$T/nr setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$ISOPROF" serve --listen 127.0.0.1:$PORT_KILL 2>"$T/nonroot.log" &
	NR=$!
	SERVE_PIDS+=($NR)
	for _ in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT_KILL/" && break
		sleep 0.1
	done
	req POST "$(profile_url "http://127.0.0.1:$PORT_KILL" "no-such-$$.js")" -d '{"duration_ms": 1000}'
	n=$(grep -c 'not started as root: no privilege split' "$T/nonroot.log")
	if [ "$n" = 1 ] && [ "$STATUS" = 404 ] && [ "$(status_field "$NR" CapEff)" = 0000000000000000 ]; then
		pass "started as nobody: one line says the split is off; a capture request still reaches record (404)"
	else
		fail "non-root daemon" "HTTP $STATUS, $n lines: $(head -3 "$T/nonroot.log")"
	fi
	kill -TERM "$NR"
	wait "$NR"
	chmod 700 "$T"
fi

# --- the helper dies: the daemon stops instead of answering 500s ---------------------------------
if start_serve "$ISOPROF" $PORT_KILL "$T/orphan.log"; then
	OP=${SERVE_PIDS[-1]}
	kill -KILL "$(pgrep -P "$OP" -x isoprof-priv)"
	for _ in $(seq 50); do
		kill -0 "$OP" 2>/dev/null || break
		sleep 0.1
	done
	wait "$OP"
	orc=$?
	[ $orc -eq 1 ] && grep -q 'helper .* was killed by signal 9: stopping' "$T/orphan.log" &&
		pass "the helper SIGKILLed: the daemon says so and exits 1" ||
		fail "helper death" "exit $orc: $(tail -2 "$T/orphan.log")"
else
	fail "orphan daemon" "did not start: $(cat "$T/orphan.log")"
fi

# --- stop -------------------------------------------------------------------------------------
kill -TERM "$SP"
wait "$SP"
src=$?
[ $src -eq 0 ] && ! kill -0 "$HELPER" 2>/dev/null && pass "SIGTERM: the daemon exits 0 and its helper with it" ||
	fail "stop" "exit $src, helper $HELPER alive? $(kill -0 "$HELPER" 2>/dev/null && echo yes)"
for log in "$T/serve.log" "$T/tok.log" "$T/unix.log" "$T/kill.log" "$T/orphan.log" "$T/nonroot.log"; do
	[ -f "$log" ] || continue
	no_sanitizer_report "$log" || { fail "sanitizers" "report in $log"; grep -A20 ERROR "$log" | head -40; }
done
[ "$(ls "$TMPDIR" | grep -c isoprof-serve)" = 0 ] && pass "no temporary directory left behind" ||
	fail "temp dirs" "$(ls "$TMPDIR")"
exit 0
