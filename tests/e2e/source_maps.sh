#!/usr/bin/env bash
# Source maps (issue 20, docs/source-maps.md): a TypeScript worker of two
# modules bundled and minified by the real esbuild from npm, run by the real
# workerd under wrk four ways (tests/fixtures/sourcemaps/config.capnp.in):
# an inline map, a map beside the bundle, a map only in a directory given
# with --source-maps, and a newer bundle beside the older build's map.
# The profiles are read back with go tool pprof (-top, -lines), isoprof
# top and the flamegraph: the minified names are gone from the top, the
# TypeScript names, files and lines are there; the stale map is reported
# and not trusted; a profile taken without the directory is named with it
# afterwards (convert, top); V8's own profile is mapped the same way.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$(mktemp -d "$TEST_TMP/source_maps.XXXXXX")
PI=26231 PB=26232 PD=26233 PS=26234 INSPECT=26235
PIDS=()
cleanup() {
	kill "${PIDS[@]}" $(jobs -p) 2>/dev/null
	wait 2>/dev/null
	rm -rf "$T"
	rmdir "$TEST_TMP" 2>/dev/null
}
trap cleanup EXIT

for p in $PI $PB $PD $PS $INSPECT; do
	if ss -ltn | grep -q ":$p "; then
		fail "ports" "127.0.0.1:$p is in use"
		exit 0
	fi
done

ESBUILD=${ESBUILD:-$(bash "$TOP/scripts/install-esbuild.sh")}
if [ ! -x "$ESBUILD" ]; then
	fail "esbuild" "not installed (scripts/install-esbuild.sh)"
	exit 0
fi

# --- build: what a deploy of the worker does -----------------------------------------
W=$T/wd
APP=$T/app
mkdir -p "$W/v8logs" "$W/inline" "$W/beside" "$W/dir" "$W/stale" "$T/maps" "$T/old"
cp -r "$TOP/tests/fixtures/sourcemaps/app" "$APP"
build() { # build OUTFILE ESBUILD-OPTIONS...
	local out=$1
	shift
	(cd "$APP" && "$ESBUILD" src/index.ts --bundle --minify --format=esm \
		--outfile="$out" --log-level=warning "$@")
}
ok=1
build "$W/inline/worker.js" --sourcemap=inline || ok=
# each service's bundle its own (a banner): isoprof names isolates by content
build "$W/beside/worker.js" --sourcemap --banner:js="// beside" || ok=
build "$W/dir/worker.js" --sourcemap --banner:js="// dir" || ok=
mv "$W/dir/worker.js.map" "$T/maps/" 2>/dev/null || ok=
build "$T/old/worker.js" --sourcemap || ok=
# the next build: a function added at the top of pricing.ts moves every
# position; its map is not deployed, the old one stays beside it
{ printf 'export function roundToCents(x: number): number {\n  return Math.round(x * 100) / 100;\n}\n\n'
  cat "$APP/src/pricing.ts"; } >"$APP/src/pricing.ts.new" && mv "$APP/src/pricing.ts.new" "$APP/src/pricing.ts"
sed -i 's|return new Response(`${a.toFixed(2)}|return new Response(`${roundToCents(a)}|; s|import { computeCompoundInterest, TaxTable }|import { computeCompoundInterest, roundToCents, TaxTable }|' \
	"$APP/src/index.ts"
build "$W/stale/worker.js" --sourcemap || ok=
cp "$T/old/worker.js.map" "$W/stale/worker.js.map" 2>/dev/null || ok=
if [ -n "$ok" ] && grep -q '^//# sourceMappingURL=data:application/json;base64,' "$W/inline/worker.js" &&
	! cmp -s "$T/old/worker.js" "$W/stale/worker.js"; then
	pass "esbuild $("$ESBUILD" --version): the worker bundled and minified four ways"
else
	fail "esbuild" "the bundles were not built"
	exit 0
fi
if ! grep -q computeCompoundInterest "$W/beside/worker.js" &&
	grep -qE 'function [A-Za-z_$]\(' "$W/beside/worker.js"; then
	pass "the bundle is minified: its functions have one-letter names"
