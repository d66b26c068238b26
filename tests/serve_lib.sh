# Helpers shared by the tests of `isoprof serve` (tests/e2e/serve.sh,
# tests/e2e/serve_pull.sh; sourced after lib.sh, not run).  They use $T
# (the test's temp dir: the last response lands in $T/body and $T/hdr),
# $ISOPROF, and SERVE_PIDS (the daemons started, for the test's cleanup).
#
#   start_serve PORT LOG [ARGS...]   a daemon on 127.0.0.1:PORT
#   req METHOD URL [CURL ARGS...]    one request: $STATUS, $T/body, $T/hdr
#   header NAME                      a header of the last response
#   envelope_ok NAME STATUS CODE [SUBSTRING]   the last response is the error envelope
#   is_gzip FILE, top_fn FILE [ARGS]           the first function of pprof -top
#   start_wd DIR SERVICE MODULE PORT...        a workerd config of the demo's workers
#   free_port                        a TCP port nobody listens on now

SERVE_PIDS=()

# free_port: a port the kernel picks, free when asked (other tests run beside this one)
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_serve PORT LOG [ARGS...]: a daemon in the background; waits until it answers
start_serve() {
	local port=$1 log=$2
	shift 2
	"$ISOPROF" serve --listen "127.0.0.1:$port" "$@" 2>"$log" &
	SERVE_PIDS+=($!)
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
		kill -0 "${SERVE_PIDS[-1]}" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# req METHOD URL [CURL ARGS...]: body in $T/body, headers in $T/hdr, status in $STATUS
req() {
	local method=$1 url=$2
	shift 2
	STATUS=$(curl -s -X "$method" -o "$T/body" -D "$T/hdr" -w '%{http_code}' "$@" "$url")
}

header() {
	grep -i "^$1:" "$T/hdr" | head -1 | sed -e 's/^[^:]*: *//' -e 's/\r$//'
}

# envelope_ok NAME STATUS CODE [MESSAGE_SUBSTRING]: the last response is the
# failure envelope with this status and error code
envelope_ok() {
	local name=$1 want=$2 code=$3 sub=${4:-} why
	why=$(python3 - "$T/body" "$code" "$sub" <<-'EOF'
		import json, sys
		try:
		    d = json.load(open(sys.argv[1], encoding="utf-8"))
		except Exception as e:
		    print("not JSON: %s" % e); sys.exit(0)
		ok = (isinstance(d, dict) and set(d) == {"success", "errors", "messages", "result"}
		      and d["success"] is False and d["messages"] == [] and d["result"] is None
		      and isinstance(d["errors"], list) and len(d["errors"]) == 1)
		if not ok:
		    print("not the envelope: %r" % d); sys.exit(0)
		e = d["errors"][0]
		if e.get("code") != int(sys.argv[2]) or e["code"] < 1000:
		    print("code %r, want %s" % (e.get("code"), sys.argv[2])); sys.exit(0)
		m = e.get("message", "")
		if not m or "\n" in m or (sys.argv[3] and sys.argv[3] not in m):
		    print("message %r lacks %r" % (m, sys.argv[3])); sys.exit(0)
		EOF
	)
	if [ "$STATUS" = "$want" ] && [ -z "$why" ] &&
		[[ $(header Content-Type) == application/json* ]]; then
		pass "$name: $want, code $code"
	else
		fail "$name" "HTTP $STATUS (want $want) ${why} $(head -c 300 "$T/body")"
	fi
}

is_gzip() {
	[ "$(head -c 2 "$1" | od -An -tx1 | tr -d ' \n')" = 1f8b ]
}

# top_fn FILE [ARGS]: the first function of go tool pprof -top
top_fn() {
	pprof_top "$@" | awk '/^ *flat +flat%/ { getline; print $6; exit }'
}

# The demo's workers under names unique on this host: a capture by script
# name takes every runtime's isolates of that script, and another test's
# demo may be running.
# start_wd DIR then SERVICE MODULE PORT...: writes DIR/config.capnp
start_wd() {
	local dir=$1 services= sockets= workers= svc mod port n=0
	shift
	mkdir -p "$dir/v8logs"
	while [ $# -gt 0 ]; do
		svc=$1 mod=$2 port=$3
		shift 3
		n=$((n + 1))
		services+="(name = \"$svc\", worker = .worker$n), "
		sockets+="(name = \"http-$svc\", address = \"127.0.0.1:$port\", http = (), service = \"$svc\"), "
		workers+="const worker$n :Workerd.Worker = ( modules = [ (name = \"$mod\", esModule = embed \"$mod\") ], compatibilityDate = \"2024-01-01\" );
"
	done
	cat >"$dir/config.capnp" <<-EOF
		using Workerd = import "/workerd/workerd.capnp";
		const config :Workerd.Config = (
		  services = [ $services ],
		  sockets = [ $sockets ],
		  v8Flags = [ "--perf-basic-prof", "--interpreted-frames-native-stack", "--log-code",
		              "--log-source-code", "--logfile-per-isolate", "--logfile=$dir/v8logs/v8.log" ],
		);
		$workers
	EOF
}
