#!/usr/bin/env bash
# workerd as its operators name it (issue 14, docs/attribution.md "Services
# and Durable Objects"): a real workerd whose config names the services
# alpha, counter (a Durable Object class Counter) and alloc, every main
# module named index.js, no inspector.  targets names every service and
# the namespace; record --script takes service names, refuses an ambiguous
# module name; record --namespace/--actor and the API capture the object's
# isolate; alloc's profile carries its GC pauses, agreeing with V8's own
# --trace-gc-nvp lines of that isolate inside the window (gc_pauses.sh is
# the controlled version of that comparison); a binary config leaves names
# unknown (module names still work);
# an open inspector confirms the names, or shows a config edited since
# start; a config swapped for a symlink to /etc/shadow or a FIFO is refused
# without a hang.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/services.XXXXXX")
PA=26121 PC=26122 PL=26123 PB=26124 PORT=26125 PBI=26126 PN=26127 PNI=26128
KEY=isoprof-test-counter
ACTOR=$(printf '%064x' 42)
PIDS=()
cleanup() {
	kill "${PIDS[@]}" $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

for p in $PA $PC $PL $PB $PORT $PBI $PN $PNI; do
	if ss -ltn | grep -q ":$p "; then
		fail "ports" "127.0.0.1:$p is in use"
		exit 0
	fi
done

# start DIR ARGS...: workerd serve ARGS in DIR; sets WORKERD_PID
start() {
	local dir=$1
	shift
	(cd "$dir" && exec "$(demo_workerd_bin)" serve "$@") >"$dir/workerd.log" 2>&1 &
	WORKERD_PID=$!
	PIDS+=("$WORKERD_PID")
}

W=$T/wd
services_config "$W" "$PA" "$PC" "$PL"
# the main workerd's stdout (V8's GC trace) line-buffered, each line stamped
# with the wall clock it arrived at
(cd "$W" && exec stdbuf -oL "$(demo_workerd_bin)" serve config.capnp) \
	> >(python3 -uc '
import sys, time
for line in sys.stdin:
    sys.stdout.write("%.6f %s" % (time.time(), line))' >"$W/workerd.log") 2>&1 &
WORKERD_PID=$!
PIDS+=("$WORKERD_PID")
if ! demo_wait_http "http://127.0.0.1:$PA/" || ! demo_wait_http "http://127.0.0.1:$PC/" ||
	! demo_wait_http "http://127.0.0.1:$PL/"; then
	tail -5 "$W/workerd.log"
	fail "workerd start" "the three services did not start"
	exit 0
fi
MAIN=$WORKERD_PID

# load: alpha and alloc by wrk, counter's object by requests in turn
wrk -t1 -c1 -d120s "http://127.0.0.1:$PA/" >/dev/null 2>&1 &
wrk -t1 -c1 -d120s "http://127.0.0.1:$PC/" >/dev/null 2>&1 &
wrk -t1 -c1 -d120s "http://127.0.0.1:$PL/" >/dev/null 2>&1 &
sleep 1

# --- targets ---------------------------------------------------------------------
"$ISOPROF" targets --pid "$MAIN" --json >"$T/targets.json" 2>"$T/targets.err"
rc=$?
if [ $rc -eq 0 ] && python3 - "$T/targets.json" "$KEY" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))[0]
s = p["services"]
assert s["known"] is True, s
assert sorted(x["name"] for x in s["services"]) == ["alloc", "alpha", "counter"], s
logs = {l["service"]: l for l in p["code_logs"] if l.get("service")}
assert sorted(logs) == ["alloc", "alpha", "counter"], [l.get("service") for l in p["code_logs"]]
for name, l in logs.items():
    assert l["name"] == name, l["name"]
    assert "index.js" in [x["name"] for x in l["scripts"]], l["scripts"]
ns = logs["counter"]["namespaces"]
assert ns == [{"class_name": "Counter", "unique_key": sys.argv[2]}], ns
assert logs["alpha"]["namespaces"] == [], logs["alpha"]["namespaces"]
PY
then
	pass "targets --json: every service named (alpha, counter, alloc), counter's namespace Counter ($KEY)"
else
	cat "$T/targets.err"
	fail "targets --json" "exit $rc; services or namespaces missing"
