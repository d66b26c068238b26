#!/usr/bin/env bash
# isoprof flame on a real profile of a real node process: the SVG is
# well-formed XML with the hot function's hover title, the HTML page embeds
# the profile byte for byte and loads nothing from outside, and the page
# works in Chromium (tests/browser/flame_page.js: zoom, tooltip, table sort,
# filter, search, download).  Screenshots go to $BUILD/screenshots/.
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/flame.XXXXXX")
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; cd /; rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT

HOT=hotAlpha
SHOTS=$BUILD/screenshots
mkdir -p "$SHOTS"

# run NAME CMD...: CMD's status in $rc, stderr in $T/NAME.err; a sanitizer report fails NAME
run() {
	local name=$1
	shift
	"$@" >"$T/$name.out" 2>"$T/$name.err"
	rc=$?
	if ! no_sanitizer_report "$T/$name.err"; then
		cat "$T/$name.err"
		fail "$name" "sanitizer report"
		return 1
	fi
	return 0
}

node --perf-basic-prof --interpreted-frames-native-stack "$TOP/tests/fixtures/js/two_hot.js" \
	300 3 "$T/truth.txt" &
np=$!
run record "$ISOPROF" record -q --pid $np --duration-ms 2000 -o "$T/node.pb.gz"
wait $np
if [ "$rc" -ne 0 ] || [ ! -s "$T/node.pb.gz" ]; then
	cat "$T/record.err"
	fail record "isoprof record exited $rc"
	exit 0
fi

# --- SVG -----------------------------------------------------------------------
if run svg "$ISOPROF" flame "$T/node.pb.gz" -o "$T/node.svg" --title 'two <hot> & "JS"'; then
	if [ "$rc" -ne 0 ]; then
		cat "$T/svg.err"
		fail svg "isoprof flame -o .svg exited $rc"
	elif python3 - "$T/node.svg" "$HOT" <<'PY'
import re
import sys
import xml.etree.ElementTree as ET

ns = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == ns + 'svg', root.tag
titles = [t.text or '' for t in root.iter(ns + 'title')]
assert titles[0] == 'two <hot> & "JS"', titles[0]
hot = [t for t in titles if t.startswith(sys.argv[2] + ' (') and 'two_hot.js:' in t]
assert hot, 'no title for ' + sys.argv[2]
share = lambda t: float(re.search(r'\ncum [^(]*\(([\d.]+)%\)', t).group(1))
hot.sort(key=share, reverse=True)
assert 'flat ' in hot[0] and share(hot[0]) >= 20, 'hot function under 20%: ' + hot[0]
rects = list(root.iter(ns + 'rect'))
assert len(rects) > 10, len(rects)
labels = [t.text for t in root.iter(ns + 'text') if t.text]
assert any(l.startswith(sys.argv[2]) for l in labels), 'hot function has no readable label'
print('svg: %d frames, %s' % (len(titles) - 1, hot[0].replace('\n', ' | ')))
PY
	then
		pass "svg: well-formed, hover title and label for $HOT"
	else
		fail svg "SVG check failed"
	fi
fi

if run svg_index "$ISOPROF" flame "$T/node.pb.gz" -o "$T/samples.svg" --sample-index samples &&
	[ "$rc" -eq 0 ] && grep -q 'samples (count): total' "$T/samples.svg"; then
	pass "svg: --sample-index samples"
else
	cat "$T/svg_index.err"
	fail "svg: --sample-index" "exit $rc or header lacks the sample type"
fi

# --- HTML ----------------------------------------------------------------------
if run html "$ISOPROF" flame "$T/node.pb.gz" -o "$T/node.html"; then
	if [ "$rc" -ne 0 ]; then
		cat "$T/html.err"
		fail html "isoprof flame -o .html exited $rc"
	elif python3 - "$T/node.html" "$T/node.pb.gz" <<'PY'
import base64, json, re, sys

page = open(sys.argv[1], encoding='utf-8').read()
m = re.search(r'<script type="application/json" id="isoprof-embed">(.*?)</script>', page, re.S)
assert m, 'no embedded profile'
cfg = json.loads(m.group(1))
assert base64.b64decode(cfg['profile']) == open(sys.argv[2], 'rb').read(), 'embedded bytes differ'
assert cfg['title'] == 'node.pb.gz', cfg.get('title')
# self-contained: nothing fetched from a file or the network
assert not re.search(r'<script[^>]+src=|<link[^>]+href=|@import|url\(', page), 'external reference'
assert page.count('<script>') == 3 and '<style>' in page, 'assets not inlined'
print('html: %d bytes, profile %d bytes embedded' % (len(page), len(base64.b64decode(cfg['profile']))))
PY
	then
		pass "html: profile embedded byte for byte, no external references"
	else
		fail html "HTML check failed"
	fi
fi

# --- errors --------------------------------------------------------------------
# expect NAME STATUS PATTERN ARGS...
expect() {
	local name=$1 status=$2 pattern=$3
	shift 3
	run "err" "$ISOPROF" flame "$@" || return
	if [ "$rc" -ne "$status" ]; then
		cat "$T/err.err"
		fail "$name" "exit $rc, want $status"
	elif ! grep -qE -- "$pattern" "$T/err.err"; then
		cat "$T/err.err"
		fail "$name" "stderr lacks /$pattern/"
	else
		pass "$name"
	fi
}
head -c 4000 /dev/urandom >"$T/random.bin"
printf '\x1f\x8b\x08\x00garbage' >"$T/badgzip.gz"
expect "missing file" 1 "^isoprof: $T/nope.pb.gz: No such file or directory$" "$T/nope.pb.gz" -o "$T/a.svg"
expect "random bytes" 1 "^isoprof: $T/random.bin: " "$T/random.bin" -o "$T/a.html"
expect "corrupt gzip" 1 "^isoprof: $T/badgzip.gz: gzip" "$T/badgzip.gz" -o "$T/a.svg"
expect "directory" 1 "^isoprof: $T: Is a directory$" "$T" -o "$T/a.svg"
expect "unknown extension" 2 "must end in .html or .svg" "$T/node.pb.gz" -o "$T/a.png"
expect "no output" 2 "-o OUT.html" "$T/node.pb.gz"
expect "bad sample index" 2 "must be one of: samples cpu" "$T/node.pb.gz" -o "$T/a.svg" --sample-index wall
expect "unwritable output" 1 "^isoprof: $T/no/such/dir/a.svg: No such file or directory$" \
	"$T/node.pb.gz" -o "$T/no/such/dir/a.svg"
if ls "$T"/a.* >/dev/null 2>&1; then
	fail "no output on error" "$(ls "$T"/a.*)"
else
	pass "no output on error"
fi

# --- the page in a browser -----------------------------------------------------
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
	fail browser "$CHROMIUM missing: run scripts/setup.sh (package chromium)"
	exit 0
fi
if ! NODE_PATH=$(bash "$TOP/scripts/install-playwright.sh"); then
	fail browser "cannot install playwright-core (scripts/install-playwright.sh)"
	exit 0
fi
export NODE_PATH CHROMIUM
timeout 180 node "$TOP/tests/browser/flame_page.js" "$T/node.html" "$HOT" "$SHOTS" "$T/node.pb.gz" \
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
	fail browser "flame_page.js exited $brc"
fi
[ -s "$SHOTS/flame-page.png" ] && echo "screenshots: $SHOTS/flame-page.png $SHOTS/flame-zoomed.png"
exit 0
