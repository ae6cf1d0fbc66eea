#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The library's data flows one way (docs/architecture.md): a stage includes
# only headers of its own folder and of stages below it. This fails, naming
# the file and the include, on any arrow back up or sideways.
#
#   tests/lint/layers.sh [SRCDIR]
set -eu
cd "${1:-$(dirname "$0")/../..}"

# rank of each stage; a file may include a stage of lower rank, or its own
rank() {
	case $1 in
	util) echo 0 ;;
	model | proc) echo 1 ;;
	symbolize) echo 2 ;;
	collect | analyze) echo 3 ;;
	export) echo 4 ;;
	serve) echo 5 ;;
	*) echo "" ;;
	esac
}

bad=0
for f in agent/*/*.c agent/*/*.h; do
	stage=${f#agent/}
	stage=${stage%%/*}
	r=$(rank "$stage")
	if [ -z "$r" ]; then
		echo "layers: $f: folder '$stage' has no rank in tests/lint/layers.sh" >&2
		bad=1
		continue
	fi
	for inc in $(sed -n 's/^#include "\([a-z_]*\)\/[^"]*"$/\1/p' "$f" | sort -u); do
		[ "$inc" = "$stage" ] && continue
		ri=$(rank "$inc")
		if [ -z "$ri" ] || [ "$ri" -ge "$r" ]; then
			echo "layers: $f ($stage) includes $inc/: against the flow" >&2
			bad=1
		fi
	done
	# a library file never includes the command line's headers
	if grep -n '^#include "\(cli\|output\|render\)\.h"' "$f" >/dev/null; then
		echo "layers: $f includes a cli/ header" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] && echo "  LAYERS   agent/: every include follows the flow"
exit $bad
