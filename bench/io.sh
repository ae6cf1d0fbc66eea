#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Block IO tracing overhead: random 4 KiB O_DIRECT reads (tests/fixtures/odirect,
# one request at a time, so every request pays the programs' cost in its
# latency) run alone, under `boundprof record -a`, and under
# `boundprof record -a --no-offcpu`, in rotating order for ROUNDS rounds; the
# medians give the throughput loss. Then the block programs' run time per
# event from the kernel (bpf_stats), and the IO losses boundprof reported.
#
# usage: bench/io.sh BUILD_DIR     (run by `make bench`, as root)
# env:   ROUNDS (default 7), READS (per run, default 20000)
set -u

OUT=${1:-.output}
BP=${BP:-./boundprof}
ROUNDS=${ROUNDS:-7}
READS=${READS:-20000}
FIX=$OUT/tests/fixtures/odirect
STATS_OLD=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
# the data must be on a real disk: under /tmp, on the root filesystem here
T=$(mktemp -d /tmp/bp-bench-io.XXXXXX)
BG=

cleanup() {
	[ -n "$BG" ] && kill -INT "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	rm -rf "$T"
}
. "$(dirname "$0")/lib.sh"
bench_traps
[ "$(id -u)" = 0 ] || die "needs root (BPF)"
[ -x "$FIX" ] || die "$FIX missing (make $FIX)"

now_ns() { date +%s%N; }

# reads per second of one fixture run
job() {
	local t0 t1
	t0=$(now_ns)
	"$FIX" "$T/data" "$READS" > /dev/null || die "odirect failed"
	t1=$(now_ns)
	awk -v n="$READS" -v d=$((t1 - t0)) 'BEGIN { printf "%.1f\n", n / (d / 1e9) }'
}

# the job under a system-wide recording that started 1.5 s before it
profiled() { # name boundprof-options...
	local name=$1; shift
	"$BP" record -a "$@" -o "$T/$name.json" > /dev/null 2> "$T/$name.err" &
	BG=$!
	sleep 1.5
	job >> "$T/$name.rate"
	kill -INT "$BG"
	wait "$BG" || die "boundprof record $* failed: $(tail -c 300 "$T/$name.err")"
	BG=
}

dd if=/dev/urandom of="$T/data" bs=1M count=64 status=none conv=fsync || die "cannot write $T/data"
dev=$(stat -c '%Hd:%Ld' "$T/data" 2>/dev/null)
name=$(basename "$(readlink -f "/sys/dev/block/$dev" 2>/dev/null)" 2>/dev/null)
echo "block IO overhead: $READS random 4 KiB O_DIRECT reads of a 64 MiB file on ${name:-?} ($dev), $ROUNDS rounds"
job > /dev/null	# warm up: extent tree in memory

for r in $(seq 1 "$ROUNDS"); do
	order=("base" "bp" "bponly")
	for i in $(seq 1 $((r % 3))); do order=("${order[@]:1}" "${order[0]}"); done
	for what in "${order[@]}"; do
		case $what in
		base) job >> "$T/base.rate" ;;
		bp) profiled bp ;;
		bponly) profiled bponly --no-offcpu ;;
		esac
	done
	printf '  round %d: alone %s reads/s, boundprof %s, boundprof --no-offcpu %s\n' "$r" \
		"$(tail -1 "$T/base.rate")" "$(tail -1 "$T/bp.rate")" "$(tail -1 "$T/bponly.rate")"
done

base=$(median < "$T/base.rate")
bp=$(median < "$T/bp.rate")
bponly=$(median < "$T/bponly.rate")
# the machine drifts between rounds: compare within each round, then take the median
need_pos "reads/s alone" "$base"
need_pos "reads/s under boundprof" "$bp"
need_pos "reads/s under boundprof --no-offcpu" "$bponly"
lossbp=$(paste "$T/base.rate" "$T/bp.rate" | awk '{ print ($2 / $1 - 1) * 100 }' | median)
lossonly=$(paste "$T/base.rate" "$T/bponly.rate" | awk '{ print ($2 / $1 - 1) * 100 }' | median)
awk -v b="$base" -v x="$bp" -v y="$bponly" -v lx="$lossbp" -v ly="$lossonly" 'BEGIN {
	printf "  median reads/s: alone %.0f, boundprof %.0f, boundprof --no-offcpu %.0f\n", b, x, y
	printf "  throughput change (median of per-round ratios): boundprof %+.1f%%, --no-offcpu %+.1f%%\n", lx, ly
}'

# per-event run time of the block programs, from the kernel's own counters
prog_ids() {
	bpftool -j prog show 2>/dev/null | tr '{' '\n' | sed -n 's/^"id":\([0-9]*\),.*"name":"\(bp_io_[a-z]*\)".*/\1 \2/p'
}
cost() { # label boundprof-options...
	local label=$1; shift
	local before
	before=$(prog_ids | awk '{print $1}' | sort -n | tail -1)
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	"$BP" record -a "$@" -o "$T/cost.json" > /dev/null 2>&1 &
	BG=$!
	sleep 1.5
	job > /dev/null
	bpftool -j prog show 2>/dev/null | tr '{' '\n' |
		sed -n 's/^"id":\([0-9]*\),.*"name":"\(bp_io_[a-z]*\)".*"run_time_ns":\([0-9]*\),"run_cnt":\([0-9]*\).*/\1 \2 \3 \4/p' |
		awk -v after="${before:-0}" -v label="$label" '$1 > after && $4 > 0 {
			printf "%s %s %.2f us x %d", (n++ ? "," : "  BPF run time per event (" label "):"), $2, $3 / $4 / 1000, $4
		} END { if (n) printf "\n"; else { print "bench: could not measure the run time of the block programs (" label ")" > "/dev/stderr"; exit 1 } }' || die "bpf_stats gave no block IO figures"
	kill -INT "$BG"
	wait "$BG"
	BG=
	echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled
}
cost "with off-CPU"
cost "--no-offcpu" --no-offcpu

cat "$T"/bp.json "$T"/bponly.json | awk -F'[:,]' '
	/"io_(requests_untracked|map_full|completions_unmatched)"/ { lost += $2 }
	END { printf "  block IO losses over all profiled rounds (untracked, map full, unmatched): %d\n", lost }'
