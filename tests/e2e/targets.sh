#!/usr/bin/env bash
# isoprof targets against real runtimes: a node with a perf map and an
# inspector, a plain sleep (not V8), a program whose V8 lives in a shared
# library (libnode.so's layout), and workerd (the bundled two-worker demo,
# set up in this test's own temp dir).  Everything started here is killed.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/targets.XXXXXX")
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
		# V8 leaves its perf map behind
		rm -f "/tmp/perf-$p.map"
	done
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

if ! command -v node >/dev/null; then
	fail node "node not found: the node checks need it (and it parses the JSON)"
	exit 0
fi

# free_ports N: N distinct TCP ports nothing listens on right now
free_ports() {
	node -e 'const net = require("net"), n = Number(process.argv[1]), all = [];
		for (let i = 0; i < n; i++) {
			const s = net.createServer().listen(0, "127.0.0.1", () => {
				all.push(s);
				if (all.length === n) {
					console.log(all.map((x) => x.address().port).join(" "));
					all.forEach((x) => x.close());
				}
			});
		}' "$1"
}

# wait_listen PORT: up to 10 s for 127.0.0.1:PORT to accept connections
wait_listen() {
	local i
	for i in $(seq 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# jget FILE PID EXPR: EXPR over the object of PID (p) in the JSON array FILE,
# "undefined" when PID is not listed; objects come back as JSON
jget() {
	node -e 'const a = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		const p = a.find((x) => x.pid === Number(process.argv[2]));
		const v = p === undefined ? undefined : eval(process.argv[3]);
		console.log(v !== null && typeof v === "object" ? JSON.stringify(v) : String(v));' \
		"$1" "$2" "$3"
}

# expect NAME GOT WANT
expect() {
	if [ "$2" = "$3" ]; then
		pass "$1 ($2)"
	else
		fail "$1" "got '$2', want '$3'"
	fi
}

# targets OUT ARGS...: isoprof targets, stdout to OUT, stderr to OUT.err; its status
targets() {
	local out=$1
	shift
	"$ISOPROF" targets "$@" >"$out" 2>"$out.err"
	local rc=$?
	if ! no_sanitizer_report "$out.err"; then
		cat "$out.err"
		fail "targets $*" "sanitizer report"
	fi
	return $rc
}

# --- node with a perf map and an inspector; a sleep ------------------------
NPORT=$(free_ports 1)
(cd "$T" && exec node --perf-basic-prof --inspect=127.0.0.1:"$NPORT" -e 'setInterval(() => {}, 1000)' \
	>"$T/node.out" 2>&1) &
node_pid=$!
PIDS+=("$node_pid")
sleep 30 &
sleep_pid=$!
PIDS+=("$sleep_pid")
wait_listen "$NPORT" || fail "node inspector" "node did not listen on $NPORT"

# --- V8 in a shared library, under names that say nothing ------------------
# The exe is not V8; its library defines the TLS current isolate and a node
# symbol, as libnode.so does.
cat >"$T/fake.c" <<'EOF'
__thread void *current __asm__("_ZN2v88internal18g_current_isolate_E");
void node_module_register(void *m)
{
	current = m;
}
EOF
cat >"$T/host.c" <<'EOF'
#include <unistd.h>
void node_module_register(void *m);
int main(void)
{
	node_module_register(0);
	for (;;)
		pause();
}
EOF
lib_pid=
if gcc -shared -fPIC -o "$T/libquiet.so" "$T/fake.c" &&
	gcc -o "$T/quiet" "$T/host.c" -L"$T" -lquiet -Wl,-rpath,"$T"; then
	"$T/quiet" &
	lib_pid=$!
	PIDS+=("$lib_pid")
else
	fail "shared-library runtime" "could not build the fixture with gcc"
fi
sleep 0.3

# --- workerd: the demo's two workers, in this test's temp dir --------------
# Its own ports and log directory, so a workerd already running elsewhere
# (the demo, another test) is left alone.
wd_pid=
read -r WPORT HA HB <<<"$(free_ports 3)"
if demo_start "$T/wd" "$HA" "$HB" "$WPORT" && wait_listen "$WPORT"; then
	wd_pid=$WORKERD_PID
	PIDS+=("$wd_pid")
else
	cat "$T/wd/workerd.log" 2>/dev/null
	fail workerd "the demo workerd did not start (inspector port $WPORT)"
	demo_stop
fi

# --- the scan ----------------------------------------------------------------
start=$(date +%s%N)
targets "$T/all.json" --json
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
if [ $rc -eq 0 ] && node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' \
	"$T/all.json"; then
	pass "targets --json exits 0 with valid JSON (${ms} ms)"
else
	cat "$T/all.json.err"
	fail "targets --json" "exit $rc or invalid JSON"
fi

expect "node is listed as node" "$(jget "$T/all.json" $node_pid p.runtime)" node
expect "node version is node --version" "$(jget "$T/all.json" $node_pid p.version)" "$(node --version)"
expect "node perf map exists" "$(jget "$T/all.json" $node_pid p.perf_map.exists)" true
expect "node perf map is the one it has open" \
	"$(jget "$T/all.json" $node_pid '[p.perf_map.open, p.perf_map.path].join(" ")')" \
	"true /tmp/perf-$node_pid.map"
expect "node inspector" "$(jget "$T/all.json" $node_pid p.inspector)" "127.0.0.1:$NPORT"
expect "node build-id is the binary's" "$(jget "$T/all.json" $node_pid p.build_id)" \
	"$(readelf -n "$(readlink -f "$(command -v node)")" 2>/dev/null | awk '/Build ID/ { print $3; exit }')"
# node >= 20 has the thread_local current isolate in the executable
if [ "$(jget "$T/all.json" $node_pid p.tls.found)" = true ]; then
	expect "node TLS offset known" \
		"$(jget "$T/all.json" $node_pid 'p.tls.supported && Number.isInteger(p.tls.tp_offset) && p.tls.tp_offset < 0')" true
fi
expect "sleep is not listed" "$(jget "$T/all.json" $sleep_pid p)" undefined

if [ -n "$lib_pid" ]; then
	expect "V8 in a shared library: recognized by content" \
		"$(jget "$T/all.json" $lib_pid '[p.runtime, p.tls.in_executable, p.tls.supported].join(" ")')" \
		"node false false"
	expect "V8 in a shared library: the object holding it" \
		"$(jget "$T/all.json" $lib_pid p.tls.object)" "$T/libquiet.so"
fi

if [ -n "$wd_pid" ]; then
	# workerd prints "workerd 2026-11-17"
	want_version=$("$(demo_workerd_bin)" --version 2>/dev/null | awk '{ print $2 }')
	for i in $(seq 50); do
		[ "$(ls "$T/wd/v8logs" | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	targets "$T/wd.json" --json --pid $wd_pid
	expect "workerd is listed as workerd" "$(jget "$T/wd.json" $wd_pid p.runtime)" workerd
	expect "workerd version is workerd --version's" "$(jget "$T/wd.json" $wd_pid p.version)" \
		"$want_version"
	expect "workerd has two code logs, open, named for its isolates" \
		"$(jget "$T/wd.json" $wd_pid 'p.code_logs.filter((l) => l.open &&
			l.path.includes("isolate-" + l.isolate + "-" + p.nspid + "-")).length')" 2
	# each worker's module, from its isolate's log, hashed as the file on disk
	expect "workerd isolates' user scripts match their files (SHA-256)" \
		"$(WDDIR="$T/wd" jget "$T/wd.json" $wd_pid 'p.code_logs.flatMap((l) => l.scripts || [])
			.filter((s) => !s.internal).filter((s) => s.sha256 === require("crypto")
			.createHash("sha256").update(require("fs").readFileSync(process.env.WDDIR + "/" +
			s.name)).digest("hex")).length')" 2
	expect "workerd inspector" "$(jget "$T/wd.json" $wd_pid p.inspector)" "127.0.0.1:$WPORT"
	expect "workerd perf map exists" "$(jget "$T/wd.json" $wd_pid p.perf_map.exists)" true
	expect "workerd TLS offset known" \
		"$(jget "$T/wd.json" $wd_pid 'p.tls.supported && p.tls.in_executable && Number.isInteger(p.tls.tp_offset)')" true
	expect "workerd listed by the host scan too" "$(jget "$T/all.json" $wd_pid p.runtime)" workerd
fi

# --- the table, and pids that are not runtimes --------------------------------
if targets "$T/table.txt" && grep -qE "^$node_pid +node $(node --version) " "$T/table.txt" &&
	grep -qE "127\.0\.0\.1:$NPORT" "$T/table.txt" && ! grep -qE "^$sleep_pid " "$T/table.txt"; then
	pass "table lists node with version and inspector, not sleep"
else
	cat "$T/table.txt" "$T/table.txt.err"
	fail "table" "node row missing or sleep listed"
fi

targets "$T/sleep.txt" --pid $sleep_pid
rc=$?
if [ $rc -eq 1 ] && grep -q "^isoprof: pid $sleep_pid: not a V8 runtime" "$T/sleep.txt.err"; then
	pass "--pid of a non-V8 process: one clear line, exit 1"
else
	cat "$T/sleep.txt.err"
	fail "--pid of a non-V8 process" "exit $rc"
fi
targets "$T/gone.txt" --pid 999999999
rc=$?
if [ $rc -eq 1 ] && grep -q "^isoprof: pid 999999999: no such process$" "$T/gone.txt.err"; then
	pass "--pid of a missing process: no such process, exit 1"
else
	cat "$T/gone.txt.err"
	fail "--pid of a missing process" "exit $rc"
fi
targets "$T/bad.txt" --pid abc
rc=$?
[ $rc -eq 2 ] && pass "--pid abc: usage error, exit 2" || fail "--pid abc" "exit $rc"

# No runtime at all: alone in a new pid namespace, isoprof sees none, says so
# and exits 0 (whatever else runs on this host).
if unshare -pf --mount-proc true 2>/dev/null; then
	unshare -pf --mount-proc "$ISOPROF" targets >"$T/none.txt" 2>"$T/none.err"
	rc=$?
	unshare -pf --mount-proc "$ISOPROF" targets --json >"$T/none.json" 2>>"$T/none.err"
	rc2=$?
	if [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && grep -q "^No V8 runtime found" "$T/none.txt" &&
		[ "$(tr -d ' \n' <"$T/none.json")" = "[]" ] && no_sanitizer_report "$T/none.err"; then
		pass "no runtime: says so plainly, exit 0 ($(head -1 "$T/none.txt"))"
	else
		cat "$T/none.txt" "$T/none.json" "$T/none.err"
		fail "no runtime" "exit $rc/$rc2"
	fi
else
	echo "note: unshare unavailable: the no-runtime case is not checked"
fi
exit 0
