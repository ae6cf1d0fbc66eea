#!/bin/sh
# run.sh JOBS BINARY...: the unit test binaries, JOBS at a time, each one's
# output printed whole when it ends. They time nothing and share no state:
# run one after another they were a minute of `make test` on two CPUs, a
# third of it one binary (test_dwarf_cfi).
# Exit: 1 when any binary failed.
jobs=$1
shift
lock=$(mktemp) || exit 1
trap 'rm -f "$lock"' EXIT
export BP_UNIT_LOCK="$lock"
printf '%s\n' "$@" | xargs -P "$jobs" -n 1 sh -c '
	out=$(mktemp) || exit 1
	trap '"'"'rm -f "$out"'"'"' EXIT
	"$1" >"$out" 2>&1
	rc=$?
	{
		flock 9
		echo "  UNIT     $(basename "$1")"
		cat "$out"
	} 9>>"$BP_UNIT_LOCK"
	rm -f "$out"
	[ $rc = 0 ] || exit 1' sh
[ $? = 0 ]
