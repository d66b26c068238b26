#!/usr/bin/env bash
# Runs the benchmarks and writes bench/results/latest.md (machine, kernel,
# versions, then each benchmark's table).  QUICK=1 for fewer, shorter runs.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=$TOP/bench/results/latest.md
mkdir -p "$TOP/bench/results"
if [ -n "${QUICK:-}" ]; then RUNS=2 SECS=3; else RUNS=5 SECS=6; fi
WORKERD=$(bash "$TOP/scripts/install-workerd.sh")
export WORKERD
{
	echo "# isoprof benchmarks"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), kernel $(uname -r)"
	echo "- workerd $("$WORKERD" --version 2>/dev/null | awk '{ print $2 }'), $(perf --version), $(wrk --version 2>&1 | head -1 | awk '{ print $1, $2 }')"
	echo
	echo "## Target overhead (CPU time per request)"
	echo
	bash "$TOP/bench/overhead.sh" "$RUNS" "$SECS"
} >"$OUT"
cat "$OUT"
