#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Context-switch cost: `perf bench sched pipe` alone, under
# `boundprof record -a` (off-CPU tracing on, the default) and under a
# bpftrace off-CPU script that takes kernel and user stacks at every switch
# (what most off-CPU tools do), in rotating order for ROUNDS rounds; medians.
# Also the BPF programs' own cost per event from the kernel's bpf_stats, with
# libbpf-tools' offcputime attached in the same run, on the same benchmark
# pinned to one CPU.
#
# usage: bench/offcpu.sh     (run by `make bench`, as root)
# env:   ROUNDS (default 7), LOOPS (sched pipe loops, default 200000)
set -u

BP=${BP:-./boundprof}
ROUNDS=${ROUNDS:-7}
LOOPS=${LOOPS:-200000}
T=$(mktemp -d /tmp/bp-bench-off.XXXXXX)
STATS_OLD=$(cat /proc/sys/kernel/bpf_stats_enabled 2>/dev/null || echo 0)
BG=

cleanup() {
	[ -n "$BG" ] && kill -INT "$BG" 2>/dev/null && wait "$BG" 2>/dev/null
	echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled 2>/dev/null
	rm -rf "$T"
}
. "$(dirname "$0")/lib.sh"
bench_traps
[ "$(id -u)" = 0 ] || die "needs root"
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
have_bpftrace=1
command -v bpftrace >/dev/null || have_bpftrace=0

pipe_us() { perf bench sched pipe -l "$LOOPS" 2>/dev/null | awk '/usecs\/op/ {print $1}'; }

# The peer: off-CPU time by kernel+user stack, stacks taken at every switch.
# Classic tracepoints need tracefs: mount it, when it is not, in a private
# mount namespace so the machine's mounts stay as they are.
cat > "$T/offcpu.bt" <<'EOF'
tracepoint:sched:sched_switch
{
	@ts[args->prev_pid] = nsecs;
	@ks[args->prev_pid] = kstack;
	@us[args->prev_pid] = ustack;
	$t = @ts[args->next_pid];
	if ($t) {
		@off[@ks[args->next_pid], @us[args->next_pid]] = sum(nsecs - $t);
		delete(@ts[args->next_pid]);
	}
}
EOF

under() { # name cmd...
	local name=$1 i; shift
	"$@" > /dev/null 2> "$T/$name.err" &
	BG=$!
	sleep 2
	pipe_us >> "$T/$name.times"
	kill -INT "$BG"
	# bpftrace once kept running past its SIGINT (2026-12-07, a loaded
	# guest) and the bench waited for it 15 minutes: ask again every 5 s,
	# and fail, naming it, after 30
	for i in $(seq 1 30); do
		kill -0 "$BG" 2>/dev/null || break
		[ $((i % 5)) = 0 ] && kill -INT "$BG" 2>/dev/null
		sleep 1
	done
	if kill -0 "$BG" 2>/dev/null; then
		kill -KILL "$BG" 2>/dev/null
		wait "$BG" 2>/dev/null
		BG=
		die "$name did not stop within 30 s of SIGINT"
	fi
	wait "$BG" || die "$name failed: $(tail -c 300 "$T/$name.err")"
	BG=
}

echo "context-switch cost: perf bench sched pipe -l $LOOPS, $ROUNDS rounds"
for r in $(seq 1 "$ROUNDS"); do
	order=("base" "bp" "bt")
	for i in $(seq 1 $((r % 3))); do order=("${order[@]:1}" "${order[0]}"); done
	for what in "${order[@]}"; do
		case $what in
		base) pipe_us >> "$T/base.times" ;;
		bp) under bp "$BP" record -a -o "$T/bp.json" ;;
		# tracefs may be mounted already (perf mounts it for its tracepoints)
		bt) [ $have_bpftrace = 1 ] && under bt unshare -m --propagation private sh -c \
			"{ mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing; } && exec bpftrace $T/offcpu.bt" ;;
		esac
	done
	printf '  round %d: base %s  boundprof %s  bpftrace %s usecs/op\n' "$r" \
		"$(tail -1 "$T/base.times")" "$(tail -1 "$T/bp.times")" \
		"$( [ -f "$T/bt.times" ] && tail -1 "$T/bt.times" || echo -)"
