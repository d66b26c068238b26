#!/usr/bin/env bash
# Per-isolate attribution on real runtimes: workerd with five workers on one
# thread (three doing 1:2:3 units of JS work per request through service
# bindings, one allocating, one idle) and node with worker_threads.
set -u
. "$(dirname "$0")/../lib.sh"
. "$TOP/scripts/demo-lib.sh"

T=$TEST_TMP
# node with --perf-basic-prof also writes isolate-*.log files into its cwd
cd "$T" || exit 1
trap 'kill $(jobs -p) 2>/dev/null; demo_stop; rm -rf "$T"' EXIT
SRC=$TOP/tests/fixtures/workerd
PF=18991 PA=18992 PI=18993

# start the five-worker config from $1 (a copy of the fixture) into $2
start_workerd() {
	local src=$1 dir=$2 bin
	bin=$(demo_workerd_bin) || return 1
	mkdir -p "$dir/v8logs"
	rm -f "$dir"/v8logs/*
	cp "$src"/*.js "$dir/"
	sed -e "s|@LOGDIR@|$dir/v8logs|" -e "s|@PORT_FRONT@|$PF|" -e "s|@PORT_ALLOC@|$PA|" \
		-e "s|@PORT_IDLE@|$PI|" "$src/config.capnp.in" >"$dir/config.capnp"
	(cd "$dir" && exec "$bin" serve config.capnp) >"$dir/workerd.log" 2>&1 &
	WORKERD_PID=$!
	demo_wait_http "http://127.0.0.1:$PF/" && demo_wait_http "http://127.0.0.1:$PA/"
}

# version id of one module, computed independently: sha256(name NUL source NUL)
version_of() {
	{ printf '%s\0' "$1"; cat "$2"; printf '\0'; } | sha256sum | cut -c1-12
}

# samples_in FILE [pprof args]: sample count of a profile, by go tool pprof
samples_in() {
	local f=$1
	shift
	HOME=${HOME:-/root} go tool pprof -raw -sample_index=samples "$@" "$f" 2>/dev/null |
		awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 }
		     on && $1 ~ /^[0-9]+$/ && NF >= 3 { n += $1 } END { print n + 0 }'
}

if ! start_workerd "$SRC" "$T/wd"; then
	tail -5 "$T/wd/workerd.log"
	fail "workerd start" "the five-worker config did not start"
	exit 0
fi
# warm up every path, then load front (-> mid, back) and alloc
for _ in 1 2 3 4 5; do curl -s "http://127.0.0.1:$PF/" >/dev/null; curl -s "http://127.0.0.1:$PA/" >/dev/null; done
wrk -t1 -c2 -d10s "http://127.0.0.1:$PF/" >"$T/wrk-front.txt" 2>&1 &
wrk1=$!
wrk -t1 -c1 -d10s "http://127.0.0.1:$PA/" >"$T/wrk-alloc.txt" 2>&1 &
wrk2=$!
sleep 3 # past tier-up
"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 5000 --out-dir "$T/iso" 2>"$T/iso.err"
rc=$?
cat "$T/iso.err"
ls "$T/iso" 2>/dev/null
if [ $rc -ne 0 ] || ! no_sanitizer_report "$T/iso.err"; then
	fail "record --out-dir" "exit $rc or sanitizer report"
else
	pass "record --out-dir on workerd"
	declare -A file
	for w in front mid back alloc idle; do
		file[$w]=$(ls "$T/iso/$w-"*-cpu.pb.gz 2>/dev/null | head -1)
	done
	for w in front mid back alloc; do
		if [ -n "${file[$w]}" ] && pprof_top "${file[$w]}" >/dev/null; then
			pass "$w: its own profile ($(basename "${file[$w]}"))"
		else
			fail "$w: its own profile" "no $w-*-cpu.pb.gz (named after the service) readable by pprof"
		fi
	done
	[ -f "$T/iso/no-isolate-cpu.pb.gz" ] && pass "samples outside isolates in no-isolate-cpu.pb.gz" ||
		fail "no-isolate profile" "missing"

	# The ground truth is JS work (1:2:3 units of the same loop per request):
	# compare each isolate's JS samples.  Runtime work around it (request
	# plumbing, a tier-up compile) is attributed too, but is no known amount.
	if [ -n "${file[front]}" ] && [ -n "${file[mid]}" ] && [ -n "${file[back]}" ]; then
		f=$(samples_in "${file[front]}" -tagfocus=class=js)
		m=$(samples_in "${file[mid]}" -tagfocus=class=js)
		b=$(samples_in "${file[back]}" -tagfocus=class=js)
		echo "JS samples: front $f mid $m back $b"
		for pair in "front $f 16.67" "mid $m 33.33" "back $b 50"; do
			set -- $pair
			share=$(awk -v x="$2" -v t="$((f + m + b))" 'BEGIN { printf "%.2f", t ? 100 * x / t : 0 }')
			if awk -v s="$share" -v e="$3" 'BEGIN { d = s - e; if (d < 0) d = -d; exit !(d <= 5) }'; then
				pass "$1: $share% of the three workers' JS samples (expected $3%)"
			else
				fail "$1: share of JS samples" "$share%, expected $3% +- 5 pp"

			fi
		done
	fi

	# no JS frame of one worker's script in another worker's profile
	leak=""
	for w in front mid back alloc; do
		[ -n "${file[$w]}" ] || continue
		HOME=${HOME:-/root} go tool pprof -raw "${file[$w]}" 2>/dev/null >"$T/$w.raw"
		for other in front mid back alloc; do
			[ "$other" = "$w" ] && continue
			grep -qE "\b${other}(Work|Churn)\b|[ /]${other}\.js:" "$T/$w.raw" && leak="$leak $other-in-$w"
		done
	done
	[ -z "$leak" ] && pass "no worker's JS frames in another worker's profile" ||
		fail "JS frames stay in their isolate" "found:$leak"

	# version id = sha256(name NUL source NUL) of the worker's one module
	for w in front back; do
		want=$(version_of "$w.js" "$T/wd/$w.js")
		case "$(basename "${file[$w]:-none}")" in
		"$w-$want-"*) pass "$w: version id $want matches the source" ;;
		*) fail "$w: version id" "file $(basename "${file[$w]:-none}") does not carry $want" ;;
		esac
	done

	# GC in the allocating worker's own profile
	if [ -n "${file[alloc]}" ]; then
		gc=$(pprof_top "${file[alloc]}" | awk '$6 == "(garbage" { sub("%", "", $5); print $5 }')
		if [ -n "$gc" ] && awk -v g="$gc" 'BEGIN { exit !(g > 0) }'; then
			pass "alloc: (garbage collector) $gc% of its own profile"
		else
			fail "alloc: GC share" "no (garbage collector) in its profile"
		fi
	fi
	# the idle worker: no profile, or only idle samples
	if [ -z "${file[idle]}" ]; then
		pass "idle worker: no samples"
	else
		busy=$(samples_in "${file[idle]}" -tagignore=class=idle)
		[ "$busy" = 0 ] && pass "idle worker: idle samples only" || fail "idle worker" "$busy busy samples"
	fi
	# the summary splits each isolate by class
	grep -qE "isolate 0x[0-9a-f]+ back version [0-9a-f]{12} .*js [0-9.]+%" "$T/iso.err" &&
		pass "summary: per-isolate samples, share and classes" ||
		fail "summary per isolate" "no 'isolate ... back version ... js N%' line"
fi

# --script selects one isolate; an unknown script names the running ones
kill $wrk1 $wrk2 2>/dev/null
wait $wrk1 $wrk2 2>/dev/null
wrk -t1 -c2 -d4s "http://127.0.0.1:$PF/" >/dev/null 2>&1 &
sleep 0.5
"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1500 --script back.js --version latest \
	-o "$T/back.pb.gz" 2>"$T/back.err"
rc=$?
# by now TurboFan has inlined backWork into fetch: the code log's source
# positions bring it back as an inline frame
pprof_top "$T/back.pb.gz" -lines -nodefraction=0 >"$T/back.top"
if [ $rc -eq 0 ] && grep -qE ' backWork( \(inline\))? back\.js:[0-9]+' "$T/back.top" &&
	! grep -qE ' (front|mid|alloc|idle)\.js:[0-9]+' "$T/back.top"; then
	pass "record --script back.js --version latest keeps only back's isolate"
else
	cat "$T/back.err"
	sed -n '1,30p' "$T/back.top"
	fail "record --script back.js" "exit $rc, or backWork missing, or other workers present"
fi
# an operator's label for back.js's version: selectable, and on every sample
printf '# script version-id label\nback.js %s deploy-42\n' "$(version_of back.js "$T/wd/back.js")" >"$T/labels"
"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1000 --version-labels "$T/labels" \
	--script back.js --version deploy-42 -o "$T/label.pb.gz" 2>"$T/label.err"
if [ $? -eq 0 ] && HOME=${HOME:-/root} go tool pprof -tags "$T/label.pb.gz" 2>/dev/null |
	grep -qE '^ +[0-9.]+[a-z]* \( *100%\): deploy-42$'; then
	pass "--version-labels: back.js's version shown and selected as deploy-42"
else
	cat "$T/label.err"
	fail "--version-labels" "no sample labelled version=deploy-42"
fi

# targets: per isolate its name, version id and, with --sample-ms, recent samples
# (load of its own: the 4 s above may be over by now on a slow or busy machine)
wrk -t1 -c2 -d3s "http://127.0.0.1:$PF/" >/dev/null 2>&1 &
sleep 0.5
"$ISOPROF" targets --pid "$WORKERD_PID" --sample-ms 800 --json >"$T/targets.json" 2>"$T/targets.err"
if python3 - "$T/targets.json" <<'PY'
import json, sys
procs = json.load(open(sys.argv[1]))
logs = {l["name"]: l for p in procs for l in p["code_logs"]}
# shown by service name (the config names them)
assert logs["back"]["recent_samples"] > 0, logs["back"]
assert logs["idle"]["recent_samples"] == 0, logs["idle"]
assert len(logs["back"]["version"]) == 12 and logs["back"]["created"]
PY
then
	pass "targets --sample-ms: recent samples per isolate (back busy, idle none), version, creation time"
else
	cat "$T/targets.err"
	fail "targets --sample-ms" "see above"
fi
"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1000 --script nosuch.js -o "$T/x.pb.gz" 2>"$T/nosuch.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "nosuch.js" "$T/nosuch.err" && grep -q "front (version" "$T/nosuch.err" &&
	grep -q "back (version" "$T/nosuch.err"; then
	pass "unknown --script: $(head -c 160 "$T/nosuch.err")"
else
	cat "$T/nosuch.err"
	fail "unknown --script" "exit $rc, message does not name the running scripts"
fi
kill $(jobs -p) 2>/dev/null
demo_stop

# a changed source and a restart give a new version id
mkdir -p "$T/src2"
cp "$SRC"/* "$T/src2/"
echo "// deployment 2" >>"$T/src2/back.js"
if start_workerd "$T/src2" "$T/wd2"; then
	want=$(version_of back.js "$T/wd2/back.js")
	old=$(version_of back.js "$SRC/back.js")
	wrk -t1 -c2 -d4s "http://127.0.0.1:$PF/" >/dev/null 2>&1 &
	sleep 1
	"$ISOPROF" record -q --pid "$WORKERD_PID" --duration-ms 1500 --script back.js \
		--out-dir "$T/iso2" 2>"$T/iso2.err"
	got=$(ls "$T/iso2" 2>/dev/null | sed -nE 's/^back-([0-9a-f]{12})-.*/\1/p' | head -1)
	if [ -n "$got" ] && [ "$got" = "$want" ] && [ "$got" != "$old" ]; then
		pass "changed source: new version id $got (was $old)"
	else
		cat "$T/iso2.err"
		fail "changed source" "version '$got', expected $want (old $old)"
	fi
	kill $(jobs -p) 2>/dev/null
	demo_stop
fi

# node with worker_threads: one profile per thread's isolate
node --perf-basic-prof --interpreted-frames-native-stack --no-turbo-inlining \
	"$TOP/tests/fixtures/js/worker_threads.js" 6 &
np=$!
sleep 1.5
"$ISOPROF" record -q --pid $np --duration-ms 3000 --out-dir "$T/node" 2>"$T/node.err"
rc=$?
cat "$T/node.err"
alpha="" beta=""
for f in "$T"/node/*-0x*-cpu.pb.gz; do
	[ -f "$f" ] || continue
	top=$(pprof_top "$f" | awk 'NR > 1 && $6 ~ /Work$/ { print $6; exit }')
	case "$top" in
	threadAlphaWork) alpha=$f ;;
	threadBetaWork) beta=$f ;;
	esac
done
if [ $rc -eq 0 ] && [ -n "$alpha" ] && [ -n "$beta" ] && [ "$alpha" != "$beta" ] &&
	! pprof_top "$alpha" -nodefraction=0 | grep -q threadBetaWork &&
	! pprof_top "$beta" -nodefraction=0 | grep -q threadAlphaWork; then
	pass "node worker_threads: one profile per isolate, each with its own hot function"
else
	ls "$T/node" 2>/dev/null
	fail "node worker_threads" "alpha '$alpha' beta '$beta' (rc $rc)"
fi
kill $np 2>/dev/null
wait $np 2>/dev/null
exit 0
