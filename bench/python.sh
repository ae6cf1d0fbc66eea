#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What walking Python frames costs, on each CPython given (default: every
# one installed, Debian's and pyenv's):
#  - the BPF program's run time per sample (bpf_stats, as record -v reports it), with the Python walk
#    and with the native walk alone (--no-python), on one job DEPTH frames
#    deep sampled at 999 Hz, and from the two the extra time per sample of
#    the Python process;
#  - the job's own slowdown (its wall time for a fixed amount of work, as it
#    measures it) under boundprof at 99 Hz and at 999 Hz, against no
#    profiler, in rotating order, medians of ROUNDS rounds.
#
# usage: bench/python.sh [PYTHON...]      (as root)
# env:   ROUNDS (default 5), DEPTH (default 20), WORK (million iterations, default 20)
set -u

BP=${BP:-./boundprof}
ROUNDS=${ROUNDS:-5}
DEPTH=${DEPTH:-20}
WORK=${WORK:-20}
HERE=$(cd "$(dirname "$0")" && pwd)
JOB=$HERE/pywork.py
T=$(mktemp -d /tmp/bp-pybench.XXXXXX)
PIDS=

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
. "$(dirname "$0")/lib.sh"
bench_traps
[ "$(id -u)" = 0 ] || die "needs root (BPF)"

if [ $# -eq 0 ]; then
	[ -x /usr/bin/python3.11 ] && set -- /usr/bin/python3.11
	for d in "${PYENV_ROOT:-/root/.pyenv}"/versions/3.*; do
		v=${d##*/}
		py=$d/bin/python${v%.*}
		[ -x "$py" ] && set -- "$@" "$py"
	done
fi
[ $# -gt 0 ] || die "no CPython 3 found"

# bp_oncpu's run time and runs (record -v says them) while boundprof records
# pid for 3 s at 999 Hz, and how many of the samples were the job's
oncpu_cost() { # python extra-flag
	local py=$1 flag=$2 pid line samples
	coproc "$py" "$JOB" 1000 "$DEPTH" --wait 2> /dev/null
	pid=$COPROC_PID
	PIDS="$PIDS $pid"
	read -r _ <&"${COPROC[0]}"
	echo >&"${COPROC[1]}"
	line=$("$BP" record -v -F 999 -p "$pid" -d 3 $flag -o "$T/cost.json" 2>&1 >/dev/null |
	       grep 'BPF bp_oncpu:')
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	samples=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(p["samples"] for p in d["processes"] if p["pid"] == int(sys.argv[2])))' "$T/cost.json" "$pid")
	# "boundprof: BPF bp_oncpu: RUNS samples, US us each"
	echo "$line" | awk -v n="$samples" '{ print $4 * $6 * 1000, $4, n }'
}

echo "Python walk: a job $DEPTH frames deep; $ROUNDS rounds of $WORK M iterations for the slowdown"
for py in "$@"; do
	ver=$("$py" -c 'import platform; print(platform.python_version())')
	read -r rt1 rc1 n1 <<< "$(oncpu_cost "$py" "")"
	read -r rt0 rc0 n0 <<< "$(oncpu_cost "$py" --no-python)"
	[ -n "${BENCH_DEBUG:-}" ] && echo "  with: $rt1 ns $rc1 runs $n1 samples; without: $rt0 ns $rc0 runs $n0 samples"
	rm -f "$T"/*.times
	for r in $(seq 1 "$ROUNDS"); do
		order=(base 99 999)
		for i in $(seq 1 $((r % 3))); do order=("${order[@]:1}" "${order[0]}"); done
		for what in "${order[@]}"; do
			if [ "$what" = base ]; then
				"$py" "$JOB" "$WORK" "$DEPTH" >> "$T/base.times"
			else
				"$BP" record -F "$what" -o "$T/s.folded" -- "$py" "$JOB" "$WORK" "$DEPTH" \
					2> /dev/null | grep -E '^[0-9.]+$' >> "$T/$what.times"
			fi
		done
	done
	awk -v ver="$ver" -v rt1="$rt1" -v rc1="$rc1" -v n1="$n1" -v rt0="$rt0" -v rc0="$rc0" \
	    -v n0="$n0" -v b="$(median < "$T/base.times")" -v s99="$(median < "$T/99.times")" \
	    -v s999="$(median < "$T/999.times")" 'BEGIN {
		if (rc1 > 0 && rc0 > 0 && n1 > 0) {
			p = rt1 / rc1 / 1000; q = rt0 / rc0 / 1000
			extra = (rt1 - rt0 * rc1 / rc0) / n1 / 1000
			printf "  %-8s per sample %.1f us with Python frames, %.1f us native only: " \
			       "+%.1f us per sample of the Python process\n", ver, p, q, extra
		} else {
			printf "  %-8s BPF run time not available\n", ver
		}
		printf "  %-8s job %.3f s alone, %+.1f%% at 99 Hz, %+.1f%% at 999 Hz\n", ver, b,
		       (s99 / b - 1) * 100, (s999 / b - 1) * 100
	}'
done
