#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# On-CPU sampling overhead of `boundprof record -a -F 99` against
# `perf record -F 99 -a -g`, measured in the same run: a fixed CPU-bound job
# (one thread per CPU) runs alone, under boundprof and under perf, in rotating
# order for ROUNDS rounds; the medians give the slowdowns. Also: boundprof's
# peak RSS and CPU time, the BPF program's run time per sample, and the time
# from start until sampling is live, for both tools.
#
# Also `record -- /bin/true` from start to exit, beside `perf record -g --
# /bin/true`. Any figure it cannot measure makes it fail, naming the figure.
#
# usage: bench/oncpu.sh BUILD_DIR     (run by `make bench`, as root)
# env:   ROUNDS (default 9), ITERS_M (job size, default 3000)
set -u

OUT=${1:-.output}
BP=${BP:-./boundprof}
ROUNDS=${ROUNDS:-9}
ITERS_M=${ITERS_M:-3000}
JOB="$OUT/bench/cpujob $ITERS_M"
RUNSTAT=$OUT/bench/runstat
T=$(mktemp -d /tmp/bp-bench.XXXXXX)
STATS_OLD=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
BG=

cleanup() {
	[ -n "$BG" ] && kill -INT "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT INT TERM

. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || die "needs root (BPF and system-wide perf)"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
need_exec "$OUT/bench/cpujob"
need_exec "$RUNSTAT"
need_exec "$BP"

# start a profiler under runstat, let it get going, run the job, stop it
profiled() { # name cmd...
	local name=$1; shift
	"$RUNSTAT" "$T/$name.stat" "$@" > /dev/null 2> "$T/$name.err" &
	BG=$!
	sleep 1.5
	$JOB >> "$T/$name.times"
	kill -INT "$BG"
	wait "$BG" || die "$name failed: $(tail -c 300 "$T/$name.err")"
	BG=
	cat "$T/$name.stat" >> "$T/$name.stats"
}

echo "on-CPU overhead: cpujob ($ITERS_M M iterations on each of $(nproc) threads), $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
	order=("base" "bp" "perf")
	# rotate so that no tool always runs first (the machine drifts)
	for i in $(seq 1 $((r % 3))); do order=("${order[@]:1}" "${order[0]}"); done
	for what in "${order[@]}"; do
		case $what in
		base) $JOB >> "$T/base.times" ;;
		bp) profiled bp "$BP" record -a -F 99 -o "$T/bp.folded" -o "$T/bp-$r.json" ;;
		perf) profiled perf perf record -F 99 -a -g -o "$T/perf.data" ;;
		esac
	done
	printf '  round %d: base %s  boundprof %s  perf %s\n' "$r" \
		"$(tail -1 "$T/base.times")" "$(tail -1 "$T/bp.times")" "$(tail -1 "$T/perf.times")"
done

for what in base bp perf; do
	need_lines "$T/$what.times" "$ROUNDS" "cpujob times ($what)" "$T/$what.err"
done
base=$(median < "$T/base.times")
bpt=$(median < "$T/bp.times")
perft=$(median < "$T/perf.times")
need_pos "the baseline job time" "$base"
need_pos "the job time under boundprof" "$bpt"
need_pos "the job time under perf" "$perft"
awk -v b="$base" -v x="$bpt" -v p="$perft" 'BEGIN {
	sx = (x / b - 1) * 100; sp = (p / b - 1) * 100
	printf "  median job time: baseline %.3f s, boundprof %.3f s, perf %.3f s\n", b, x, p
	printf "  slowdown: boundprof %+.2f%%, perf %+.2f%% (aim: boundprof < 1%% and below perf)\n", sx, sp
	if (sp > 0.05) printf "  boundprof slowdown / perf slowdown = %.2f\n", sx / sp
}'
rss=$(awk '{print $1}' "$T/bp.stats" | median)
prss=$(awk '{print $1}' "$T/perf.stats" | median)
cpu=$(awk '{print ($2 + $3) * 1000}' "$T/bp.stats" | median)
pcpu=$(awk '{print ($2 + $3) * 1000}' "$T/perf.stats" | median)
need_pos "boundprof's peak RSS" "$rss"
need_pos "perf's peak RSS" "$prss"
need_pos "boundprof's CPU per round" "$cpu"
need_pos "perf's CPU per round" "$pcpu"
awk -v r="$rss" -v pr="$prss" -v c="$cpu" -v pc="$pcpu" 'BEGIN {
	printf "  peak RSS: boundprof %.1f MiB, perf %.1f MiB (%.2fx)\n", r / 1024, pr / 1024, r / pr
	printf "  profiler process CPU per round (start, ~4 s of sampling, output): boundprof %.0f ms, perf %.0f ms (%.2fx)\n", c, pc, c / pc
}'

