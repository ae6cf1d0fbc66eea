#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Embed the flame graph renderer in the C build: flame.js and flame.css (next
# to this script) become C string literals in OUT.c, which the build writes
# into its output folder and compiles with the rest of the library.
#
#   gen_flame_assets.sh OUT.c
set -eu

dir=$(cd "$(dirname "$0")" && pwd)
export LC_ALL=C

die() {
	echo "gen_flame_assets: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: gen_flame_assets.sh OUT.c"
out=$1

for f in flame.js flame.css; do
	src="$dir/$f"
	[ -f "$src" ] || die "missing $src"
	# one byte per character keeps the literals simple and the escaping exact
	if grep -n "$(printf '[^\t -~]')" "$src" >/dev/null; then
		die "$f: only printable ASCII and tabs (write other characters as \\uXXXX): $(grep -n "$(printf '[^\t -~]')" "$src" | head -1 | cut -c1-60)"
	fi
	[ -z "$(tail -c1 "$src")" ] || die "$f: must end with a newline"
	# either would end the embedding <script>/<style> (HTML) or CDATA section (SVG)
	if grep -n -i -e '</script' -e '</style' -e ']]>' "$src" >/dev/null; then
		die "$f: contains </script, </style or ]]>"
	fi
done

# NAME FILE: a C array initialized by one literal per line
literal() {
	printf 'const char %s[] =\n' "$1"
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/??/?\\?/g' -e 's/^/\t"/' -e 's/$/\\n"/' "$2"
	printf '\t"";\n'
}

gen_c() {
	cat <<'HDR'
// SPDX-License-Identifier: GPL-2.0
/* Generated at build time by agent/export/gen_flame_assets.sh from flame.js and flame.css. */
#include "export/flame_assets.h"

HDR
	literal bp_flame_js "$dir/flame.js"
	echo
	literal bp_flame_css "$dir/flame.css"
}

gen_c >"$out.tmp"
mv "$out.tmp" "$out"
