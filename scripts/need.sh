#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install, from Debian, only the packages whose commands or files are missing.
#
#   scripts/need.sh [-l LOGFILE] WHAT=PACKAGE...
#
# WHAT is a command name (found with command -v), an absolute path (must
# exist) or a header in angle brackets (<gelf.h>: must preprocess with
# $NEED_CPP, default "cc -E", so that CPPFLAGS and pkg-config's flags count);
# several alternatives are separated by '|' and any one of them is enough.
# PACKAGE is the Debian package that provides it. Example:
#
#   scripts/need.sh -l .output/apt.log go=golang-go 'bpftool|/usr/sbin/bpftool=bpftool' \
#           '<gelf.h>=libelf-dev'
#
# Why one package per item, and only the missing ones: on the machines we
# run on, Node.js and npm come from outside Debian, and apt-get then refuses
# "install nodejs npm" with held broken packages, taking down every other
# package named in the same command. A tool that is there, from wherever, is
# never asked for.
#
# As root, the missing packages are installed with apt-get (an apt-get update
# and one retry when the first try fails, since a fresh image has no package
# lists), and every item is checked again afterwards. Otherwise the command
# to run is printed. Exit status 0 when everything is there at the end.
set -u

log=/dev/null
if [ "${1:-}" = "-l" ]; then
	log=$2
	shift 2
fi

have() {
	old_ifs=$IFS
	IFS='|'
	# split the alternatives, then run the checks with the usual IFS
	# shellcheck disable=SC2086
	set -- $1
	IFS=$old_ifs
	for alt in "$@"; do
		case $alt in
		/*) [ -e "$alt" ] && return 0 ;;
		\<*\>)
			# cmocka.h wants these before it
			printf '#include <stddef.h>\n#include <stdarg.h>\n#include <setjmp.h>\n#include %s\n' \
				"$alt" | ${NEED_CPP:-cc -E} -x c - >/dev/null 2>&1 && return 0 ;;
		*) command -v "$alt" >/dev/null 2>&1 && return 0 ;;
		esac
	done
	return 1
}

# items still missing -> "what (package)" list and the package list, no duplicates
scan() {
	missing=
	pkgs=
	for item in "$@"; do
		what=${item%=*}
		pkg=${item##*=}
		if [ "$what" = "$item" ] || [ -z "$pkg" ]; then
			echo "need.sh: bad item '$item' (want WHAT=PACKAGE)" >&2
			exit 2
		fi
		have "$what" && continue
		missing="$missing ${what%%|*} ($pkg)"
		case " $pkgs " in
		*" $pkg "*) ;;
		*) pkgs="$pkgs $pkg" ;;
		esac
	done
	pkgs=${pkgs# }
}

scan "$@"
[ -z "$pkgs" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "missing:$missing; run: sudo apt-get install -y $pkgs" >&2
	exit 1
fi

echo "  DEPS     apt-get install $pkgs"
mkdir -p "$(dirname "$log")" 2>/dev/null
export DEBIAN_FRONTEND=noninteractive
# a parallel build can ask twice at once: the second waits for dpkg's lock
lock=-oDPkg::Lock::Timeout=600
# $pkgs is a list of package names: split on purpose
# shellcheck disable=SC2086
if ! apt-get install $lock -y -q $pkgs >"$log" 2>&1; then
	apt-get update $lock -q >>"$log" 2>&1
	# shellcheck disable=SC2086
	if ! apt-get install $lock -y -q $pkgs >>"$log" 2>&1; then
		tail -20 "$log" >&2
		echo "need.sh: apt-get install $pkgs failed (log: $log)" >&2
		exit 1
	fi
fi

scan "$@"
if [ -n "$pkgs" ]; then
	echo "need.sh: still missing after apt-get install:$missing (log: $log)" >&2
	exit 1
fi
exit 0