fi
"$ISOPROF" targets --pid "$MAIN" >"$T/targets.txt" 2>&1
if grep -qE 'isolate 0x[0-9a-f]+  counter  version' "$T/targets.txt" &&
	grep -q "durable object namespace Counter (uniqueKey $KEY)" "$T/targets.txt"; then
	pass "targets (text): the isolate shown as counter, with its namespace"
else
	fail "targets (text)" "$(cat "$T/targets.txt")"
fi

# --- record --script ---------------------------------------------------------------
"$ISOPROF" record -q --pid "$MAIN" --duration-ms 2000 --script alpha -o "$T/alpha.pb.gz" \
	2>"$T/alpha.err"
rc=$?
top=$(pprof_top "$T/alpha.pb.gz" -tagfocus=script=alpha | awk '/^ *flat +flat%/ { getline; print $6; exit }')
others=$(pprof_top "$T/alpha.pb.gz" -tagignore=script=alpha -sample_index=samples | grep -cE 'spinCounter|churn')
if [ $rc -eq 0 ] && [ "$top" = fibAlpha ] && [ "$others" = 0 ]; then
	pass "record --script alpha: alpha's isolate only (top $top, script label alpha)"
else
	cat "$T/alpha.err"
	fail "record --script alpha" "exit $rc, top '$top', other services' functions $others"
fi
"$ISOPROF" record -q --pid "$MAIN" --duration-ms 1000 --script index -o "$T/index.pb.gz" \
	2>"$T/index.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "ambiguous" "$T/index.err" && grep -q 'alpha' "$T/index.err" &&
	grep -q 'counter' "$T/index.err" && grep -q 'alloc' "$T/index.err" && [ ! -e "$T/index.pb.gz" ]; then
	pass "record --script index: ambiguous, exit 2, candidates listed"
else
	fail "record --script index" "exit $rc: $(cat "$T/index.err")"
fi
"$ISOPROF" record -q --pid "$MAIN" --duration-ms 1500 --script alpha --out-dir "$T/od" 2>"$T/od.err"
rc=$?
if [ $rc -eq 0 ] && ls "$T/od"/alpha-*-0x*-cpu.pb.gz >/dev/null 2>&1; then
	pass "record --out-dir: file named after the service ($(basename "$T"/od/alpha-*))"
else
	fail "record --out-dir" "exit $rc: $(ls "$T/od" 2>&1)"
fi

# --- record --namespace ------------------------------------------------------------
"$ISOPROF" record -q --pid "$MAIN" --duration-ms 2000 --namespace "$KEY" --actor "$ACTOR" \
	-o "$T/ns.pb.gz" 2>"$T/ns.err"
rc=$?
pprof_top "$T/ns.pb.gz" >"$T/ns.top"
top=$(awk '/^ *flat +flat%/ { getline; print $6; exit }' "$T/ns.top")
if [ $rc -eq 0 ] && [ "$top" = spinCounter ] &&
	grep -q "every object of namespace Counter in that isolate and the worker's own requests" "$T/ns.top" &&
	! grep -qE 'fibAlpha|churn' "$T/ns.top"; then
	pass "record --namespace $KEY --actor: the object's hot function on top ($top), the coverage in a comment"
else
	cat "$T/ns.err"
	fail "record --namespace" "exit $rc, top '$top'"
fi
"$ISOPROF" record -q --pid "$MAIN" --duration-ms 1500 --namespace counter:Counter --actor "$ACTOR" \
	-o "$T/ns2.pb.gz" 2>"$T/ns2.err"
rc=$?
top=$(pprof_top "$T/ns2.pb.gz" | awk '/^ *flat +flat%/ { getline; print $6; exit }')
[ $rc -eq 0 ] && [ "$top" = spinCounter ] && pass "record --namespace counter:Counter: same isolate" ||
	fail "record --namespace service:className" "exit $rc top '$top': $(cat "$T/ns2.err")"
"$ISOPROF" record -q --pid "$MAIN" --duration-ms 1000 --namespace nosuch --actor "$ACTOR" \
	-o "$T/nons.pb.gz" 2>"$T/nons.err"
rc=$?
if [ $rc -eq 3 ] && grep -q "no Durable Object namespace 'nosuch'" "$T/nons.err" &&
	grep -q "counter:Counter ($KEY)" "$T/nons.err"; then
	pass "record --namespace nosuch: exit 3, the namespaces present listed"
else
	fail "unknown --namespace" "exit $rc: $(cat "$T/nons.err")"
