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
. "$(dirname "$0")/lib.sh"
bench_traps
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
# Each round's three runs are minutes apart at most, the rounds much more:
# the slowdown is the median of the rounds' own ratios (as paired timings
# are taken), and the rounds' spread is printed beside it. A gap between
# the two tools smaller than that spread is not a difference this run can
# tell.
paste "$T/base.times" "$T/bp.times" "$T/perf.times" > "$T/rounds"
ratio() { awk -v c="$1" '{ printf "%.6f\n", ($c / $1 - 1) * 100 }' "$T/rounds"; }
sx=$(ratio 2 | median)
sp=$(ratio 3 | median)
need_num "the slowdown under boundprof" "$sx"
need_num "the slowdown under perf" "$sp"
awk -v sx="$sx" -v sp="$sp" -v bx="$(ratio 2 | sort -g | sed -n '1p;$p' | tr '\n' ' ')" \
	-v bpf="$(ratio 3 | sort -g | sed -n '1p;$p' | tr '\n' ' ')" \
	-v base="$(median < "$T/base.times")" 'BEGIN {
	split(bx, x, " "); split(bpf, p, " ")
	printf "  median job time alone: %.3f s\n", base
	printf "  slowdown (median of the rounds'"'"' own ratios): boundprof %+.2f%% (rounds %+.2f..%+.2f%%), perf %+.2f%% (rounds %+.2f..%+.2f%%)\n", sx, x[1], x[2], sp, p[1], p[2]
	printf "  aim: boundprof < 1%% and below perf; boundprof - perf = %+.2f points", sx - sp
	if (sx - sp < (x[2] - x[1]) / 2 && sp - sx < (p[2] - p[1]) / 2)
		printf ", inside half the rounds'"'"' spread: no difference this run can tell"
	printf "\n"
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

# Steady-state cost, from one run under load: the recorder's CPU (schedstat
# of all its threads) and bp_oncpu's run time (bpf_stats) read 3 s and 13 s
# into it; what is left of its whole CPU is the once-only part (load,
# symbols, output). Two runs of different lengths differenced, as before,
# printed a negative figure whenever the machine drifted between them.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'; }
oncpu_stats() { # prints "run_time_ns run_cnt" of bp_oncpu
	bpftool -j prog show 2>/dev/null | tr '{' '\n' | grep '"name":"bp_oncpu"' | tail -1 |
		sed -n 's/.*"run_time_ns":\([0-9]*\).*"run_cnt":\([0-9]*\).*/\1 \2/p'
}
echo 1 > /proc/sys/kernel/bpf_stats_enabled
$OUT/bench/cpujob $((ITERS_M * 5)) > /dev/null &
job=$!
sleep 0.5
"$RUNSTAT" "$T/steady.stat" "$BP" record -a -F 99 -d 16 -o "$T/steady.folded" > /dev/null 2>&1 &
BG=$!
sleep 3
rec=$(pgrep -P "$BG" -x boundprof | head -1)
need_pos "the recorder's pid" "$rec"
c0=$(cpu_ns "$rec"); o0=$(oncpu_stats)
sleep 10
c1=$(cpu_ns "$rec"); o1=$(oncpu_stats)
wait "$BG" || die "boundprof record -d 16 failed"
BG=
kill "$job" 2>/dev/null
wait "$job" 2>/dev/null
echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled
need_pos "the recorder's CPU 3 s in (schedstat)" "$c0"
need_pos "the recorder's CPU over 10 s (schedstat)" "$((c1 - c0))"
need_pos "bp_oncpu's runs over 10 s (bpf_stats: '$o0' then '$o1')" "$(( ${o1#* } - ${o0#* } ))"
awk -v s="$(cat "$T/steady.stat")" -v c0="$c0" -v c1="$c1" -v o0="$o0" -v o1="$o1" 'BEGIN {
	split(s, a, " "); split(o0, x, " "); split(o1, y, " ")
	per = (c1 - c0) / 1e9 / 10; whole = a[2] + a[3]
	printf "  boundprof userspace CPU: %.3f%% of one CPU while recording (schedstat, 10 s), %.0f ms once (load, symbols, output: the rest of its %.0f ms over 16 s)\n", per * 100, (whole - per * 16) * 1000, whole * 1000
	rt = y[1] - x[1]; rc = y[2] - x[2]
	printf "  BPF bp_oncpu: %d runs in 10 s, %.1f us per sample, %.3f%% of one CPU\n", rc, rt / rc / 1000, rt / 1e9 / 10 * 100
}'

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