else
	fail "minified" "the bundle still has the TypeScript names"
fi

sed -e "s|@LOGDIR@|$W/v8logs|" -e "s|@PORT_INLINE@|$PI|" -e "s|@PORT_BESIDE@|$PB|" \
	-e "s|@PORT_DIR@|$PD|" -e "s|@PORT_STALE@|$PS|" \
	"$TOP/tests/fixtures/sourcemaps/config.capnp.in" >"$W/config.capnp"
(cd "$W" && exec "$(demo_workerd_bin)" serve config.capnp --inspector-addr="127.0.0.1:$INSPECT") \
	>"$W/workerd.log" 2>&1 &
WORKERD_PID=$!
PIDS+=("$WORKERD_PID")
for p in $PI $PB $PD $PS; do
	if ! demo_wait_http "http://127.0.0.1:$p/"; then
		tail -5 "$W/workerd.log"
		fail "workerd start" "the four services did not start"
		exit 0
	fi
done
for p in $PI $PB $PD $PS; do
	wrk -t1 -c1 -d300s "http://127.0.0.1:$p/" >/dev/null 2>&1 &
done
sleep 3

# record NAME ARGS...: a capture into $T/NAME.pb.gz, its summary in $T/NAME.err
record() {
	local name=$1 rc
	shift
	"$ISOPROF" record --pid "$WORKERD_PID" --duration-ms 4000 "$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	cat "$T/$name.err"
	if [ $rc -eq 0 ] && no_sanitizer_report "$T/$name.err"; then
		pass "record $name: exit 0"
	else
		fail "record $name" "exit $rc"
	fi
}

# top_of SERVICE FILE [pprof options]: go tool pprof -top of the service's samples
top_of() {
	local svc=$1 f=$2
	shift 2
	pprof_top "$f" -tagfocus="script=$svc" "$@"
}

# no_minified TOPFILE: no function in the top rows has a one- or two-letter name
no_minified() {
	! awk '/flat%/ { go = 1; next } go && NR < 40 && $6 ~ /^[A-Za-z_$][A-Za-z0-9_$]?$/ { print; bad = 1 } END { exit !bad }' "$1"
}

# --- record without --source-maps --------------------------------------------------------
record plain -o "$T/plain.pb.gz"
for svc in inline beside; do
	top_of $svc "$T/plain.pb.gz" >"$T/plain.$svc.top"
	top_of $svc "$T/plain.pb.gz" -lines >"$T/plain.$svc.lines"
	sed -n '/flat%/,+6p' "$T/plain.$svc.top"
	names=$(grep -cE ' (computeCompoundInterest|marginalTaxFor|tokenizeInvoiceLines)( \(inline\))?$' "$T/plain.$svc.top")
	check "$svc: the TypeScript functions are in the top ($names of 3)" test "$names" -eq 3
	check "$svc: no minified name among the top functions" no_minified "$T/plain.$svc.top"
	check "$svc: computeCompoundInterest at its .ts file and lines (pprof -lines)" \
		grep -qE 'computeCompoundInterest (app/)?src/pricing\.ts:(7|8|9|10|11|12|13)( |$)' "$T/plain.$svc.lines"
	check "$svc: tokenizeInvoiceLines at src/text.ts" \
		grep -qE 'tokenizeInvoiceLines (app/)?src/text\.ts:[0-9]+( |$)' "$T/plain.$svc.lines"
done
check "summary: the inline map found for service inline's worker.js" \
	grep -qE 'source map: pid [0-9]+: worker\.js: inline \(3 sources\): [0-9]+ frames? named' "$T/plain.err"
check "summary: the map beside the bundle found" \
	grep -qE "source map: pid [0-9]+: worker\\.js: $W/beside/worker\\.js\\.map \\(3 sources\\)" "$T/plain.err"
check "summary: service dir's map reported missing, once" \
	test "$(grep -cE "note: source map: pid [0-9]+: worker\\.js: its source map $W/dir/worker\\.js\\.map was not found; its frames keep their generated names" "$T/plain.err")" -eq 1
check "summary: the stale map reported, not trusted" \
	grep -qE "note: source map: pid [0-9]+: worker\\.js: $W/stale/worker\\.js\\.map does not match the script .*; its frames keep their generated names" "$T/plain.err"