done
base=$(median < "$T/base.times")
bpt=$(median < "$T/bp.times")
btt=$( [ -s "$T/bt.times" ] && median < "$T/bt.times" || echo 0)
need_pos "perf bench sched pipe alone" "$base"
need_pos "perf bench sched pipe under boundprof" "$bpt"
awk -v b="$base" -v x="$bpt" -v t="$btt" 'BEGIN {
	printf "  median usecs/op: baseline %.2f, boundprof %.2f (%+.1f%%)", b, x, (x / b - 1) * 100
	if (t > 0) printf ", bpftrace off-CPU %.2f (%+.1f%%)", t, (t / b - 1) * 100
	printf "\n  aim: boundprof within +10%%\n"
	if (t > b) printf "  boundprof slowdown / bpftrace slowdown = %.2f\n", (x - b) / (t - b)
}'
[ $have_bpftrace = 1 ] || echo "  bpftrace not installed: peer skipped (apt-get install bpftrace)"
awk '/"offcpu": \{/ { f = 1 } f && /"switches"/ { gsub(/[^0-9]/, ""); sw = $0 }
	f && /"stacks_cached"/ { gsub(/[^0-9]/, ""); c = $0; f = 0 }
	END { if (sw > 0) printf "  stacks reused from the per-thread cache: %.0f%% of %d switches\n", c / sw * 100, sw }' \
	"$T/bp.json"

# BPF cost per event, from the kernel's accounting: ours and offcputime's, in
# the same run, on sched pipe pinned to one CPU (two switches and two wakeups
# per iteration). Only the programs each tracer holds (its fds' prog_id) count.
progs() { grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u; }
prog_stats() { # who pid
	for id in $(progs "$2"); do
		bpftool -j prog show id "$id" 2>/dev/null | tr ',' '\n' | awk -v w="$1" -v id="$id" '
			/"name"/ { gsub(/.*:"|"/, ""); n = $0 }
			/"run_time_ns"/ { gsub(/[^0-9]/, ""); t = $0 }
			/"run_cnt"/ { gsub(/[^0-9]/, ""); c = $0 }
			END { print w "/" n, t + 0, c + 0 }'
	done
}
echo 1 > /proc/sys/kernel/bpf_stats_enabled
for r in $(seq 1 "$ROUNDS"); do
	"$BP" record -a -o "$T/bp2.json" > /dev/null 2>&1 &
	BG=$!
	OC=
	command -v offcputime >/dev/null && { offcputime > /dev/null 2>&1 & OC=$!; }
	sleep 3
	{ prog_stats boundprof "$BG"; [ -n "$OC" ] && prog_stats offcputime "$OC"; } | sort > "$T/s0"
	taskset -c 1 perf bench sched pipe -l "$LOOPS" > /dev/null 2>&1
	{ prog_stats boundprof "$BG"; [ -n "$OC" ] && prog_stats offcputime "$OC"; } | sort > "$T/s1"
	kill -INT "$BG" $OC; wait "$BG" $OC 2>/dev/null; BG=
	join "$T/s0" "$T/s1" | awk '$5 - $3 > 10000 { printf "%s %.0f\n", $1, ($4 - $2) / ($5 - $3) }' \
		>> "$T/perevent"
done
[ -s "$T/perevent" ] || die "could not measure the BPF run time per event (bpf_stats)"
echo "  BPF run time per event (bpf_stats, sched pipe pinned to one CPU, $ROUNDS rounds, medians):"
for p in $(awk '{print $1}' "$T/perevent" | sort -u); do
	printf '    %-28s %6s ns\n' "$p" "$(awk -v p="$p" '$1 == p {print $2}' "$T/perevent" | median)"
done
command -v offcputime >/dev/null || echo "  offcputime not installed: peer skipped (apt-get install libbpf-tools)"
echo "$STATS_OLD" > /proc/sys/kernel/bpf_stats_enabled
