#!/usr/bin/env bash
# Installs the Debian packages isoprof needs, for one purpose:
#
#   scripts/setup.sh [demo]     what `make` and `make demo` need: the build's
#                               compilers and libraries, and the demo's load
#                               (wrk, curl) and npm (workerd comes from npm)
#   scripts/setup.sh test       all of the above, and what the tests and the
#                               benchmarks add: cmocka, the fuzzer runtime,
#                               go (go tool pprof reads every profile),
#                               linux-perf, chromium, strace...
#
# Idempotent; run as root.  `--check-only` (before the purpose) only reports
# what is missing (exit 1 if anything is), which `make demo` and `make test`
# use to decide whether to run this script at all.
set -euo pipefail

DEMO_PACKAGES=(
	make gcc clang pkg-config binutils git
	libbpf-dev bpftool libelf-dev zlib1g-dev
	protobuf-c-compiler libprotobuf-c-dev libiberty-dev
	libjson-c-dev libmicrohttpd-dev libcurl4-openssl-dev
	wrk curl nodejs procps ca-certificates
)
TEST_PACKAGES=(
	llvm libcmocka-dev libclang-rt-14-dev
	golang-go linux-perf python3 openssl
	strace time iproute2 util-linux
	chromium
)

# command or file that proves each need is met
DEMO_CHECKS=(
	"cmd:gcc" "cmd:clang" "cmd:make" "cmd:bpftool" "cmd:protoc-c" "cmd:objcopy"
	"cmd:wrk" "cmd:curl" "cmd:node" "cmd:npm"
	"file:/usr/include/bpf/libbpf.h" "file:/usr/include/libelf.h"
	"file:/usr/include/gelf.h" "file:/usr/include/zlib.h"
	"file:/usr/include/protobuf-c/protobuf-c.h"
	"file:/usr/include/libiberty/demangle.h"
	"file:/usr/include/json-c/json.h" "file:/usr/include/microhttpd.h"
	"glob:/usr/include/*/curl/curl.h"
)
TEST_CHECKS=(
	"cmd:go" "cmd:perf" "cmd:strip" "cmd:python3" "cmd:openssl"
	"cmd:strace" "file:/usr/bin/time" "cmd:ip" "cmd:ss" "cmd:unshare" "cmd:setpriv" "cmd:prlimit"
	"file:/usr/bin/chromium" "file:/usr/include/cmocka.h"
	"glob:/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a"
)

CHECK_ONLY=
if [ "${1:-}" = "--check-only" ]; then
	CHECK_ONLY=1
	shift
fi
PURPOSE=${1:-demo}
case $PURPOSE in
demo)
	PACKAGES=("${DEMO_PACKAGES[@]}")
	CHECKS=("${DEMO_CHECKS[@]}")
	;;
test)
	PACKAGES=("${DEMO_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
	CHECKS=("${DEMO_CHECKS[@]}" "${TEST_CHECKS[@]}")
	;;
*)
	echo "usage: scripts/setup.sh [--check-only] [demo|test]" >&2
	exit 2
	;;
esac

missing() {
	local c ok=0
	for c in "${CHECKS[@]}"; do
		case $c in
		cmd:*) command -v "${c#cmd:}" >/dev/null 2>&1 || { echo "missing: ${c#cmd:}"; ok=1; } ;;
		file:*) [ -e "${c#file:}" ] || { echo "missing: ${c#file:}"; ok=1; } ;;
		glob:*) compgen -G "${c#glob:}" >/dev/null || { echo "missing: ${c#glob:}"; ok=1; } ;;
		esac
	done
	return $ok
}

if [ -n "$CHECK_ONLY" ]; then
	missing
	exit $?
fi

if [ "$(id -u)" != 0 ]; then
	echo "scripts/setup.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
need=()
for p in "${PACKAGES[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "scripts/setup.sh: installing ${need[*]}"
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${need[@]}"
fi
# Debian's nodejs comes without npm; NodeSource's includes it.
if ! command -v npm >/dev/null 2>&1; then
	apt-get install -y -q --no-install-recommends npm
fi
missing >&2 || { echo "scripts/setup.sh: still missing the above after install" >&2; exit 1; }
echo "scripts/setup.sh: everything $PURPOSE needs is present"