top_of stale "$T/plain.pb.gz" >"$T/plain.stale.top"
top_of dir "$T/plain.pb.gz" >"$T/plain.dir.top"
sed -n '/flat%/,+4p' "$T/plain.stale.top"
if ! grep -qE ' (computeCompoundInterest|tokenizeInvoiceLines)( |$)' "$T/plain.stale.top" &&
	grep -qE ' [ci]( \(inline\))?$' "$T/plain.stale.top"; then
	pass "stale: frames keep their generated names"
else
	fail "stale" "TypeScript names from a map of another build"
fi
if ! grep -qE ' (computeCompoundInterest|tokenizeInvoiceLines)( |$)' "$T/plain.dir.top"; then
	pass "dir (no --source-maps): generated names kept"
else
	fail "dir (no --source-maps)" "mapped without its map"
fi
# the generated name and position are kept beside the original
HOME=${HOME:-/root} go tool pprof -raw "$T/plain.pb.gz" >"$T/plain.raw" 2>&1
check "system_name keeps the generated name and position (JS:... worker.js:1:N)" \
	grep -qE "computeCompoundInterest (app/)?src/pricing\\.ts:[0-9]+ s=[0-9]+\\((JS:[*~^+o']*)?[A-Za-z_\$]+ worker\\.js:[0-9]+:[0-9]+\\)" "$T/plain.raw"

# --- afterwards: the profile named from the directory -----------------------------------
"$ISOPROF" convert "$T/plain.pb.gz" "$T/later.pb.gz" --source-maps "$T/maps" 2>"$T/later.err"
rc=$?
cat "$T/later.err"
top_of dir "$T/later.pb.gz" >"$T/later.dir.top"
check "convert --source-maps DIR: exit 0" test $rc -eq 0
top_of stale "$T/later.pb.gz" >"$T/later.stale.top"
check "convert --source-maps DIR: service dir's functions in TypeScript names" \
	grep -qE ' computeCompoundInterest( \(inline\))?$' "$T/later.dir.top"
check "convert --source-maps DIR: the stale service's names untouched (its map is not in DIR)" \
	bash -c "! grep -qE 'computeCompoundInterest' '$T/later.stale.top'"
"$ISOPROF" top "$T/plain.pb.gz" --source-maps "$T/maps" >"$T/later.itop" 2>"$T/later.itop.err"
check "isoprof top --source-maps DIR: computeCompoundInterest and tokenizeInvoiceLines" \
	bash -c "grep -q computeCompoundInterest '$T/later.itop' && grep -q tokenizeInvoiceLines '$T/later.itop'"

# --- record --source-maps DIR -----------------------------------------------------------
record withdir -o "$T/withdir.pb.gz" --source-maps "$T/maps"
top_of dir "$T/withdir.pb.gz" -lines >"$T/withdir.dir.lines"
# line-level: samples inside the functions' bodies, not only on their
# first lines (computeCompoundInterest 7, tokenizeInvoiceLines 2,
# marginalTaxFor 19): optimized code, whose positions the code log has.
# How many lines depends on V8: inlined into fetch, TurboFan in workerd
# keeps about one position per loop; node (below) keeps one per statement.
for svc in inline beside; do
	top_of $svc "$T/withdir.pb.gz" -lines >>"$T/withdir.dir.lines"
