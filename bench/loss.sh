#!/usr/bin/env bash
# Benchmark 5, loss, at the highest sample rate this machine gives: the
# target is tests/fixtures/threads with one spinning thread per CPU, so
# every tick of every CPU is a sample (2 CPUs at 1000 Hz: 2000 records/s,
# 4 MB/s through the ring buffer).  The other captures of benchmark 5 come
# from benchmarks 1, 2 and 6 (bench/run.sh sums them).  Prints one line.
#   bench/loss.sh [RUNS] [SECONDS]
set -uo pipefail
. "$(dirname "$0")/lib.sh"
RUNS=${1:-2}
SECS=${2:-10}

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$WORK"' EXIT
ncpu=$(nproc)
lost=0 total=0
for _ in $(seq "$RUNS"); do
	"$FIXTURES/threads" $((SECS + 2)) "$ncpu" &
	th=$!
	sleep 0.5
	"$ISOPROF" record --frequency 1000 --pid "$th" --duration-ms $((SECS * 1000)) \
		-o "$WORK/l.pb.gz" 2>"$WORK/l.err"
	wait "$th"
	read -r l n < <(awk '/^isoprof: wrote/ { for (i = 1; i <= NF; i++) if ($i == "of") n = $(i + 1) }
			     /^isoprof: lost/ { l = $3 } END { print l + 0, n + 0 }' "$WORK/l.err")
	echo "loss-saturated $l $n" >>"$SUMMARY"
	lost=$((lost + l)) total=$((total + n))
done
note "loss: done"
echo "Saturated: \`threads\` with $ncpu spinning threads (every tick of every CPU a sample)," \
	"$RUNS captures of ${SECS} s at 1000 Hz: $lost lost of $total samples."
exit 0