fi
"$ISOPROF" record -q --pid "$MAIN" --namespace "$KEY" --actor 1234 -o "$T/x.pb.gz" 2>"$T/badactor.err"
rc=$?
[ $rc -eq 2 ] && grep -q '64 hexadecimal' "$T/badactor.err" && pass "--actor must be 64 hex (exit 2)" ||
	fail "--actor validation" "exit $rc: $(cat "$T/badactor.err")"

# --- alloc's GC pauses against V8's trace --------------------------------------
# the profile's window: time_nanos (field 9) and duration_nanos (field 10)
window_of() {
	python3 - "$1" <<'PY'
import gzip, sys
b = gzip.open(sys.argv[1]).read()
i, f = 0, {}
def varint():
    global i
    v = s = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7f) << s; s += 7
        if c < 0x80:
            return v
while i < len(b):
    key = varint()
    if key & 7 == 0:
        f[key >> 3] = varint()
    elif key & 7 == 2:
        n = varint()
        i += n
    else:
        raise SystemExit("wire type %d" % (key & 7))
print("%.6f %.6f" % (f[9] / 1e9, (f[9] + f[10]) / 1e9))
PY
}
# the pauses come from the GC probes' uprobe_multi links (Linux 6.6)
if needs_feature uprobe_multi "alloc's GC pauses against V8's trace" &&
	needs_feature gc_probes "alloc's GC pauses against V8's trace"; then
	"$ISOPROF" record -q --pid "$MAIN" --duration-ms 3000 --script alloc --out-dir "$T/gc" 2>"$T/gc.err"
	rc=$?
	prof=$(ls "$T"/gc/alloc-*-0x*-cpu.pb.gz 2>/dev/null | head -1)
	if [ $rc -eq 0 ] && [ -n "$prof" ]; then
		iso=${prof##*-0x}
		iso=0x${iso%-cpu.pb.gz}
		comment=$(HOME=${HOME:-/root} go tool pprof -comments "$prof" 2>/dev/null | grep '^gc: ')
		read -r from to <<<"$(window_of "$prof")"
		# V8 prints a collection's line as its pause ends: inside the window when
		# it began and ended there, as isoprof counts
		read -r n mean <<<"$(python3 - "$W/workerd.log" "$iso" "$from" "$to" <<'PY'
import re, sys
iso, lo, hi = sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
n, tot = 0, 0.0
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"([0-9.]+) \[\d+:(0x[0-9a-f]+).*\"pause\":([0-9.]+)", line)
    if m and m.group(2) == iso:
        t, p = float(m.group(1)), float(m.group(3))
        if t - p / 1000 >= lo and t <= hi:
            n, tot = n + 1, tot + p
print(n, "%.3f" % (tot / n if n else 0))
PY
)"
		if [[ $comment =~ ^gc:\ ([0-9]+)\ pauses,\ ([0-9.]+)\ ms\ total,\ [0-9.]+\ ms\ max$ ]] &&
			[ "$n" -ge 5 ] && awk -v a="${BASH_REMATCH[1]}" -v b="$n" -v ta="${BASH_REMATCH[2]}" -v mb="$mean" '
				function off(x, y) { d = x - y; if (d < 0) d = -d; return d > 0.25 * y }
				BEGIN { exit off(a, b) || a == 0 || off(ta / a, mb) }'; then
			pass "alloc's profile: '$comment'; V8's trace of $iso in the window: $n pauses, mean $mean ms"
		else
			cat "$T/gc.err"
			fail "alloc GC pauses" "exit $rc, comment '$comment', V8: $n pauses mean $mean ms (isolate $iso)"
		fi
	else
		fail "alloc GC pauses" "exit $rc: $(cat "$T/gc.err")"
	fi
fi

# --- the API -----------------------------------------------------------------------
mkdir -p "$T/tmp"
TMPDIR=$T/tmp "$ISOPROF" serve --listen "127.0.0.1:$PORT" 2>"$T/serve.log" &
PIDS+=($!)
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	sleep 0.1
done
url() { echo "http://127.0.0.1:$PORT/accounts/local/workers/workers/$1/versions/latest/profile"; }
STATUS=$(curl -s -o "$T/api-alpha.pb.gz" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"duration_ms": 2000}' "$(url alpha)")
top=$(pprof_top "$T/api-alpha.pb.gz" | awk '/^ *flat +flat%/ { getline; print $6; exit }')
[ "$STATUS" = 200 ] && [ "$top" = fibAlpha ] && pass "API: script alpha -> 200, alpha's profile (top $top)" ||
	fail "API script alpha" "HTTP $STATUS top '$top' $(head -c 300 "$T/api-alpha.pb.gz")"
