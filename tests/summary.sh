#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The one summary `make test` ends with (tests/tests.mk):
#
#   tests/summary.sh RESULTS STAGES SECONDS "FAILED-STAGES"
#
# RESULTS: a row per case, "binary case status seconds" (tests/filter.c);
# STAGES: a row per stage, "stage seconds". Prints the stages' times, every
# failed case, the five slowest cases and the counts, and exits non-zero
# when a stage failed (a crashed binary fails its stage with no failed case
# row: the stage is named all the same).
set -eu

results=$1
stages=$2
total=$3
failed=$4

echo
echo "==================== make test: summary ===================="
printf '  %-18s %6s\n' stage seconds
awk -F '\t' '{ printf "  %-18s %6d\n", $1, $2 }' "$stages"
printf '  %-18s %6d\n' total "$total"

if [ -s "$results" ]; then
	echo "  slowest cases:"
	sort -t "$(printf '\t')" -k4,4 -g -r "$results" | head -5 |
		awk -F '\t' '{ printf "    %7.1f s  %s %s\n", $4, $1, $2 }'
	fails=$(awk -F '\t' '$3 == "FAILED"' "$results")
	if [ -n "$fails" ]; then
		echo "  failed cases:"
		echo "$fails" | awk -F '\t' '{ printf "    %s %s (%.1f s)\n", $1, $2, $4 }'
	fi
fi
[ -z "$failed" ] || echo "  failed stages:$failed"

ok=$(awk -F '\t' '$3 == "ok"' "$results" | wc -l)
bad=$(awk -F '\t' '$3 == "FAILED"' "$results" | wc -l)
skipped=$(awk -F '\t' '$3 == "skipped"' "$results" | wc -l)
# a stage that failed without a failed case (a crash, a build, the kernels) counts once
for s in $failed; do
	case $s in test-unit | test-integration) [ "$bad" -gt 0 ] || bad=$((bad + 1)) ;;
	*) bad=$((bad + 1)) ;;
	esac
done
echo "============================================================"
echo "$ok passed, $bad failed, $skipped skipped"
[ -z "$failed" ]
