# Start and stop the bundled workerd demo (sourced by scripts/demo.sh and
# the tests; not run on its own).
#
#   demo_start DIR PORT_ALPHA PORT_BETA [INSPECTOR_PORT]
#       copies the demo workers into DIR, fills in the config, starts
#       workerd there; sets WORKERD_PID.  Logs: DIR/workerd.log, code logs
#       in DIR/v8logs/.
#   demo_wait_http URL   waits until the URL answers (10 s at most)
#   demo_wait_optimized DIR SECONDS "FUNC SCRIPT"...
#                        waits until V8's code logs in DIR/v8logs hold
#                        TurboFan code of each function (see below)
#   demo_stop            stops workerd (TERM, then KILL)

DEMO_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/demo" && pwd)

demo_workerd_bin() {
	if [ -n "${WORKERD:-}" ]; then
		echo "$WORKERD"
	else
		bash "$DEMO_SRC/../install-workerd.sh"
	fi
}

demo_start() {
	local dir=$1 pa=$2 pb=$3 pi=${4:-} bin
	bin=$(demo_workerd_bin) || return 1
	mkdir -p "$dir/v8logs"
	rm -f "$dir"/v8logs/isolate-*.log
	cp "$DEMO_SRC"/*.js "$dir/"
	sed -e "s|@LOGDIR@|$dir/v8logs|" -e "s|@PORT_ALPHA@|$pa|" -e "s|@PORT_BETA@|$pb|" \
		"$DEMO_SRC/config.capnp.in" >"$dir/config.capnp"
	if [ -n "$pi" ]; then
		(cd "$dir" && exec "$bin" serve config.capnp --inspector-addr="127.0.0.1:$pi") \
			>"$dir/workerd.log" 2>&1 &
	else
		(cd "$dir" && exec "$bin" serve config.capnp) >"$dir/workerd.log" 2>&1 &
	fi
	WORKERD_PID=$!
	demo_wait_http "http://127.0.0.1:$pa/" && demo_wait_http "http://127.0.0.1:$pb/"
}

demo_wait_http() {
	local i
	for i in $(seq 100); do
		curl -sf -o /dev/null "$1" 2>/dev/null && return 0
		kill -0 "$WORKERD_PID" 2>/dev/null || { echo "workerd exited; see its log" >&2; return 1; }
		sleep 0.1
	done
	echo "no answer from $1" >&2
	return 1
}

# V8 pauses its code log (--log-code) while its own CPU profiler runs, so
# code compiled during a `record --v8` window never reaches the log, and
# isoprof cannot tell what that code inlined (docs/v8-profiler.md).  A
# capture that compares the two profilers therefore starts once the hot
# functions' optimized code is logged.  Returns 1 after SECONDS without it.
demo_wait_optimized() {
	local dir=$1 secs=$2 i spec fn script all
	shift 2
	for i in $(seq $((secs * 10))); do
		all=1
		for spec in "$@"; do
			fn=${spec%% *} script=${spec#* }
			grep -qE "^code-creation,JS,[0-9]+,[0-9]+,0x[0-9a-f]+,[0-9]+,$fn ${script//./\\.}:[0-9]+:[0-9]+,0x[0-9a-f]+,\\*" \
				"$dir"/v8logs/isolate-*.log 2>/dev/null || { all=; break; }
		done
		[ -n "$all" ] && return 0
		sleep 0.1
	done
	return 1
}

demo_stop() {
	[ -n "${WORKERD_PID:-}" ] || return 0
	kill "$WORKERD_PID" 2>/dev/null || true
	for _ in $(seq 30); do
		kill -0 "$WORKERD_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$WORKERD_PID" 2>/dev/null || true
	wait "$WORKERD_PID" 2>/dev/null || true
	WORKERD_PID=
}
