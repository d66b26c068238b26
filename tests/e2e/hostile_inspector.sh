#!/usr/bin/env bash
# The inspector client against hostile peers (issue 12), with real node
# processes and real sockets:
#  (a) a node in its own network namespace (`unshare -n`) listening on
#      127.0.0.1:P there, and a decoy on the host's 127.0.0.1:P that any
#      user could have started: record --v8 reaches the real inspector in
#      the target's namespace (V8's profile is written) and never the decoy;
#  (b) a peer that completes the handshake and then streams events every
#      2 ms forever, never answering: record --v8 ends within its per-call
#      deadline (5 s) plus the window plus slack, names the peer in a clear
#      error, and writes isoprof's own profile of the window.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/hostile_inspector.XXXXXX")
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT
P=18961 FAKE=18962
FAKE_JS=$TOP/tests/fixtures/fake_inspector.js
JS=$TOP/tests/fixtures/js/two_hot.js

# listening FILE: wait until a fake inspector printed "listening"
listening() {
	for _ in $(seq 50); do grep -q listening "$1" && return 0; sleep 0.1; done
	return 1
}

# --- (a) the target's own network namespace -------------------------------
if ! unshare -n true 2>/dev/null; then
	fail "netns" "unshare -n is not permitted here"
else
	: >"$T/decoy.log"
	node "$FAKE_JS" $P decoy "$T/decoy.log" >"$T/decoy.out" 2>&1 &
	PIDS+=($!)
	listening "$T/decoy.out" || fail "netns: decoy" "did not start: $(cat "$T/decoy.out")"
	# unshare execs sh in the new namespace, and sh execs node: $! is node
	unshare -n sh -c "ip link set lo up && exec node --perf-basic-prof \
		--inspect=127.0.0.1:$P '$JS' 0 14 '$T/truth.txt'" 2>"$T/node-ns.err" &
	NS_NODE=$!
	PIDS+=($NS_NODE)
	sleep 2
	if [ "$(readlink /proc/$NS_NODE/ns/net)" = "$(readlink /proc/self/ns/net)" ]; then
		fail "netns: target" "node is not in its own network namespace"
	fi
	"$ISOPROF" record -q --pid "$NS_NODE" --v8 --duration-ms 3000 --out-dir "$T/ns" \
		>"$T/ns.out" 2>"$T/ns.err"
	rc=$?
	cat "$T/ns.err"
	v8json=$(ls "$T"/ns/*-v8.cpuprofile 2>/dev/null | head -1)
	mine=$(ls "$T"/ns/*-cpu.pb.gz 2>/dev/null | head -1)
	if [ $rc -eq 0 ] && [ -n "$v8json" ] && [ -n "$mine" ] && no_sanitizer_report "$T/ns.err"; then
		pass "netns: record --v8 reached the inspector inside the target's namespace"
	else
		fail "netns: record --v8" "exit $rc, V8 profile '$v8json', isoprof's '$mine'"
	fi
	if [ ! -s "$T/decoy.log" ]; then
		pass "netns: the decoy on the host's loopback saw no connection"
	else
		fail "netns: decoy" "contacted: $(tr '\n' ' ' <"$T/decoy.log")"
	fi
	kill "$NS_NODE" 2>/dev/null
fi

# --- (b) a peer that streams events past the deadline ----------------------
node --perf-basic-prof "$JS" 0 30 "$T/truth2.txt" 2>/dev/null &
NODE=$!
PIDS+=($NODE)
: >"$T/stream.log"
node "$FAKE_JS" $FAKE stream "$T/stream.log" >"$T/stream.out" 2>&1 &
PIDS+=($!)
listening "$T/stream.out" || fail "stream: fake inspector" "did not start"
sleep 1
t0=$(date +%s)
timeout 60 "$ISOPROF" record -q --pid "$NODE" --v8 --inspector 127.0.0.1:$FAKE \
	--duration-ms 2000 --out-dir "$T/stream" >"$T/s.out" 2>"$T/s.err"
rc=$?
secs=$(($(date +%s) - t0))
cat "$T/s.err"
mine=$(ls "$T"/stream/*-cpu.pb.gz 2>/dev/null | head -1)
# 5 s for Profiler.enable, the 2 s window, and slack for ASan and a busy machine
if [ $rc -ne 124 ] && [ $secs -le 20 ] && grep -q upgrade "$T/stream.log"; then
	pass "stream: record --v8 ended in $secs s against a peer that never stops sending"
else
	fail "stream: deadline" "exit $rc after $secs s (124: killed at 60 s)"
fi
if grep -q "no reply within 5000 ms from 127.0.0.1:$FAKE/fake, which sent [0-9]* other messages" \
	"$T/s.err"; then
	pass "stream: the error names the peer, what it waited for and what came instead"
else
	fail "stream: message" "no clear deadline error in stderr"
fi
if [ -n "$mine" ] && pprof_top "$mine" >/dev/null && no_sanitizer_report "$T/s.err"; then
	pass "stream: isoprof's own profile of the window is written"
else
	fail "stream: profile" "missing or unreadable: '$mine'"
fi
exit 0