STATUS=$(curl -s -o "$T/api-ns.pb.gz" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "{\"duration_ms\": 2000, \"namespace_id\": \"$KEY\", \"actor_id\": \"$ACTOR\"}" "$(url counter)")
top=$(pprof_top "$T/api-ns.pb.gz" | awk '/^ *flat +flat%/ { getline; print $6; exit }')
[ "$STATUS" = 200 ] && [ "$top" = spinCounter ] &&
	pass "API: script counter with namespace_id/actor_id -> 200, the object's hot function on top" ||
	fail "API namespace" "HTTP $STATUS top '$top' $(head -c 300 "$T/api-ns.pb.gz")"
STATUS=$(curl -s -o "$T/api-nons.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d "{\"duration_ms\": 1000, \"namespace_id\": \"nosuch\", \"actor_id\": \"$ACTOR\"}" "$(url counter)")
if [ "$STATUS" = 404 ] && python3 - "$T/api-nons.json" "$KEY" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["success"] is False and d["result"] is None, d
m = d["errors"][0]["message"]
assert "nosuch" in m and "counter:Counter (%s)" % sys.argv[2] in m, m
PY
then
	pass "API: unknown namespace -> 404 listing the namespaces"
else
	fail "API unknown namespace" "HTTP $STATUS $(head -c 400 "$T/api-nons.json")"
fi
STATUS=$(curl -s -o "$T/api-amb.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
	-d '{"duration_ms": 1000}' "$(url index)")
[ "$STATUS" = 400 ] && grep -q ambiguous "$T/api-amb.json" &&
	pass "API: script index is ambiguous -> 400 naming the candidates" ||
	fail "API ambiguous" "HTTP $STATUS $(head -c 300 "$T/api-amb.json")"

# --- a binary config: names unknown, module names still work -------------------------
B=$T/bin
mkdir -p "$B/v8logs" "$B/alpha"
cp "$W/alpha/index.js" "$B/alpha/"
cat >"$B/config.capnp" <<EOF
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "bin-alpha", worker = (modules = [ (name = "index.js", esModule = embed "alpha/index.js") ], compatibilityDate = "2024-01-01")) ],
  sockets = [ (name = "http", address = "127.0.0.1:$PB", http = (), service = "bin-alpha") ],
  v8Flags = [ "--perf-basic-prof", "--interpreted-frames-native-stack", "--log-code",
    "--log-source-code", "--logfile-per-isolate", "--logfile=$B/v8logs/v8.log" ],
);
EOF
(cd "$B" && "$(demo_workerd_bin)" compile --config-only config.capnp >config.bin)
start "$B" --binary config.bin --inspector-addr=127.0.0.1:$PBI
if demo_wait_http "http://127.0.0.1:$PB/"; then
	wrk -t1 -c1 -d30s "http://127.0.0.1:$PB/" >/dev/null 2>&1 &
	"$ISOPROF" targets --pid "$WORKERD_PID" >"$T/bin.txt" 2>&1
	"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1500 --script index -o "$T/bin.pb.gz" \
		2>"$T/bin.err"
	rc=$?
	top=$(pprof_top "$T/bin.pb.gz" | awk '/^ *flat +flat%/ { getline; print $6; exit }')
	if grep -q 'service names unknown: a binary config (--binary)' "$T/bin.txt" &&
		grep -q "the inspector at 127.0.0.1:$PBI lists the services: bin-alpha (isolates not matched to them)" "$T/bin.txt" &&
		grep -qE 'isolate 0x[0-9a-f]+  index.js  version' "$T/bin.txt" && [ $rc -eq 0 ] &&
		[ "$top" = fibAlpha ]; then
		pass "--binary config: service names unknown (said so), the inspector's list shown, --script index still works"
	else
		cat "$T/bin.txt" "$T/bin.err"
		fail "binary config" "exit $rc top '$top'"
	fi
else
	fail "binary config" "workerd --binary did not start: $(tail -3 "$B/workerd.log")"
fi

