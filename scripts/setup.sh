#!/usr/bin/env bash
# Installs every Debian package isoprof's build, tests and demo need.
# Idempotent; run as root.  `--check-only` only reports what is missing
# (exit 1 if anything is), which `make test` and `make demo` use to decide
# whether to run this script at all.
set -euo pipefail

PACKAGES=(
	make gcc clang llvm pkg-config binutils
	libbpf-dev bpftool libelf-dev zlib1g-dev
	protobuf-c-compiler libprotobuf-c-dev libiberty-dev
	libjson-c-dev libmicrohttpd-dev
	libcmocka-dev libclang-rt-14-dev
	golang-go linux-perf wrk procps curl nodejs python3
	strace time iproute2 util-linux
	chromium
)

# command or file that proves each need is met
CHECKS=(
	"cmd:gcc" "cmd:clang" "cmd:make" "cmd:bpftool" "cmd:protoc-c" "cmd:go"
	"cmd:perf" "cmd:wrk" "cmd:objcopy" "cmd:strip" "cmd:curl" "cmd:node" "cmd:npm" "cmd:python3"
	"cmd:strace" "file:/usr/bin/time" "cmd:ip" "cmd:ss" "cmd:unshare" "cmd:setpriv" "cmd:prlimit"
	"file:/usr/bin/chromium"
	"file:/usr/include/bpf/libbpf.h" "file:/usr/include/libelf.h"
	"file:/usr/include/gelf.h" "file:/usr/include/zlib.h"
	"file:/usr/include/protobuf-c/protobuf-c.h"
	"file:/usr/include/libiberty/demangle.h" "file:/usr/include/cmocka.h"
	"file:/usr/include/json-c/json.h" "file:/usr/include/microhttpd.h"
	"glob:/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a"
)

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

if [ "${1:-}" = "--check-only" ]; then
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
echo "scripts/setup.sh: all build and test dependencies present"
