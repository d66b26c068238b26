#!/usr/bin/env bash
# Generates a workerd of N workers, the shape of an edge host (issue 13):
# each worker a ~80 KB bundle of 400 functions, on its own port.
#   bench/scale-gen.sh DIR N BASE_PORT
# Writes DIR/config.capnp and DIR/wN.js; V8's perf map and code logs are
# turned on as isoprof asks (DIR/v8logs).  Worker i listens on
# 127.0.0.1:BASE_PORT+i; GET /warm runs all 400 functions once (so each is
# compiled, logged and in the perf map), any other path runs the worker's
# hot function hot_wI.  Not checked in: bench/scale.sh generates it.
set -euo pipefail
dir=$1 n=$2 base=$3
mkdir -p "$dir/v8logs"

# every worker's bundle from one awk (an awk per worker costs seconds at 1000)
gen_workers() {
	awk -v n="$n" -v dir="$dir" 'BEGIN {
		for (i = 0; i < n; i++) {
			f = dir "/w" i ".js"
			for (k = 0; k < 400; k++) {
				printf "function w%d_f%d(x) {\n", i, k >f
				printf "  let acc = x ^ %d;\n", k * 2654435761 % 65536 >f
				printf "  for (let j = 0; j < 3; j++) { acc = (acc * 31 + j + %d) %% 1000003; }\n", k >f
				printf "  const label = \"w%d_f%d:\" + (acc & 255);\n", i, k >f
				printf "  return label.length + acc;\n}\n" >f
			}
			printf "function warm_w%d() {\n  let s = 0;\n", i >f
			for (k = 0; k < 400; k++)
				printf "  s += w%d_f%d(%d);\n", i, k, k >f
			printf "  return s;\n}\n" >f
			printf "function hot_w%d(n) {\n  let s = 0;\n", i >f
			printf "  for (let r = 0; r < n; r++) { s += w%d_f%d(r) + w%d_f%d(s & 1023); }\n", i, 7, i, 11 >f
			printf "  return s;\n}\n" >f
			printf "export default {\n  async fetch(req) {\n" >f
			printf "    const u = new URL(req.url);\n" >f
			printf "    const v = u.pathname === \"/warm\" ? warm_w%d() : hot_w%d(20000);\n", i, i >f
			printf "    return new Response(\"w%d \" + v + \"\\n\");\n  }\n};\n", i >f
			close(f)
		}
	}'
}

{
	echo 'using Workerd = import "/workerd/workerd.capnp";'
	echo 'const config :Workerd.Config = ('
	echo '  services = ['
	for ((i = 0; i < n; i++)); do echo "    (name = \"w$i\", worker = .w$i),"; done
	echo '  ],'
	echo '  sockets = ['
	for ((i = 0; i < n; i++)); do
		echo "    (name = \"s$i\", address = \"127.0.0.1:$((base + i))\", http = (), service = \"w$i\"),"
	done
	echo '  ],'
	echo '  v8Flags = ['
	echo '    "--perf-basic-prof", "--interpreted-frames-native-stack", "--log-code",'
	echo '    "--log-source-code", "--logfile-per-isolate",'
	echo "    \"--logfile=$dir/v8logs/v8.log\","
	echo '  ],'
	echo ');'
	for ((i = 0; i < n; i++)); do
		echo "const w$i :Workerd.Worker = (modules = [ (name = \"w$i.js\", esModule = embed \"w$i.js\") ], compatibilityDate = \"2024-01-01\");"
	done
} >"$dir/config.capnp"
gen_workers
