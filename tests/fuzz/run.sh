#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Run one libFuzzer harness for a while, from the committed seeds and the
# corpus it grew before, with everything it writes under WORK (the build
# folder). Fails, printing the log's end, on a crash, a leak, an input slower
# than the timeout, or memory past the limits; otherwise prints one line of
# statistics and appends it to SUMMARY.
#
#   tests/fuzz/run.sh BIN SECONDS SEEDS WORK SUMMARY [libFuzzer options...]
set -u
bin=$1 secs=$2 seeds=$3 work=$4 summary=$5
shift 5
name=$(basename "$bin")
name=${name#fuzz_}
log=$work/run.log

mkdir -p "$work/corpus" "$work/crashes" || exit 1
cd "$work" || exit 1
# what an earlier run found is kept aside, so that this run starts clean
if [ -n "$(ls crashes)" ]; then
	mkdir -p crashes-earlier && mv crashes/* crashes-earlier/
fi
# a scratch directory the harness did not get to remove (killed run)
rm -rf scratch-*
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:symbolize=1:quarantine_size_mb=64 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	"$bin" -max_total_time="$secs" -rss_limit_mb=512 -malloc_limit_mb=256 -timeout=10 \
	-print_final_stats=1 -artifact_prefix="$work/crashes/" "$@" \
	corpus "$seeds" >"$log" 2>&1
rc=$?
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
last=$(grep -E '^#[0-9]+' "$log" | tail -1)
cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
found=$(ls crashes | wc -l)
if [ $rc -ne 0 ] || [ "$found" -ne 0 ]; then
	echo "  FUZZ     $name: FAILED (exit $rc, $found input(s) in $work/crashes)" >&2
	tail -40 "$log" >&2
	exit 1
fi
line=$(printf '%-9s %10s runs in %3ss  cov %5s  ft %6s  corpus %5s' \
	"$name" "${runs:-?}" "$secs" "${cov:-?}" "${ft:-?}" "${corp:-?}")
echo "  FUZZ     $line"
echo "$line" >>"$summary"
