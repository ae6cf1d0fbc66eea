#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two builds of the agent against each other, both at once under the mixed
# load of bench/agent.sh, for changes too small for one run after another:
# this guest's speed drifts by a fifth between minutes, more than most
# changes move the agent's cost, and pairs taken one after the other
# measured each new build later, in a slower or faster host. Run at once,
# both see the same processes, the same events and the same host speed.
#
# They do not see the same caches: on each tracepoint the programs of the
# agent started first run first, and pay for bringing the tasks' lines in
# (its BPF time was ~0.7 ms/s above the second's under the mix, 20%). So
# each round runs twice, each build first once, and the estimate is the
# mean of the two orders, in which the order's part cancels:
#   B - A = ((B first - A second) + (B second - A first)) / 2
# Each agent also sees the other as one more process; both alike.
#
# Not part of `make bench` (which compares against perf): a tool for
# whoever changes the agent. Prints each round and the estimates, with the
# spread of the rounds' differences.
#
# usage: bench/ab.sh A_BINARY B_BINARY [BUILD_DIR]   (as root)
# env:   ROUNDS (default 3), DUR (seconds measured per run, default 30)
set -u

A=${1:-}
B=${2:-}
OUT=${3:-.output}
ROUNDS=${ROUNDS:-3}
DUR=${DUR:-30}
CHURN=$OUT/tests/fixtures/churn
SHORT=$OUT/tests/fixtures/shortlived
T=$(mktemp -d /var/tmp/bp-bench-ab.XXXXXX)
PIDS=()
STATS0=

cleanup() {
	stop_pids
	[ -n "$STATS0" ] && echo "$STATS0" > /proc/sys/kernel/bpf_stats_enabled
	rm -rf "$T"
}
. "$(dirname "$0")/lib.sh"
bench_traps
[ "$(id -u)" = 0 ] || die "needs root (BPF)"
[ -n "$A" ] && [ -n "$B" ] || die "usage: bench/ab.sh A_BINARY B_BINARY [BUILD_DIR]"
need_exec "$A"
need_exec "$B"
need_exec "$CHURN"
need_exec "$SHORT"
for c in stress-ng fio; do
	command -v $c >/dev/null || die "$c not found (make bench-deps)"
done
STATS0=$(cat /proc/sys/kernel/bpf_stats_enabled)

bpf_ns() { # pid: run time of the BPF programs it holds (their fds' fdinfo)
	local f k v t s=0
	for f in /proc/"$1"/fdinfo/*; do
		t=
		while read -r k v; do
			[ "$k" = run_time_ns: ] && t=$v
		done < "$f" 2>/dev/null
		[ -n "$t" ] && s=$((s + t))
	done
	echo "$s"
}

start_agent() { # binary name port: sets AGENT
	BOUNDPROF_STATE_DIR="$T/state-$2" "$1" agent --dir "$T/out-$2" \
		--listen 127.0.0.1:"$3" --socket off > "$T/$2.log" 2>&1 &
	AGENT=$!
	PIDS+=("$AGENT")
}

# one run: $1 starts first; appends "first A_bpf A_user B_bpf B_user" (us/s) to $T/runs
run() { # first(A|B)
	local pa pb a0 a1 b0 b1 ua0 ua1 ub0 ub1 v
	echo 1 > /proc/sys/kernel/bpf_stats_enabled
	mix_start "$((DUR + 15))"
	if [ "$1" = A ]; then
		start_agent "$A" a 19811; pa=$AGENT; sleep 1
		start_agent "$B" b 19812; pb=$AGENT
	else
		start_agent "$B" b 19812; pb=$AGENT; sleep 1
		start_agent "$A" a 19811; pa=$AGENT
	fi
	sleep 6	# past both starts (kernel symbols, unwind tables of what runs)
	a0=$(bpf_ns $pa); b0=$(bpf_ns $pb); ua0=$(cpu_ns $pa); ub0=$(cpu_ns $pb)
	sleep "$DUR"
	a1=$(bpf_ns $pa); b1=$(bpf_ns $pb); ua1=$(cpu_ns $pa); ub1=$(cpu_ns $pb)
	stop_pids
	echo "$STATS0" > /proc/sys/kernel/bpf_stats_enabled
	for v in "$a0" "$a1" "$b0" "$b1"; do need_num "BPF run time" "$v"; done
	for v in "$ua0" "$ua1" "$ub0" "$ub1"; do need_pos "agent CPU time" "$v"; done
	[ "$a1" -gt "$a0" ] && [ "$b1" -gt "$b0" ] ||
		die "no BPF run time counted (A $a0 -> $a1, B $b0 -> $b1): bpf_stats off?"
	R="$(((a1 - a0) / DUR / 1000)) $(((ua1 - ua0) / DUR / 1000))"
	R="$R $(((b1 - b0) / DUR / 1000)) $(((ub1 - ub0) / DUR / 1000))"
	echo "$1 $R" >> "$T/runs"
}

echo "bench/ab.sh: A $A, B $B; $ROUNDS rounds of two ${DUR}-s runs, each first once"
for ((i = 1; i <= ROUNDS; i++)); do
	for first in A B; do
		run $first
		set -- $R
		echo "round $i, $first first: A $1 us/s BPF + $2 userspace, B $3 + $4"
	done
done
# B - A per round, the two orders averaged: the order's part cancels
awk '
	{ d_bpf = $4 - $2; d_user = $5 - $3 }
	$1 == "A" { ab = d_bpf; au = d_user; next }
	{ n++; db[n] = (ab + d_bpf) / 2; du[n] = (au + d_user) / 2
	  ta[n] = $2 + $3; tb[n] = $4 + $5 }
	END {
		for (i = 1; i <= n; i++) { sb += db[i]; su += du[i] }
		mb = sb / n; mu = su / n
		for (i = 1; i <= n; i++) { vb += (db[i] - mb)^2; vu += (du[i] - mu)^2 }
		sdb = n > 1 ? sqrt(vb / (n - 1)) : 0; sdu = n > 1 ? sqrt(vu / (n - 1)) : 0
		printf "B - A, BPF:       %+.0f us/s (rounds:", mb
		for (i = 1; i <= n; i++) printf " %+.0f", db[i]
		printf "; sd %.0f)\n", sdb
		printf "B - A, userspace: %+.0f us/s (rounds:", mu
		for (i = 1; i <= n; i++) printf " %+.0f", du[i]
		printf "; sd %.0f)\n", sdu
		printf "B - A, total:     %+.0f us/s of one CPU\n", mb + mu
	}' "$T/runs"