# --- an open inspector confirms the names; a config edited since start does not ----
N=$T/insp
mkdir -p "$N/v8logs" "$N/alpha"
cp "$W/alpha/index.js" "$N/alpha/"
cat >"$N/config.capnp" <<EOF
using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "insp-alpha", worker = (modules = [ (name = "index.js", esModule = embed "alpha/index.js") ], compatibilityDate = "2024-01-01")) ],
  sockets = [ (name = "http", address = "127.0.0.1:$PN", http = (), service = "insp-alpha") ],
  v8Flags = [ "--perf-basic-prof", "--log-code", "--logfile-per-isolate", "--logfile=$N/v8logs/v8.log" ],
);
EOF
start "$N" config.capnp --inspector-addr=127.0.0.1:$PNI
if demo_wait_http "http://127.0.0.1:$PN/"; then
	"$ISOPROF" targets --pid "$WORKERD_PID" >"$T/insp.txt" 2>&1
	"$ISOPROF" targets --pid "$WORKERD_PID" --json >"$T/insp.json" 2>&1
	if grep -q "service names confirmed by the inspector at 127.0.0.1:$PNI (1 of 1)" "$T/insp.txt" &&
		grep -qE 'isolate 0x[0-9a-f]+  insp-alpha  version' "$T/insp.txt" &&
		python3 - "$T/insp.json" "$PNI" <<'PY'
import json, sys
i = json.load(open(sys.argv[1]))[0]["services"]["inspector"]
assert i == {"address": "127.0.0.1:" + sys.argv[2], "listed": ["insp-alpha"], "confirmed": 1,
             "not_listed": [], "not_in_config": []}, i
PY
	then
		pass "an open inspector confirms the service names (text and --json)"
	else
		cat "$T/insp.txt" "$T/insp.json"
		fail "inspector confirms" "see above"
	fi
	sed -i 's/"insp-alpha"/"renamed"/g' "$N/config.capnp"
	"$ISOPROF" targets --pid "$WORKERD_PID" >"$T/insp2.txt" 2>&1
	if grep -q "note: the inspector at 127.0.0.1:$PNI does not list the config's services renamed" "$T/insp2.txt" &&
		grep -q "lists services the config does not name: insp-alpha (the config read may not be the one running)" "$T/insp2.txt"; then
		pass "a config edited since start: the inspector's list disagrees, said so"
	else
		fail "inspector disagrees" "$(cat "$T/insp2.txt")"
	fi
	kill "$WORKERD_PID"
else
	fail "inspector confirms" "workerd did not start: $(tail -3 "$N/workerd.log")"
fi

# --- hostile: the config swapped for a symlink to /etc/shadow, then a FIFO -----------
mv "$W/config.capnp" "$W/config.capnp.real"
ln -s /etc/shadow "$W/config.capnp"
timeout 30 "$ISOPROF" targets --pid "$MAIN" >"$T/shadow.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'service names unknown: config config.capnp: symlink refused' "$T/shadow.txt" &&
	! grep -q 'root:' "$T/shadow.txt"; then
	pass "config a symlink to /etc/shadow: refused, names unknown"
else
	fail "config symlink" "exit $rc: $(cat "$T/shadow.txt")"
fi
rm -f "$W/config.capnp"
mkfifo "$W/config.capnp"
timeout 30 "$ISOPROF" targets --pid "$MAIN" >"$T/fifo.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'service names unknown: config config.capnp: a FIFO' "$T/fifo.txt"; then
	pass "config a FIFO: refused without a hang"
else
	fail "config FIFO" "exit $rc: $(cat "$T/fifo.txt")"
fi
rm -f "$W/config.capnp"
mv "$W/config.capnp.real" "$W/config.capnp"
# an embedded module swapped for a symlink: refused too
mv "$W/alpha/index.js" "$W/alpha/index.js.real"
ln -s /etc/shadow "$W/alpha/index.js"
timeout 30 "$ISOPROF" targets --pid "$MAIN" >"$T/embed.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q 'note: service alpha: embedded file alpha/index.js: symlink refused' "$T/embed.txt" &&
	! grep -qE 'isolate 0x[0-9a-f]+  alpha  version' "$T/embed.txt" &&
	grep -qE 'isolate 0x[0-9a-f]+  counter  version' "$T/embed.txt"; then
	pass "an embedded file a symlink: refused (noted), that service unnamed, the others named"
else
	fail "embed symlink" "exit $rc: $(cat "$T/embed.txt")"
fi
for f in "$T"/*.err "$T"/*.txt "$T/serve.log"; do
	no_sanitizer_report "$f" || fail "sanitizers" "report in $f"
done
