#!/usr/bin/env bash
# What `isoprof record` writes, and where, on a real workerd (the five-worker
# fixture, its inspector on, traffic on alloc and front):
#  - with --json, stdout is one JSON document and nothing else: the text
#    (the cross-checks included) goes to stderr, and the JSON carries each
#    isolate's cross-check (its key numbers and files) or why it was skipped;
#  - V8's files are named apart: *-cpu.pb.gz are isoprof's own profiles
#    only, V8's converted ones are *.v8.pb.gz (go tool pprof tells them
#    apart by their comments);
#  - --type heap prints a summary per isolate, largest first, on stderr,
#    and with --json the same on stdout, whose bytes, objects and top
#    function are what go tool pprof reads in each isolate's file.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/record_outputs.XXXXXX")
WRK=()
trap 'kill "${WRK[@]}" 2>/dev/null; demo_stop; rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT
PF=18981 PAL=18982 PID_=18983 PI=18984

# comments FILE: the profile's comments, as go tool pprof reads them
comments() {
	HOME=${HOME:-/root} go tool pprof -comments "$1" 2>/dev/null
}

SRC=$TOP/tests/fixtures/workerd
mkdir -p "$T/wd/v8logs"
cp "$SRC"/*.js "$T/wd/"
sed -e "s|@LOGDIR@|$T/wd/v8logs|" -e "s|@PORT_FRONT@|$PF|" -e "s|@PORT_ALLOC@|$PAL|" \
	-e "s|@PORT_IDLE@|$PID_|" "$SRC/config.capnp.in" >"$T/wd/config.capnp"
(cd "$T/wd" && exec "$(demo_workerd_bin)" serve config.capnp --inspector-addr="127.0.0.1:$PI") \
	>"$T/wd/workerd.log" 2>&1 &
WORKERD_PID=$!
if ! demo_wait_http "http://127.0.0.1:$PAL/" || ! demo_wait_http "http://127.0.0.1:$PF/"; then
	tail -5 "$T/wd/workerd.log"
	fail "workerd start" "the five-worker config did not start"
	exit 0
fi
wrk -t1 -c1 -d30s "http://127.0.0.1:$PAL/" >/dev/null 2>&1 &
WRK+=($!)
wrk -t1 -c1 -d30s "http://127.0.0.1:$PF/" >/dev/null 2>&1 &
WRK+=($!)
sleep 2

# --- record --v8 --json: stdout is the JSON alone -----------------------------
"$ISOPROF" record -q --pid "$WORKERD_PID" --v8 --json --duration-ms 3000 --out-dir "$T/cpu" \
	>"$T/cpu.out" 2>"$T/cpu.err"
rc=$?
cat "$T/cpu.err"
if [ $rc -eq 0 ] && no_sanitizer_report "$T/cpu.err"; then
	pass "record --v8 --json on workerd"
else
	fail "record --v8 --json" "exit $rc or sanitizer report"
fi
if python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/cpu.out" 2>"$T/cpu.parse" &&
	node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$T/cpu.out"; then
	pass "--v8 --json: stdout parses as one JSON document (python3 json.load, node JSON.parse)"
else
	fail "--v8 --json: stdout" "$(cat "$T/cpu.parse"; head -c 300 "$T/cpu.out")"
fi
if grep -q '^== cross-check: isolate ' "$T/cpu.err" && grep -q '^Verdict: ' "$T/cpu.err" &&
	grep -q "^isoprof: wrote [0-9]* profiles to $T/cpu" "$T/cpu.err"; then
	pass "--v8 --json: the summary and the cross-checks' text are on stderr"
else
	fail "--v8 --json: stderr" "no cross-check text or summary there"
fi
# per V8 target: mapped ones carry their cross-check's key numbers and files,
# which are the ones written; any other says why it has none
if python3 - "$T/cpu.out" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
isolates = {i["isolate"] for i in d["isolates"] if i["isolate"]}
checked = {}
for v in d["v8"]:
    c = v["crosscheck"]
    assert c is not None, v
    if "skipped" in c:
        assert c["skipped"], v
        continue
    assert v["profile"] == "answered" and v["isolate"] in isolates, v
    for k in ("verdict", "agree", "tvd", "noise_floor", "tvd_threshold", "top_isoprof",
              "top_v8", "same_top", "isoprof_js_samples", "v8_js_samples"):
        assert k in c, (k, c)
    full = json.load(open(c["file"]))
    assert full["verdict"] == c["verdict"] and full["tvd"] == c["tvd"], (full["verdict"], c)
    for f in (v["file"], v["raw_file"], c["isoprof_file"], c["v8_file"]):
        assert os.path.isfile(f), f
    assert c["v8_file"] == v["file"] and v["file"].endswith("-cpu.v8.pb.gz"), v
    assert v["raw_file"].endswith("-v8.cpuprofile"), v
    assert c["isoprof_file"].endswith("-cpu.pb.gz") and ".v8." not in c["isoprof_file"], c
    checked[v["target"]] = c["verdict"]
assert "alloc" in checked and "front" in checked, checked
print(" ", checked)
PY
then
	pass "--v8 --json: each isolate's cross-check (verdict, TVD, files) or why it was skipped"
else
	fail "--v8 --json: v8" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("v8"))' "$T/cpu.out" 2>&1 | head -c 600)"
fi

# --- the names: *-cpu.pb.gz are isoprof's own, *.v8.pb.gz V8's -------------------
ls "$T/cpu"
mine=0 bad=
for f in "$T"/cpu/*-cpu.pb.gz; do
	[ -e "$f" ] || continue
	mine=$((mine + 1))
	c=$(comments "$f")
	if ! pprof_top "$f" >/dev/null || ! grep -q '^rate: .* Hz per CPU' <<<"$c" ||
		grep -q 'V8 CPU profiler' <<<"$c"; then
		bad="$bad $(basename "$f")"
	fi
done
if [ $mine -ge 3 ] && [ -z "$bad" ]; then
	pass "ls DIR/*-cpu.pb.gz: $mine profiles, all isoprof's (go tool pprof: its rate comment, no V8 source)"
else
	fail "*-cpu.pb.gz" "$mine files; not isoprof's:$bad"
fi
theirs=0 bad=
for f in "$T"/cpu/*.v8.pb.gz; do
	[ -e "$f" ] || continue
	theirs=$((theirs + 1))
	pprof_top "$f" >/dev/null && comments "$f" | grep -q '^source: V8 CPU profiler' ||
		bad="$bad $(basename "$f")"
done
want=$(python3 -c 'import json, sys; print(sum(1 for v in json.load(open(sys.argv[1]))["v8"] if v["file"]))' "$T/cpu.out")
if [ $theirs -ge 2 ] && [ "$theirs" = "$want" ] && [ -z "$bad" ]; then
	pass "ls DIR/*.v8.pb.gz: $theirs profiles, all V8's (go tool pprof: 'source: V8 CPU profiler'), one per V8 target written"
else
	fail "*.v8.pb.gz" "$theirs files (JSON: $want); not V8's:$bad"
fi

# --- record --type heap --json: per isolate, as go tool pprof reads the files ----
"$ISOPROF" record -q --pid "$WORKERD_PID" --type heap --json --duration-ms 3000 \
	--out-dir "$T/heap" >"$T/heap.out" 2>"$T/heap.err"
rc=$?
cat "$T/heap.err"
if [ $rc -eq 0 ] && no_sanitizer_report "$T/heap.err" &&
	python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["type"] == "heap"' "$T/heap.out"; then
	pass "record --type heap --json: exit 0, stdout one JSON document"
else
	fail "record --type heap --json" "exit $rc: $(head -c 300 "$T/heap.out")"
fi
ls "$T/heap"
# each isolate's numbers against go tool pprof's -top of its file
if python3 - "$T/heap.out" <<'PY'
import json, os, re, subprocess, sys
d = json.load(open(sys.argv[1]))
assert d["sampling_interval_bytes"] == 524288, d["sampling_interval_bytes"]
iso = d["isolates"]
assert [i["bytes"] for i in iso] == sorted((i["bytes"] for i in iso), reverse=True), "not largest first"
assert d["total"]["bytes"] == sum(i["bytes"] for i in iso)
assert d["total"]["sampled_objects"] == sum(i["sampled_objects"] for i in iso)
env = dict(os.environ, HOME=os.environ.get("HOME") or "/root")

def top(path, index):
    out = subprocess.run(["go", "tool", "pprof", "-top", "-sample_index=" + index, "-unit=B",
                          path], capture_output=True, text=True, env=env).stdout
    total = int(re.search(r"of (\d+)B? total", out).group(1))
    lines = out.splitlines()
    head = next(n for n, l in enumerate(lines) if "flat%" in l)
    # flat flat% sum% cum cum% name, the name possibly with spaces: "(V8 API)"
    rows = [l.split(None, 5) for l in lines[head + 1:]]
    return total, [(r[5], int(r[0].rstrip("B"))) for r in rows if len(r) == 6]

for i in iso:
    assert os.path.isfile(i["file"]) and i["file"].endswith("-heap.pb.gz"), i
    if not i["bytes"]:
        continue
    total, rows = top(i["file"], "alloc_space")
    objects, _ = top(i["file"], "alloc_objects")
    assert total == i["bytes"] and objects == i["sampled_objects"], (i, total, objects)
    t = i["top"]
    assert (t["name"], t["bytes"]) == rows[0], (t, rows[:2])
    assert abs(t["share"] - t["bytes"] / i["bytes"]) < 1e-9, t
a = iso[0]
assert a["script"] == "alloc" and a["isolate"] and a["top"]["name"] == "allocChurn", a
assert a["top"]["file"] == "alloc.js" and a["top"]["line"] > 0 and a["top"]["share"] > 0.5, a
assert a["share"] > 0.5, a
print("  alloc: %d bytes in %d sampled objects, allocChurn %.1f%%" %
      (a["bytes"], a["sampled_objects"], 100 * a["top"]["share"]))
PY
then
	pass "--type heap --json: alloc first; per isolate bytes, objects and top function = go tool pprof -top (alloc_space, alloc_objects) of its file"
else
	fail "--type heap --json: isolates" "$(head -c 800 "$T/heap.out")"
fi
if grep -q '^isoprof: heap: [0-9]* profiles over .* sampling heap profiler' "$T/heap.err" &&
	grep -qE '^  isolate 0x[0-9a-f]+ alloc version .*: .*objects; top allocChurn \(alloc\.js:[0-9]+\)' "$T/heap.err" &&
	grep -qE '^  total: ' "$T/heap.err"; then
	pass "--type heap: the text summary is on stderr (header, alloc's line with allocChurn, total)"
else
	fail "--type heap: text summary" "$(grep -A3 'heap:' "$T/heap.err")"
fi

# --- text mode: the heap summary without --json, stdout left empty ---------------
"$ISOPROF" record -q --pid "$WORKERD_PID" --type heap --script alloc.js --duration-ms 2000 \
	-o "$T/alloc-heap.pb.gz" >"$T/one.out" 2>"$T/one.err"
rc=$?
cat "$T/one.err"
n=$(grep -c '^  isolate ' "$T/one.err")
# stdout: the cross-check with V8's heap profile, as --v8 prints it for CPU
if [ $rc -eq 0 ] && grep -q '^== cross-check: isolate' "$T/one.out" && [ "$n" = 1 ] &&
	grep -qE '^  isolate 0x[0-9a-f]+ alloc .* top allocChurn' "$T/one.err" &&
	[ "$(share_of allocChurn <(pprof_top "$T/alloc-heap.pb.gz" -sample_index=alloc_space))" != 0 ]; then
	pass "--type heap -o FILE (text): one isolate's summary on stderr, the cross-check on stdout"
else
	fail "--type heap text" "exit $rc, $n isolate lines, stdout $(wc -c <"$T/one.out") bytes"
fi

# --- --json with nothing to summarize: stdout is still one JSON document --------
# json_outcome FILE STATUS ERROR: FILE is one JSON object with that outcome
json_outcome() {
	python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["exit_status"] == int(sys.argv[2]) and d["error"] == sys.argv[3]))
PY
}
sleep 30 &
idle=$!
"$ISOPROF" record -q --json --pid "$idle" --duration-ms 1000 -o "$T/idle.pb.gz" \
	>"$T/idle.out" 2>"$T/idle.err"
rc=$?
kill "$idle" 2>/dev/null
if [ $rc -eq 4 ] && json_outcome "$T/idle.out" 4 "no samples" && grep -q 'no samples' "$T/idle.err"; then
	pass "--json, a target that never ran: exit 4, stdout {exit_status: 4, error: no samples}, the sentence on stderr"
else
	fail "--json, no samples" "exit $rc, stdout: $(head -c 300 "$T/idle.out")"
fi
"$ISOPROF" record -q --json --pid "$WORKERD_PID" --script no-such-worker --duration-ms 1000 \
	-o "$T/none.pb.gz" >"$T/none.out" 2>"$T/none.err"
rc=$?
if [ $rc -eq 3 ] && json_outcome "$T/none.out" 3 "not found" && grep -q 'no-such-worker' "$T/none.err"; then
	pass "--json, --script that names nothing: exit 3, stdout {exit_status: 3, error: not found}"
else
	fail "--json, not found" "exit $rc, stdout: $(head -c 300 "$T/none.out"), stderr: $(head -c 300 "$T/none.err")"
fi
exit 0
