# SPDX-License-Identifier: GPL-2.0
#
# Shared by the bench scripts: a benchmark that cannot measure fails, naming
# what it could not measure, instead of printing nan or an empty figure and
# exiting 0 (make bench must fail then).

die() { echo "bench: $*" >&2; exit 1; }

# the caller's cleanup() at exit; a signal ends the run (a handler that
# only cleaned up would let the script carry on, its load gone)
bench_traps() {
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# need_num NAME VALUE: VALUE must be a finite number, else the bench fails
need_num() {
	case $2 in
	''|*[!0-9.eE+-]*|*nan*|*inf*) die "could not measure $1 (got '${2}')" ;;
	esac
	awk -v v="$2" 'BEGIN { exit !(v == v + 0) }' || die "could not measure $1 (got '$2')"
}

# need_pos NAME VALUE: a number above zero (times, sizes)
need_pos() {
	need_num "$1" "$2"
	awk -v v="$2" 'BEGIN { exit !(v > 0) }' || die "could not measure $1 (got $2, not above 0)"
}

# need_exec PATH: an executable the bench runs
need_exec() {
	[ -x "$1" ] || die "$1 missing: build it with make ${1#./}"
}

# need_lines FILE N NAME: FILE holds N numeric lines (one per measured run)
need_lines() {
	local got
	got=$(grep -cE '^[0-9]+([.][0-9]+)?$' "$1" 2>/dev/null)
	[ "${got:-0}" -ge "$2" ] || die "$3: ${got:-0} of $2 runs measured ($(tail -c 300 "${4:-/dev/null}" 2>/dev/null | tr '\n' ' '))"
}

# --- the mixed load of bench/agent.sh and bench/ab.sh ---------------------
# Both keep the processes they start in PIDS, their scratch in T, and name
# the fixtures CHURN and SHORT.

# stop_pids: TERM every process in PIDS, KILL what is left after 0.5 s
stop_pids() {
	local p
	for p in "${PIDS[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	sleep 0.5
	for p in "${PIDS[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	PIDS=()
}

# cpu_ns PID: ns on CPU of all its threads (schedstat: exact, unlike ticks)
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f", s}'
}

# mix_start SECONDS: one CPU-bound process (stress-ng), random 4 KiB reads
# at 200 IOPS (fio, psync, O_DIRECT), 20 short-lived processes a second
mix_start() {
	stress-ng --cpu 1 --timeout "$1s" --quiet &
	PIDS+=($!)
	fio --name=bench --filename="$T/fio.dat" --size=256M --rw=randread --bs=4k \
		--direct=1 --ioengine=psync --rate_iops=200 --time_based \
		--runtime="$1" --output=/dev/null &
	PIDS+=($!)
	"$CHURN" "$1" 20 "$SHORT" 0.002 > /dev/null &
	PIDS+=($!)
	sleep 3	# fio lays out its file first
}
