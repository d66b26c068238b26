#!/usr/bin/env bash
# The command line a new user meets first: `isoprof --version` names the
# build (git's description, as the Makefile took it) and the libbpf it runs
# with; `isoprof help COMMAND` is that command's --help; an unknown command
# or help topic exits 2; and a short option means one thing in every
# command (-s is --script wherever it exists, never --sample-ms).
set -u
. "$(dirname "$0")/../lib.sh"

T=$(mktemp -d "$TEST_TMP/cli.XXXXXX")
trap 'rm -rf "$T"; rmdir "$TEST_TMP" 2>/dev/null' EXIT

COMMANDS=$("$ISOPROF" help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
if [ "$(echo "$COMMANDS" | wc -w)" -lt 8 ]; then
	fail "help lists the commands" "got: $COMMANDS"
	exit 0
fi
pass "help lists the commands ($(echo $COMMANDS))"

for v in --version -V version; do
	out=$("$ISOPROF" "$v" 2>"$T/version.err")
	rc=$?
	if [ $rc -eq 0 ] && [[ $(sed -n 1p <<<"$out") =~ ^isoprof\ [0-9a-zA-Z._+-]+$ ]] &&
		[[ $(sed -n 2p <<<"$out") =~ ^libbpf\ v?[0-9]+\.[0-9]+ ]]; then
		pass "$v: $(tr '\n' ' ' <<<"$out")"
	else
		fail "$v" "rc $rc: $out $(cat "$T/version.err")"
	fi
done
# the version is the checkout's own, when the tests run from one
if git -C "$TOP" rev-parse --short=12 HEAD >"$T/head" 2>/dev/null; then
	if "$ISOPROF" --version | head -1 | grep -q "$(cat "$T/head")"; then
		pass "--version names this checkout ($(cat "$T/head"))"
	else
		fail "--version names this checkout" "$("$ISOPROF" --version | head -1), HEAD $(cat "$T/head")"
	fi
fi

for c in $COMMANDS; do
	"$ISOPROF" help "$c" >"$T/help-$c" 2>&1
	rc=$?
	"$ISOPROF" "$c" --help >"$T/dash-$c" 2>&1
	if [ $rc -eq 0 ] && grep -q "^Usage: isoprof $c " "$T/help-$c" && cmp -s "$T/help-$c" "$T/dash-$c"; then
		pass "help $c is '$c --help'"
	else
		fail "help $c" "rc $rc: $(head -3 "$T/help-$c")"
	fi
done

"$ISOPROF" help no-such-command >"$T/nosuch.out" 2>"$T/nosuch.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "no command 'no-such-command'" "$T/nosuch.err" && [ ! -s "$T/nosuch.out" ]; then
	pass "help of an unknown command: exit 2, said on stderr"
else
	fail "help of an unknown command" "rc $rc: $(cat "$T/nosuch.err")"
fi
"$ISOPROF" no-such-command >/dev/null 2>"$T/unknown.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "unknown command 'no-such-command'" "$T/unknown.err"; then
	pass "an unknown command: exit 2"
else
	fail "an unknown command" "rc $rc: $(cat "$T/unknown.err")"
fi

# "  -s, --script=NAME" in argp's help: every short option with its long name
for c in $COMMANDS; do
	sed -nE 's/^  -([A-Za-z0-9]), --([a-z0-9-]+).*/\1 \2/p' "$T/help-$c" | sed "s/\$/ $c/"
done | grep -v '^V version \|^? help ' | sort -u >"$T/shorts"
conflicts=$(awk '{ long[$1] = long[$1] ? long[$1] : $2; if (long[$1] != $2) bad[$1] = 1 }
	END { for (s in bad) print s }' "$T/shorts")
if [ "$(wc -l <"$T/shorts")" -ge 10 ] && [ -z "$conflicts" ]; then
	pass "each short option means one thing across commands ($(awk '{print $1}' "$T/shorts" | sort -u | tr -d '\n'))"
else
	fail "short options" "conflicting: $conflicts; $(grep -E "^(${conflicts//$'\n'/|}) " "$T/shorts" | tr '\n' ';')"
fi
