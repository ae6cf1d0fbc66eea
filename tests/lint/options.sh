#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Every command's options, four ways: what its code accepts (the getopt
# tables in cli/CMD.c), what `boundprof CMD --help` lists, what the man page
# (docs/boundprof.1, the command's section) describes and what the bash
# completion (docs/boundprof.bash-completion) offers. They must be the same
# set. -h/--help, which every command takes, is left out of the comparison.
# On a difference this names the command, the source and the option.
#
#   tests/lint/options.sh [BOUNDPROF] [SRCDIR]
set -eu
bin=${1:-./boundprof}
cd "${2:-$(dirname "$0")/../..}"
man=docs/boundprof.1
comp=docs/boundprof.bash-completion
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# one option per line, sorted, without -h/--help
norm() {
	grep -E '^--?[A-Za-z][A-Za-z0-9-]*$' | grep -vxE -- '-h|--help' | sort -u
}

# the code: the long options and the short option letters given to getopt_long
from_code() {
	f=cli/$1.c
	sed -n '/longopts\[\] = {/,/};/p' "$f" | sed -n 's/.*{ "\([a-z-]*\)",.*/--\1/p'
	sed -n 's/.*getopt_long(argc, argv, "\([^"]*\)".*/\1/p' "$f" | tr -d '+:' | fold -w1 |
		sed 's/^/-/'
}

# --help: the option column (the first words of lines that start with an option)
from_help() {
	"$bin" "$1" --help | awk '/^ +-/ { for (i = 1; i <= 3 && i <= NF; i++) print $i }' |
		sed 's/,$//'
}

# the man page: the tags (the line after each .TP) of the command's section
from_man() {
	awk -v cmd="$1" '
		/^\.S[SH] / { in_cmd = ($1 == ".SS" && $2 == cmd); next }
		in_cmd && /^\.TP/ { tag = 1; next }
		in_cmd && tag { print; tag = 0 }' "$man" |
		sed 's/\\-/-/g; s/\\f[A-Z]//g; s/"//g' | tr ' ,' '\n\n'
}

# the completion: the words offered under the command's case
from_comp() {
	awk -v cmd="$1" '
		$0 ~ "^\t" cmd "\\)" { in_cmd = 1; next }
		in_cmd && /^\t[a-z]+\)/ { in_cmd = 0 }
		in_cmd && /compgen -W "-/ { print }' "$comp" |
		sed 's/.*compgen -W "\([^"]*\)".*/\1/' | tr ' ' '\n'
}

bad=0
for cmd in record report diff scale top agent dump; do
	from_code "$cmd" | norm >"$tmp/code"
	if [ ! -s "$tmp/code" ]; then
		echo "options: no getopt table found in cli/$cmd.c" >&2
		bad=1
		continue
	fi
	for src in help man comp; do
		"from_$src" "$cmd" | norm >"$tmp/$src"
		case $src in
		help) where="boundprof $cmd --help" ;;
		man) where="$man (.SS $cmd)" ;;
		comp) where=$comp ;;
		esac
		for o in $(comm -23 "$tmp/code" "$tmp/$src"); do
			echo "options: $cmd accepts $o, but $where does not list it" >&2
			bad=1
		done
		for o in $(comm -13 "$tmp/code" "$tmp/$src"); do
			echo "options: $where lists $o, which $cmd does not accept" >&2
			bad=1
		done
	done
done
[ $bad -eq 0 ] && echo "  OPTIONS  --help, man page and completion agree with the code"
exit $bad