done
inner=$(grep -oE '(computeCompoundInterest|marginalTaxFor|tokenizeInvoiceLines) (app/)?src/[a-z]+\.ts:[0-9]+' "$T/withdir.dir.lines" |
	sort -u | awk '{ n = split($2, a, ":"); l = a[n] }
		($1 == "computeCompoundInterest" && l != 7) || ($1 == "tokenizeInvoiceLines" && l != 2) ||
		($1 == "marginalTaxFor" && l != 19) { print $1 }' | sort -u | wc -l)
check "line-level: samples inside the bodies of $inner of the three functions" test "$inner" -ge 2
check "record --source-maps DIR: service dir in TypeScript names, files and lines" \
	grep -qE 'computeCompoundInterest (app/)?src/pricing\.ts:[0-9]+( |$)' "$T/withdir.dir.lines"
check "record --source-maps DIR: the map found in DIR" \
	grep -qE "source map: pid [0-9]+: worker\\.js: $T/maps/worker\\.js\\.map \\(3 sources\\)" "$T/withdir.err"
"$ISOPROF" top "$T/withdir.pb.gz" >"$T/withdir.itop" 2>&1
check "isoprof top: the TypeScript names" \
	bash -c "grep -q computeCompoundInterest '$T/withdir.itop' && grep -q marginalTaxFor '$T/withdir.itop'"
"$ISOPROF" flame "$T/withdir.pb.gz" -o "$T/withdir.svg" 2>"$T/flame.err"
check "flamegraph (SVG): the TypeScript names and files" \
	bash -c "grep -q 'computeCompoundInterest' '$T/withdir.svg' && grep -q 'src/pricing.ts' '$T/withdir.svg'"
"$ISOPROF" flame "$T/withdir.pb.gz" -o "$T/withdir.html" 2>>"$T/flame.err"
check "flamegraph page: written" test -s "$T/withdir.html"
# the page in Chromium: the TypeScript function drawn, zoomed, in the table
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
SHOTS=$BUILD/screenshots/source-maps
mkdir -p "$SHOTS"
if [ -x "$CHROMIUM" ] && NODE_PATH=$(bash "$TOP/scripts/install-playwright.sh"); then
	NODE_PATH=$NODE_PATH CHROMIUM=$CHROMIUM TOP_CUM_MIN=50 timeout 180 node "$TOP/tests/browser/flame_page.js" \
		"$T/withdir.html" computeCompoundInterest "$SHOTS" >"$T/browser.out" 2>&1
	brc=$?
	while read -r status rest; do
		case $status in
		ok) pass "flamegraph page: $rest" ;;
		FAIL) fail "flamegraph page: ${rest%%: *}" "${rest#*: }" ;;
		esac
	done <"$T/browser.out"
	[ $brc -eq 0 ] || grep -q '^FAIL' "$T/browser.out" || fail "flamegraph page" "flame_page.js exited $brc"
else
	fail "flamegraph page" "no Chromium or playwright-core (scripts/setup.sh, scripts/install-playwright.sh)"
fi

# --- node: the map next to the script's path ---------------------------------------------
# an ES module whose sourceMappingURL names the map beside it; node's code
# log has no script sources (no --log-source-code), so the script's text
# is read from its path (in the process's root) and the map checked
# against it.  The loop inlines everything into run.mjs: the code log says
# what, and the inlined functions are mapped too.
N=$T/node
mkdir -p "$N"
cp "$W/beside/worker.js" "$N/worker.mjs"
cp "$W/beside/worker.js.map" "$N/worker.js.map"
cat >"$N/run.mjs" <<'JS'
import w from "./worker.mjs";
const end = Date.now() + 60000;
while (Date.now() < end) await w.fetch(null);
JS
(cd "$N" && exec node --perf-basic-prof --interpreted-frames-native-stack --log-code \
	--logfile-per-isolate run.mjs) >"$N/node.log" 2>&1 &
NODE_PID=$!
PIDS+=("$NODE_PID")
sleep 3
"$ISOPROF" record --pid "$NODE_PID" --duration-ms 3000 -o "$T/node.pb.gz" >"$T/node.out" 2>"$T/node.err"
rc=$?
cat "$T/node.err"
check "node: record exit 0" test $rc -eq 0
pprof_top "$T/node.pb.gz" -lines >"$T/node.lines"
sed -n '/flat%/,+6p' "$T/node.lines"
check "node: the map beside the script found and checked against its text" \
	bash -c "grep -E 'source map: pid [0-9]+: file://$N/worker\\.mjs: $N/worker\\.js\\.map \\(3 sources\\)' '$T/node.err' | grep -qv 'not checked'"