# Steady-state cost: boundprof for 2 s and for 12 s under load; the
# difference is what 10 s of profiling costs, without start-up and output.
# The BPF program's own run time comes from the kernel (bpf_stats).
loaded_run() { # seconds statfile
	$OUT/bench/cpujob $((ITERS_M * ($1 + 3) / 2)) > /dev/null &
	local job=$!
	sleep 0.5
	"$RUNSTAT" "$2" "$BP" record -a -F 99 -d "$1" -o "$T/steady.folded" > /dev/null 2>&1 &
	BG=$!
	sleep $(($1 - 1))
	prog=$(bpftool -j prog show 2>/dev/null | tr '{' '\n' | grep '"name":"bp_oncpu"' | tail -1)
	wait "$BG" || die "boundprof record -d $1 failed"
	BG=
	wait "$job"
	need_pos "boundprof's CPU over $1 s" "$(awk '{print $2 + $3}' "$2")"
}
echo 1 > /proc/sys/kernel/bpf_stats_enabled
loaded_run 2 "$T/short.stat"
loaded_run 12 "$T/long.stat"
echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled
awk -v s="$(cat "$T/short.stat")" -v l="$(cat "$T/long.stat")" 'BEGIN {
	split(s, a, " "); split(l, b, " ")
	once = a[2] + a[3]; per = (b[2] + b[3] - once) / (b[4] - a[4])
	printf "  boundprof userspace CPU: %.0f ms once (load, symbols, output), then %.3f%% of one CPU while recording\n", once * 1000, per * 100
}'
rt=$(echo "$prog" | sed -n 's/.*"run_time_ns":\([0-9]*\).*/\1/p')
rc=$(echo "$prog" | sed -n 's/.*"run_cnt":\([0-9]*\).*/\1/p')
if [ -n "$rt" ] && [ -n "$rc" ] && [ "$rc" -gt 0 ]; then
	awk -v rt="$rt" -v rc="$rc" -v w=11 'BEGIN {
		printf "  BPF bp_oncpu: %d runs, %.1f us per sample, %.3f%% of one CPU\n", rc, rt / rc / 1000, rt / 1e9 / w * 100
	}'
else
	die "could not measure bp_oncpu's run time (bpf_stats: '$prog')"
fi

# start until sampling is live: the command starts only once sampling runs;
# and a whole `record -- /bin/true`, start to exit
now_us() { echo $(( $(date +%s%N) / 1000 )); }
for i in $(seq 1 5); do
	t0=$(date +%s%N)
	"$BP" record -o "$T/s.folded" -- sh -c "date +%s%N > $T/bp.t1" > /dev/null 2>&1 ||
		die "boundprof record -- sh failed"
	echo $(( ($(cat "$T/bp.t1") - t0) / 1000 )) >> "$T/bp.start"
	t0=$(date +%s%N)
	perf record -F 99 -g -o "$T/s.data" -- sh -c "date +%s%N > $T/perf.t1" > /dev/null 2>&1 ||
		die "perf record -- sh failed"
	echo $(( ($(cat "$T/perf.t1") - t0) / 1000 )) >> "$T/perf.start"
	t0=$(now_us)
	"$BP" record -- /bin/true > /dev/null 2>&1 || die "boundprof record -- /bin/true failed"
	echo $(( $(now_us) - t0 )) >> "$T/bp.true"
	t0=$(now_us)
	perf record -F 99 -g -o "$T/t.data" -- /bin/true > /dev/null 2>&1 ||
		die "perf record -- /bin/true failed"
	echo $(( $(now_us) - t0 )) >> "$T/perf.true"
done
for f in bp.start perf.start bp.true perf.true; do
	need_lines "$T/$f" 5 "$f"
done
awk -v b="$(median < "$T/bp.start")" -v p="$(median < "$T/perf.start")" \
	-v bt="$(median < "$T/bp.true")" -v pt="$(median < "$T/perf.true")" 'BEGIN {
	printf "  start until the command runs under sampling (median of 5): boundprof %.0f ms (aim <= 300 ms), perf %.0f ms (%.2fx)\n", b / 1000, p / 1000, b / p
	printf "  record -- /bin/true, start to exit (median of 5): boundprof %.0f ms (aim <= 500 ms), perf %.0f ms (%.2fx)\n", bt / 1000, pt / 1000, bt / pt
}'
# what verification costs at every start (the kernel's own count)
ver=$("$BP" record -vv -- /bin/true 2>&1 >/dev/null |
	sed -n 's/.*BPF programs loaded in \([0-9]*\) ms, \([0-9]*\) instructions verified.*/\1 \2/p')
need_pos "the BPF load time (record -vv)" "${ver%% *}"
echo "  BPF load: ${ver%% *} ms, ${ver##* } instructions verified (the kernel's count)"
cat "$T"/bp-*.json | awk -F'[:,]' '
	/"(samples_map_full|kernel_stack_errors|user_stack_errors|stack_map_full|events_lost)"/ { lost += $2 }
	END { printf "  boundprof losses over all rounds (samples, stacks, events): %d\n", lost }'

