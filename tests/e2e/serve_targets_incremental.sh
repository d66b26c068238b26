#!/usr/bin/env bash
# `isoprof serve`'s GET /v1/targets reads only the code logs that changed
# (docs/daemon.md, user/attribute/listing_cache.h): against a real workerd
# of three workers (bench/scale-gen.sh), the helper's lister is one process
# kept between requests; a second listing, after the 1.5 s cache, opens
# only the code log of the worker that compiled code since (strace on the
# lister) and none of the bundles its config embeds, and lists every isolate with the name and version id a one-shot
# `isoprof targets` gives; a workerd started afterwards appears.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
A=18941 B=18944 PORT=18946
WDS=() SERVE=
cleanup() {
	[ -n "$SERVE" ] && kill "$SERVE" 2>/dev/null && wait "$SERVE" 2>/dev/null
	for p in "${WDS[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -f "/tmp/perf-$p.map"
	done
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/tmp"
export TMPDIR=$T/tmp
WORKERD=$(demo_workerd_bin) || { fail workerd "no workerd binary"; exit 0; }
if ! command -v strace >/dev/null; then
	fail strace "strace not found: the no-re-read check needs it"
	exit 0
fi

# ok NAME CONDITION: pass when the shell condition holds
ok() {
	if eval "$2"; then pass "$1"; else fail "$1" "$2"; fi
}

# start_wd DIR N BASE: a workerd of N scale workers, its pid appended to WDS
start_wd() {
	bash "$TOP/bench/scale-gen.sh" "$1" "$2" "$3" >/dev/null
	(cd "$1" && exec "$WORKERD" serve config.capnp >"$1/workerd.log" 2>&1) &
	WDS+=($!)
	for _ in $(seq 100); do
		curl -sf -o /dev/null "http://127.0.0.1:$(($3 + $2 - 1))/" && return 0
		sleep 0.1
	done
	return 1
}

# listing NAME: GET /v1/targets into $T/NAME.json; 0 when 200
listing() {
	[ "$(curl -s -o "$T/$1.json" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/targets")" = 200 ]
}

# isolates FILE PID: "path name version_full nscripts" per code log of PID
isolates() {
	python3 - "$1" "$2" <<-'EOF'
		import json, sys
		for p in json.load(open(sys.argv[1])):
		    if p["pid"] != int(sys.argv[2]):
		        continue
		    for l in p["code_logs"]:
		        print(l["path"], l["name"], l["version_full"], len(l["scripts"] or []))
		EOF
}

start_wd "$T/a" 3 $A || { fail workerd "workerd a did not start: $(tail -3 "$T/a/workerd.log")"; exit 0; }
WA=${WDS[0]}
curl -sf -o /dev/null "http://127.0.0.1:$A/warm"

"$ISOPROF" serve --listen "127.0.0.1:$PORT" 2>"$T/serve.log" &
SERVE=$!
for _ in $(seq 100); do
	curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break
	sleep 0.1
done

listing first || fail first-listing "GET /v1/targets: not 200: $(tail -3 "$T/serve.log")"
isolates "$T/first.json" "$WA" >"$T/first.txt"
ok first-lists-all "[ \$(wc -l <'$T/first.txt') = 3 ] && ! grep -q ' None ' '$T/first.txt'"

# the lister: the helper's child running `targets --json --requests`
LISTER=
for c in /proc/[0-9]*/cmdline; do
	if tr '\0' ' ' <"$c" 2>/dev/null | grep -q "^isoprof targets --json --requests"; then
		p=${c#/proc/}
		p=${p%/cmdline}
		ppid=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)
		[ "$(cat "/proc/$ppid/comm" 2>/dev/null)" = isoprof-priv ] &&
			[ "$(awk '/^PPid:/ {print $2}' "/proc/$ppid/status")" = "$SERVE" ] && LISTER=$p
	fi
done
ok lister-kept "[ -n '$LISTER' ]"

# worker 1 compiles its 400 functions: its log grows; the other two do not
sleep 1.6
curl -sf -o /dev/null "http://127.0.0.1:$((A + 1))/warm"
strace -f -qq -e trace=openat,openat2,open -o "$T/strace.txt" -p "$LISTER" &
ST=$!
sleep 0.5
listing second || fail second-listing "GET /v1/targets: not 200"
sleep 0.2
kill "$ST" 2>/dev/null
wait "$ST" 2>/dev/null
opened=$(grep -o 'isolate-0x[0-9a-f]*-[0-9]*-v8\.log' "$T/strace.txt" | sort -u)
# (listed by its service name, w1, from the config: docs/attribution.md)
grown=$(awk '$2 == "w1" {print $1}' "$T/first.txt")
grown=${grown##*/}
ok one-log-read "[ '$opened' = '$grown' ]"
[ "$opened" = "$grown" ] || echo "  opened: $opened; grown: $grown" >&2
ok lister-same-process "kill -0 $LISTER"
# the config is kept (checked by its identity), each isolate's service too:
# no embedded bundle is opened again (services.h)
ok no-embed-reread "! grep -qE '/w[0-9]+\.js\"' '$T/strace.txt' && grep -q 'config.capnp' '$T/strace.txt'"

# the same isolates, names and version ids as a fresh one-shot listing
"$ISOPROF" targets --json --pid "$WA" >"$T/oneshot.json" 2>"$T/oneshot.err"
isolates "$T/second.json" "$WA" >"$T/second.txt"
isolates "$T/oneshot.json" "$WA" >"$T/oneshot.txt"
ok same-as-oneshot "[ -s '$T/second.txt' ] && cmp -s '$T/second.txt' '$T/oneshot.txt'"
ok same-ids-as-before "cmp -s <(cut -d' ' -f1-3 '$T/first.txt') <(cut -d' ' -f1-3 '$T/second.txt')"

# a workerd started now: its isolates appear in the next listing
start_wd "$T/b" 2 $B || { fail workerd "workerd b did not start"; exit 0; }
WB=${WDS[1]}
sleep 1.6
listing third || fail third-listing "GET /v1/targets: not 200"
isolates "$T/third.json" "$WB" >"$T/third-b.txt"
ok new-isolates-appear "[ \$(wc -l <'$T/third-b.txt') = 2 ] && ! grep -q ' None ' '$T/third-b.txt'"

# a stopped workerd: its logs stay on disk, the listing of its pid goes
kill "$WB" && wait "$WB" 2>/dev/null
sleep 1.6
listing fourth || fail fourth-listing "GET /v1/targets: not 200"
ok stopped-gone "! grep -q '\"pid\": *$WB,' '$T/fourth.json'"

kill "$SERVE"
wait "$SERVE"
ok serve-stops "[ $? -eq 0 ]"
SERVE=
check no-sanitizer no_sanitizer_report "$T/serve.log"
