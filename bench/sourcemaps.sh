#!/usr/bin/env bash
# Benchmark 12, source maps: decoding a real bundle's map.
# The TypeScript compiler (scripts/install-codebases.sh: typescript.js,
# 9 MB) bundled with the real esbuild (scripts/install-esbuild.sh) as a
# deploy bundles a large worker: --bundle --minify --sourcemap, cjs, node.
# The positions looked up (bench/sourcemap_node.js positions): where V8
# places each function of the bundle (the '(' after `function NAME`, or
# after an anonymous `function`) and as many arbitrary characters (fixed
# seed); both sides look up the same ones.
#   isoprof  build/bench/sourcemap_bench (bench/sourcemap_bench.c):
#            sourcemap__parse, __lookup, __function_name, __check_script
#   node     node 20's own decoder, require('node:module').SourceMap:
#            JSON.parse + new SourceMap, findEntry (--expose-gc)
# One process per measurement (peak RSS growth is that parse's alone), the
# two sides alternating, ROUNDS rounds after one unrecorded run of each;
# medians (min–max), ratios isoprof / node within each round.  The unrecorded
# runs also dump every position's original file and line, which must agree
# (node's sources cleaned as isoprof cleans its own).
# Prints a markdown section.
#   bench/sourcemaps.sh [ROUNDS] [PASSES]   PASSES: timed lookup passes over
#                                           all positions in each run
set -uo pipefail
. "$(dirname "$0")/lib.sh"
ROUNDS=${1:-5}
PASSES=${2:-20}
BIN=$BENCH_BIN/sourcemap_bench

WORK=$(mktemp -d /tmp/isoprof-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
[ -x "$BIN" ] || { echo "sourcemaps: no $BIN (make -f bench/Makefile BUILD=...)"; exit 1; }
NM=$(bash "$TOP/scripts/install-codebases.sh") || { echo "sourcemaps: cannot install the codebases"; exit 1; }
ESBUILD=$(bash "$TOP/scripts/install-esbuild.sh") || { echo "sourcemaps: cannot install esbuild"; exit 1; }
JS=$WORK/typescript.min.js
MAP=$JS.map
POS=$WORK/positions.txt
"$ESBUILD" "$NM/typescript/lib/typescript.js" --bundle --minify --sourcemap --format=cjs \
	--platform=node --log-level=error --outfile="$JS" >&2 ||
	{ echo "sourcemaps: esbuild failed"; exit 1; }
read -r nfun nnamed nsample < <(node "$TOP/bench/sourcemap_node.js" positions "$JS" "$POS")
# the map: bytes of mappings, of sourcesContent; sources; names
read -r map_mappings map_content map_sources map_names < <(node -e '
	const m = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
	const content = (m.sourcesContent || []).reduce((a, s) => a + (s ? s.length : 0), 0);
	console.log(m.mappings.length, content, m.sources.length, (m.names || []).length);
' "$MAP")

iso_run() {
	"$BIN" "$MAP" "$JS" "$POS" "$PASSES" "$@" 2>"$WORK/iso.err" ||
		{ note "sourcemaps: isoprof: $(tail -1 "$WORK/iso.err")"; echo n/a; }
}
node_run() {
	node --expose-gc "$TOP/bench/sourcemap_node.js" measure "$MAP" "$POS" "$PASSES" "$@" \
		2>"$WORK/node.err" || { note "sourcemaps: node: $(tail -1 "$WORK/node.err")"; echo n/a; }
}

# unrecorded runs, which dump every position's lookup
read -r _ _ _ _ _ _ _ segs _ named_found check_ok _ < <(iso_run "$WORK/iso.tsv")
node_run "$WORK/node-raw.tsv" >/dev/null
agree=n/a compared=n/a same=n/a earlier=n/a differ=n/a
if "$BIN" clean "$WORK/node-raw.tsv" "$WORK/node.tsv" 2>"$WORK/clean.err"; then
	read -r agree compared same earlier differ < <(node "$TOP/bench/sourcemap_node.js" compare \
		"$WORK/iso.tsv" "$WORK/node.tsv" 2>"$WORK/compare.err")
	[ -s "$WORK/compare.err" ] && note "sourcemaps: $(head -5 "$WORK/compare.err")"
else
	note "sourcemaps: $(tail -1 "$WORK/clean.err")"
fi

declare -a ip ic ir ih il iname ichk np nc nr nh nl rp rc rr rh rl
for r in $(seq "$ROUNDS"); do
	note "sourcemaps: round $r of $ROUNDS"
	read -r a b c d e f g _ < <(iso_run)
	ip+=("$a") ic+=("$b") ir+=("$c") ih+=("$d") il+=("$e") iname+=("$f") ichk+=("$g")
	read -r p q s t u _ < <(node_run)
	np+=("$p") nc+=("$q") nr+=("$s") nh+=("$t") nl+=("$u")
	rp+=("$(ratio "$a" "$p")") rc+=("$(ratio "$b" "$q")") rr+=("$(ratio "$c" "$s")")
	rh+=("$(ratio "$d" "$t")") rl+=("$(ratio "$e" "$u")")
done
note "sourcemaps: done"

# cell VALUES...: "median (min–max)"
cell() {
	local m
	m=$(echo "$@" | tr ' ' '\n' | grep -v n/a | median)
	[ "$m" = n/a ] && { echo n/a; return; }
	echo "$m ($(echo "$@" | tr ' ' '\n' | grep -v n/a | spread))"
}
# mb VALUES...: KB to MB, one decimal
mb() {
	local v out=()
	for v in "$@"; do
		case $v in
		'' | n/a) out+=(n/a) ;;
		*) out+=("$(calc "$v / 1024" %.1f)") ;;
		esac
	done
	echo "${out[@]}"
}
med() { echo "$@" | tr ' ' '\n' | grep -v n/a | median; }