lines=$(grep -oE '(computeCompoundInterest|marginalTaxFor|tokenizeInvoiceLines) (app/)?src/[a-z]+\.ts:[0-9]+' "$T/node.lines" | sort -u | wc -l)
check "node: line-level, the three functions' samples on $lines distinct TypeScript lines" test "$lines" -ge 5
check "node: computeCompoundInterest and tokenizeInvoiceLines at their .ts files" \
	bash -c "grep -qE 'computeCompoundInterest (app/)?src/pricing\\.ts:[0-9]+' '$T/node.lines' && grep -qE 'tokenizeInvoiceLines (app/)?src/text\\.ts:[0-9]+' '$T/node.lines'"
# hostile: the map beside the script is a FIFO, then a symlink to a file
# root alone may read; each is refused with a note, nothing blocks, and the
# capture is written with the generated names
rm -f "$N/worker.js.map"
mkfifo "$N/worker.js.map"
timeout 60 "$ISOPROF" record --pid "$NODE_PID" --duration-ms 1500 -o "$T/fifo.pb.gz" >/dev/null 2>"$T/fifo.err"
rc=$?
check "node: a FIFO for the map: refused with a note, the capture written (exit $rc)" \
	bash -c "test $rc -eq 0 && test -s '$T/fifo.pb.gz' && grep -qE 'note: source map: pid [0-9]+: .*worker\\.js\\.map: .*FIFO' '$T/fifo.err'"
rm -f "$N/worker.js.map"
ln -s /etc/shadow "$N/worker.js.map"
timeout 60 "$ISOPROF" record --pid "$NODE_PID" --duration-ms 1500 -o "$T/link.pb.gz" >/dev/null 2>"$T/link.err"
rc=$?
check "node: a symlink to /etc/shadow for the map: refused with a note (exit $rc)" \
	bash -c "test $rc -eq 0 && grep -qE 'note: source map: pid [0-9]+: .*worker\\.js\\.map: symlink refused' '$T/link.err'"
kill "$NODE_PID" 2>/dev/null
rm -f "/tmp/perf-$NODE_PID.map"

# --- V8's own profiler, mapped the same way (like with like) -------------------------------
record v8 --v8 --script inline --inspector "127.0.0.1:$INSPECT" --out-dir "$T/v8"
v8pb=$(ls "$T"/v8/*-cpu.v8.pb.gz 2>/dev/null | head -1)
if [ -n "$v8pb" ]; then
	pprof_top "$v8pb" >"$T/v8.top"
	sed -n '/flat%/,+6p' "$T/v8.top"
	# V8's profiler charges code it did not see compiled, inlined into
	# fetch, to fetch (docs/v8-profiler.md): where it ran longer than the
	# capture, its top function is fetch and the inlined ones are not
	# there, which no source map changes
	v8_fetch_only=
	v8_first=$(awk '/flat%/ { h = 1; next } h && NF >= 6 { print $6; exit }' "$T/v8.top")
	[ "$v8_first" = fetch ] && ! grep -q ' computeCompoundInterest$' "$T/v8.top" && v8_fetch_only=1
	if [ -n "$v8_fetch_only" ]; then
		echo "V8's profile: its inlined code charged to fetch (compiled before its window)"
	else
		check "V8's profile: the TypeScript names too" \
			grep -qE ' (computeCompoundInterest|tokenizeInvoiceLines)( |$)' "$T/v8.top"
	fi
	check "V8's profile: no minified name among its top functions" no_minified "$T/v8.top"
	# the cross-check compares like with like: both sides' functions in TypeScript
	cc=$(ls "$T"/v8/*-crosscheck.json 2>/dev/null | head -1)
	check "cross-check: both sides name computeCompoundInterest (src/pricing.ts), neither c" \
		python3 - "$cc" "${v8_fetch_only:-}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
fns = r["functions"]
hot = [f for f in fns if f["function"] == "computeCompoundInterest"]
assert hot and hot[0]["file"].endswith("pricing.ts"), hot
assert hot[0]["isoprof_share"] > 0 and (sys.argv[2] or hot[0]["v8_share"] > 0), hot
assert not [f for f in fns if f["function"] in ("c", "i")], [f["function"] for f in fns]
PY
else
	fail "V8's profile" "no *-cpu.v8.pb.gz in $T/v8: $(ls "$T/v8" 2>&1 | tr '\n' ' ')"
fi
