#!/usr/bin/env bash
# The layering guard: a folder includes only the folders below it
# (docs/design/architecture.md, "Which folder may include which").  Project
# headers are included by their path from the repository root
# ("symbolize/perfmap.h"), so a file's includes say which rooms it uses;
# a bare "name.h" is only for generated headers (skeletons, the pprof
# schema, the build's version) and, in bpf/, the BPF side's own headers.
#
# Prints one line per include that goes up or sideways; exits 1 if any.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2

# room: the rooms it may include besides itself
allowed() {
	case $1 in
	lib) echo "" ;;
	symbolize) echo "lib" ;;
	proto) echo "lib" ;;
	user/capture) echo "lib symbolize proto bpf" ;;
	user/attribute) echo "lib symbolize proto bpf user/capture" ;;
	user/v8) echo "lib symbolize proto bpf user/capture user/attribute" ;;
	user/report) echo "lib proto" ;;
	user/push) echo "lib proto" ;;
	user/serve) echo "lib proto user/report user" ;;
	user/record) echo "lib symbolize proto bpf user/capture user/attribute user/v8 user/report user/push user" ;;
	user/cmd) echo "lib symbolize proto bpf user/capture user/attribute user/v8 user/report user/serve user/record user/push user" ;;
	user) echo "lib" ;;
	*) echo "?" ;;
	esac
}

# the room of a path: its folder, user/ sub-folders counted as rooms
room_of() {
	local d=${1%/*}
	[ "$d" = "$1" ] && d=.
	echo "$d"
}

GENERATED='^([a-z_]+\.skel\.h|profile\.pb-c\.h|vmlinux\.h|version\.h)$'
bad=0
while IFS= read -r f; do
	from=$(room_of "$f")
	ok=$(allowed "$from")
	if [ "$ok" = "?" ]; then
		echo "$f: a source file outside the known rooms (add the room to tests/check_layers.sh and docs/design/architecture.md)"
		bad=1
		continue
	fi
	while IFS= read -r inc; do
		if [[ $inc != */* ]]; then
			[[ $inc =~ $GENERATED ]] && continue
			echo "$f: #include \"$inc\": name a project header by its path from the root"
			bad=1
			continue
		fi
		to=$(room_of "$inc")
		[ "$to" = "$from" ] && continue
		case " $ok " in
		*" $to "*) ;;
		*)
			echo "$f: #include \"$inc\": $from may not include $to"
			bad=1
			;;
		esac
	done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done < <(find lib symbolize proto user -name '*.[ch]' | sort)

exit $bad