echo "| $ROUNDS rounds | isoprof (\`sourcemap__parse\`, \`__lookup\`) | node $(node --version) (\`new SourceMap\`, \`findEntry\`) | ratio isoprof / node (per round) |"
echo "|---|---|---|---|"
echo "| parse, wall | $(cell "${ip[@]}") ms | $(cell "${np[@]}") ms | $(cell "${rp[@]}") |"
echo "| parse, CPU | $(cell "${ic[@]}") ms | $(cell "${nc[@]}") ms | $(cell "${rc[@]}") |"
echo "| peak RSS growth | $(cell "$(mb "${ir[@]}")") MB | $(cell "$(mb "${nr[@]}")") MB | $(cell "${rr[@]}") |"
echo "| heap kept after the parse | $(cell "$(mb "${ih[@]}")") MB | $(cell "$(mb "${nh[@]}")") MB | $(cell "${rh[@]}") |"
echo "| lookup, per position | $(cell "${il[@]}") ns | $(cell "${nl[@]}") ns | $(cell "${rl[@]}") |"
echo "| function name (\`sourcemap__function_name\`), per position | $(cell "${iname[@]}") ns | – | – |"
echo "| \`sourcemap__check_script\` of the bundle | $(cell "${ichk[@]}") ms | – | – |"
echo
echo "The map: esbuild $("$ESBUILD" --version) of TypeScript's \`typescript.js\`" \
	"($(fmt "$(calc "$(stat -c %s "$NM/typescript/lib/typescript.js") / 1048576")") MB)" \
	"with \`--bundle --minify --sourcemap\`: a $(fmt "$(calc "$(stat -c %s "$JS") / 1048576")") MB bundle" \
	"of $(wc -l <"$JS") lines and a $(fmt "$(calc "$(stat -c %s "$MAP") / 1048576")") MB map" \
	"($(fmt "$(calc "$map_mappings / 1048576")") MB of mappings, $(fmt "$(calc "$map_content / 1048576")")" \
	"MB of sourcesContent; sources: $map_sources, names: $map_names), ${segs:-n/a} segments." \
	"Positions: $nfun functions as V8 places them ($nnamed named) and $nsample arbitrary characters," \
	"each looked up once untimed and $PASSES times timed per run; $named_found of the $nnamed named" \
	"given a name by \`sourcemap__function_name\`. The check of the bundle against its map:" \
	"$([ "${check_ok:-0}" = 1 ] && echo matches || echo '**does not match**')."
echo
echo "Agreement with node: the same original file and line at **${agree} of ${compared}** positions" \
	"(the same segment at $same); $differ differ. Not compared: $earlier positions before the first" \
	"segment of their line, which isoprof leaves unmapped and node's \`findEntry\` gives the last" \
	"entry of an earlier line."
echo
echo "Peak RSS growth: getrusage's ru_maxrss (node: \`process.resourceUsage().maxRSS\`) after the" \
	"parse less before it, the map's text already read. Heap kept: malloc's bytes in use" \
	"(mallinfo2), node's \`heapUsed\` after a forced gc, with the decoded map alive."
summary sourcemap_parse_ratio "$(med "${rp[@]}")"
summary sourcemap_parse_cpu_ratio "$(med "${rc[@]}")"
summary sourcemap_rss_ratio "$(med "${rr[@]}")"
summary sourcemap_heap_ratio "$(med "${rh[@]}")"
summary sourcemap_lookup_ratio "$(med "${rl[@]}")"
summary sourcemap_agree "$agree"
summary sourcemap_compared "$compared"
exit 0
