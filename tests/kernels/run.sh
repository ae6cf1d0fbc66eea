#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# make test-kernels: boot Debian 12's stock cloud kernel (6.1, the oldest we
# test) under qemu with an initramfs holding boundprof, its libraries,
# busybox and the split fixture; the guest's /init (tests/kernels/init)
# loads every BPF program that applies there, records the fixture and a
# run of direct disk reads, and prints the results on the console; this
# side checks them. docs/kernels.md has the details.
#
#   tests/kernels/run.sh OUT BOUNDPROF FIXTURES_DIR
#
# Environment: KERNEL_PKG (default: the newest linux-image-6.1.0-N-cloud-
# amd64-unsigned apt knows), QEMU_TIMEOUT (seconds, default 180), QEMU_KVM=1
# to try -enable-kvm -cpu host (on these machines qemu then aborts with
# "failed to set MSR 0x10a"; an earlier try hung).
#
# Exit 0 on pass, and also on a loud SKIP when the kernel package cannot be
# downloaded because there is no network; 1 on any failure.
set -eu

out=$1
bin=$2
fixtures=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
timeout_s=${QEMU_TIMEOUT:-180}
cache="$out/kernels"
# the virtio disk's modules, in dependency order (tests/kernels/init loads them)
MODULES="virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev virtio_pci virtio_blk"

say() { echo "test-kernels: $*"; }
fail() {
	echo "test-kernels: FAIL: $*" >&2
	exit 1
}

work=
qpid=
cleanup() {
	if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null || true
		sleep 1
		kill -9 "$qpid" 2>/dev/null || true
	fi
	# keep the last console for a look after a failure
	[ -s "$work/console.log" ] && cp "$work/console.log" "$cache/console-last.log"
	[ -n "$work" ] && rm -rf "$work"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# --- tools, each from its Debian package, only when missing
sh "$src/scripts/need.sh" -l "$out/apt-kernels.log" qemu-system-x86_64=qemu-system-x86 \
	busybox=busybox-static cpio=cpio || fail "cannot install qemu-system-x86, busybox-static, cpio"

[ "$(uname -m)" = x86_64 ] || fail "x86-64 hosts only (the guest kernel is Debian's amd64 cloud kernel)"

# apt's words for "no network", as opposed to a package that is gone
OFFLINE='Temporary failure resolving|Could not resolve|Could not connect|Network is unreachable|No route to host|Connection timed out|Connection refused'
offline_in() {
	grep -qE "$OFFLINE" "$1"
}
skip_offline() {
	echo "test-kernels: SKIP: no network, cannot download $1 (apt: $(grep -oE "($OFFLINE).*" "$2" | head -n 1))" >&2
	echo "test-kernels: SKIP: the 6.1 kernel was NOT tested" >&2
	exit 0
}

mkdir -p "$cache"
work=$(mktemp -d "$cache/tmp.XXXXXX")

# the start-up check, on this host: a kernel that reports 2.6 is refused
# with one line and exit 1, before anything is loaded
if command -v setarch >/dev/null && setarch "$(uname -m)" --uname-2.6 true 2>/dev/null; then
	rc=0
	setarch "$(uname -m)" --uname-2.6 "$bin" record -- true >"$work/old.out" 2>"$work/old.err" || rc=$?
	if [ $rc != 1 ] || [ "$(wc -l <"$work/old.err")" != 1 ] || ! grep -q 'is too old' "$work/old.err"; then
		cat "$work/old.err" >&2
		fail "on a kernel reporting 2.6 boundprof exited $rc, expected 1 with one 'too old' line"
	fi
	say "start-up check: $(cat "$work/old.err")"
fi

# --- which kernel: the newest Debian 12 cloud kernel apt knows
pick() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-cloud-amd64-unsigned$' 2>/dev/null |
		awk '{ print $1 }' | sort -V | tail -n 1
}
pkg=${KERNEL_PKG:-$(pick)}
if [ -z "$pkg" ] && [ "$(id -u)" = 0 ]; then
	# a fresh image has no package lists
	apt-get update -q >"$work/apt.log" 2>&1 || true
	pkg=$(pick)
	if [ -z "$pkg" ]; then
		cached=$(ls -d "$cache"/linux-image-* 2>/dev/null | sort -V | tail -n 1)
		if [ -n "$cached" ] && [ -f "$cached/.ok" ]; then
			pkg=${cached##*/}
			say "apt knows no 6.1 cloud kernel (offline?); using the cached $pkg"
		elif offline_in "$work/apt.log"; then
			skip_offline "the package lists" "$work/apt.log"
		fi
	fi
fi
[ -n "$pkg" ] || fail "apt knows no linux-image-6.1.0-*-cloud-amd64-unsigned (not Debian 12?)"

# --- the kernel and its modules, downloaded once per output tree
kdir="$cache/$pkg"
if [ ! -f "$kdir/.ok" ]; then
	say "downloading $pkg"
	if ! (cd "$work" && apt-get download "$pkg") >"$work/download.log" 2>&1; then
		if ! offline_in "$work/download.log"; then
			tail -n 5 "$work/download.log" >&2
			fail "apt-get download $pkg failed"
		fi
		cached=$(ls -d "$cache"/linux-image-*/.ok 2>/dev/null | sort -V | tail -n 1)
		[ -n "$cached" ] || skip_offline "$pkg" "$work/download.log"
		kdir=${cached%/.ok}
		say "no network for $pkg; using the cached ${kdir##*/}"
		pkg=${kdir##*/}
	fi
fi
if [ ! -f "$kdir/.ok" ]; then
	dpkg-deb -x "$work"/"$pkg"_*.deb "$work/deb"
	rm -rf "$kdir"
	mkdir -p "$kdir/modules"
	cp "$work"/deb/boot/vmlinuz-* "$kdir/vmlinuz"
	cp "$work"/deb/boot/config-* "$kdir/config"
	for m in $MODULES; do
		f=$(find "$work/deb/lib/modules" -name "$m.ko" | head -n 1)
		[ -n "$f" ] || fail "$pkg has no $m.ko"
		cp "$f" "$kdir/modules/"
	done
	rm -rf "$work/deb" "$work"/*.deb
	touch "$kdir/.ok"
fi

# --- the initramfs: busybox, boundprof, the fixture, their libraries, modules
root="$work/root"
mkdir -p "$root/bin" "$root/fixtures" "$root/lib/modules" "$root/proc" "$root/sys" \
	"$root/dev" "$root/tmp" "$root/etc"
# copy a binary and the libraries ldd lists, at the same paths
add_bin() {
	cp "$1" "$2"
	ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
}
add_bin "$(command -v busybox)" "$root/bin/busybox"
add_bin "$bin" "$root/bin/boundprof"
add_bin "$fixtures/split" "$root/fixtures/split"
add_bin "$fixtures/spin" "$root/fixtures/spin"
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
add_bin "$bpftool" "$root/bin/bpftool"
cp "$kdir"/modules/*.ko "$root/lib/modules/"
cp "$src/tests/kernels/init" "$root/init"
chmod +x "$root/init"
echo "root:x:0:0:root:/:/bin/sh" >"$root/etc/passwd"
(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 >"$work/initrd.gz"
# a raw disk of distinct blocks for the guest to read
dd if=/dev/urandom of="$work/disk.img" bs=1M count=16 status=none

# --- boot
# Software emulation runs both vCPUs on one host thread (thread=single):
# with a thread per vCPU (qemu 7.2's default), a vCPU could keep running a
# stale translation of kernel text that the other had just patched back.
# Attaching or detaching a tracepoint program patches the tracepoint's jump
# with int3 (text_poke_bp()); 4 of ~51 runs hung for good with both vCPUs
# taking the int3 at try_to_wake_up+0x9e (trace_sched_waking) over and over,
# and kprobe_int3_handler() sending them back to an address whose memory
# no longer held it (seen through qemu's gdb stub; docs/kernels.md).
accel="-accel tcg,thread=single"
[ "${QEMU_KVM:-0}" = 1 ] && [ -w /dev/kvm ] && accel="-enable-kvm -cpu host"
case $accel in
*kvm*) how="KVM" ;;
*) how="software emulation, one thread" ;;
esac
say "booting $pkg under qemu ($how, limit ${timeout_s} s)"
start=$(date +%s)
# shellcheck disable=SC2086
qemu-system-x86_64 $accel -m 1024 -smp 2 -nodefaults -display none -no-reboot \
	-serial "file:$work/console.log" -kernel "$kdir/vmlinuz" -initrd "$work/initrd.gz" \
	-drive "file=$work/disk.img,if=virtio,format=raw,cache=none" \
	-append "console=ttyS0 panic=-1 quiet" </dev/null >"$work/qemu.log" 2>&1 &
qpid=$!
waited=0
while kill -0 "$qpid" 2>/dev/null; do
	if [ $waited -ge "$timeout_s" ]; then
		tail -n 30 "$work/console.log" >&2 || true
		fail "the guest did not power off within $timeout_s s (QEMU_TIMEOUT)"
	fi
	sleep 1
	waited=$((waited + 1))
done
qrc=0
wait "$qpid" || qrc=$?
qpid=
took=$(($(date +%s) - start))
log="$work/console.log"
if [ $qrc != 0 ]; then
	cat "$work/qemu.log" >&2
	fail "qemu exited $qrc"
fi
grep -q '^@@BPK done' "$log" || {
	tail -n 40 "$log" >&2
	fail "the guest did not finish its tests (console: $cache/console-last.log)"
}

# --- judge what the guest printed
tr -d '\r' <"$log" >"$work/console.txt"
log="$work/console.txt"
value() { sed -n "s/^@@BPK $1 //p" "$log" | head -n 1; }
sect() { sed -n "/^@@BPK-BEGIN $1\$/,/^@@BPK-END $1\$/p" "$log" | sed '1d;$d'; }

kver=$(value kernel)
say "guest kernel $kver, BTF $(value btf), cgroup2 mounts $(value cgroup2), disk $(value disk), boot and tests $took s"
case $kver in
6.1.*) ;;
*) fail "the guest runs kernel '$kver', not 6.1" ;;
esac
[ "$(value cgroup2)" = 1 ] || fail "cgroup2 is not mounted at /sys/fs/cgroup in the guest"

rc=$(value split-exit)
if [ "$rc" != 0 ]; then
	sect split.out >&2
	sect verbose >&2
	fail "boundprof record -- split exited '$rc' on $kver"
fi
sect split.out | sed 's/^/    /'

# top function by self samples, and its share: the first hotspot of the
# report (a function inlined into another, like fixture_lcg, is charged to
# that one there), and the samples of split in the folded output
sect split.folded >"$work/split.folded"
total=$(awk '/^split;/ { t += $NF } END { print t + 0 }' "$work/split.folded")
top=$(sect split.out | sed -n 's/^ *\([0-9]*\)% of on-CPU time in \([^ ]*\) .*/\2 \1/p' | head -n 1)
[ "$total" -gt 0 ] && top="$top $total"
set -- $top
[ $# = 3 ] || fail "no samples of split in the folded output"
verdict=$(sect split.out | sed -n 's/^pid [0-9]* split: \([a-z-]*\) (.*/\1/p' | head -n 1)
say "split: top function $1 ($2% of $3 samples), verdict ${verdict:-none}"
[ "$1" = alpha ] || fail "split's top function is $1, expected alpha"
[ "$2" -ge 65 ] && [ "$2" -le 85 ] || fail "alpha has $2% of split's samples, expected 75% (65-85)"
[ "$verdict" = cpu-bound ] || fail "split's verdict is '${verdict:-none}', expected cpu-bound"

# every program of the skeleton that applies to 6.1 was loaded
skel="$out/boundprof.skel.h"
want=$(sed -n 's/^[[:space:]]*struct bpf_program \*\([a-z0-9_]*\);$/\1/p' "$skel" | sort -u)
[ -n "$want" ] || fail "no programs listed in $skel"
sect progs >"$work/progs"
missing=
for p in $want; do
	case $p in
	# block_io_start/block_io_done: 6.5 and later (bpf/compat.bpf.h)
	bp_io_start | bp_io_done) continue ;;
	# the exit's walk of the mappings: the task_vma iterator, 6.7 (bp_exit_nowalk here)
	bp_exit) continue ;;
	esac
	grep -q " name $p " "$work/progs" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	sed 's/^/    /' "$work/progs" >&2
	fail "programs not loaded on $kver:$missing"
fi
say "programs loaded: $(grep -o ' name bp_[a-z0-9_]*' "$work/progs" | sed 's/ name //' | sort | tr '\n' ' ')"
# the relocation subset (agent/collect/corebtf.h), or why the whole BTF was used
say "$(sect split.out | sed -n 's/^boundprof: debug: \(CO-RE relocations against .*\)/\1/p' | head -n 1)"

# block IO: the disk's direct reads counted on vda, and charged to dd, with
# and without an IO scheduler
[ "$(value disk)" = vda ] || fail "the guest has no /dev/vda (virtio_blk did not load)"
for sched in none mq-deadline; do
	[ "$(value dd-$sched-exit)" = 0 ] || {
		sect dd-$sched.out >&2
		fail "boundprof record -- dd ($sched) exited '$(value dd-$sched-exit)'"
	}
	sect dd-$sched.out | grep -E '^  vda:' | sed 's/^/    /'
	io=$(sect dd-$sched.out | sed -n 's/^  vda: \([0-9]*\) reads.*/\1/p' | head -n 1)
	# dd's own requests: the first "ops" after its "comm" in the JSON report
	mine=$(sect dd-$sched.json | awk '/"comm": "dd"/ { dd = 1 }
		dd && /"ops":/ { gsub(/[^0-9]/, ""); print; exit }')
	say "block IO ($(value dd-$sched-scheduler)): ${io:-no} reads seen on vda, ${mine:-none} charged to dd (it read 2048 blocks)"
	[ -n "$io" ] && [ "$io" -ge 2000 ] ||
		fail "block IO on $kver ($sched): ${io:-no} reads seen on vda, expected about 2048"
	[ -n "$mine" ] && [ "$mine" -ge 2000 ] ||
		fail "block IO on $kver ($sched): ${mine:-no} requests charged to dd, expected about 2048"
done

# cgroup v2 with the cpu controller: the spinner under cpu.max "20000 100000"
# is cpu-throttled, and boundprof's throttled time is the cgroup's cpu.stat's
[ "$(value quota-exit)" = 0 ] || {
	sect quota.out >&2
	fail "boundprof record -- spin in a cgroup with a quota exited '$(value quota-exit)'"
}
[ "$(value cpu-max)" = "20000 100000" ] || fail "cpu.max is '$(value cpu-max)' in the guest"
sect quota.json >"$work/quota.json"
# the spin process's first values: limits.cpu comes before the verdict
spinval() {
	awk -v k="\"$1\":" '/"comm": "spin"/ { s = 1 } s && $1 == k { gsub(/[",]/, "", $2); print $2; exit }' \
		"$work/quota.json"
}
# its verdict's class: woken_by rows before it have a "class" too
cls=$(awk '/"comm": "spin"/ { s = 1 } s && /"verdict":/ { v = 1 }
	v && $1 == "\"class\":" { gsub(/[",]/, "", $2); print $2; exit }' "$work/quota.json")
quota=$(spinval quota_cpus)
bp_thr=$(spinval throttled_s)
wall=$(spinval wall_s)
rq=$(spinval runqueue)
oracle=$(value quota-throttled-usec)
cs=$(awk -v u="$oracle" -v w="$wall" 'BEGIN { printf "%.3f s of %.3f s wall (%.0f%%)", u / 1e6, w, (w > 0 ? 100 * u / 1e6 / w : 0) }')
say "quota: cpu.max 20000 100000 (${quota:-?} CPUs): cpu.stat throttled $cs, boundprof ${bp_thr:-?} s (run queue ${rq:-?} s), verdict ${cls:-none}"
# what boundprof read of the cgroup (-vv) and its cgroup rows, before a failure
quota_detail() {
	sect quota.out | grep -E 'cgroup' | sed 's/^/    /' >&2
	awk '/"cgroups":/ { c = 1 } c { print "    " $0 } c && /^  \]/ { exit }' \
		"$work/quota.json" >&2
}
[ "$cls" = cpu-throttled ] || {
	quota_detail
	fail "the spinner under a 20% quota is '${cls:-none}', expected cpu-throttled"
}
[ "$quota" = 0.2 ] || {
	quota_detail
	fail "boundprof says the quota is '${quota:-none}' CPUs, expected 0.2"
}
# Each process's own cgroup (a key of the processes' level, six spaces in):
# /bpq, the short-lived ones' too. Under emulation boundprof may read their
# exec events only after they are gone, the spinner's included (1 run in ~45
# had no cgroup for any of them, and a cpu-starved group "?", before the
# cgroups came from the events' cgroup ids when /proc has no process).
pcg=$(awk '/^      "cgroup": / { gsub(/[",]/, "", $2); print ($2 == "" ? "(none)" : $2) }' \
	"$work/quota.json" | sort | uniq -c | awk '{ printf "%s%s x%d", (NR > 1 ? ", " : ""), $2, $1 }')
say "quota: the processes' cgroups: ${pcg:-none}"
case "$pcg" in
*,*) bad=1 ;;
"/bpq x"[0-9]*) bad= ;;
*) bad=1 ;;
esac
[ -z "$bad" ] || {
	quota_detail
	fail "the processes recorded in /bpq have the cgroups '${pcg:-none}', expected /bpq for all"
}
# Most likely a throttle in progress when the spinner exits is added to cpu.stat when
# its period ends, after boundprof's last read but before the guest's: about
# one run in five (old code and new alike) boundprof has one 80-ms period
# less. So up to one period (100 ms) under, 50 ms over.
awk -v b="$bp_thr" -v u="$oracle" -v w="$wall" 'BEGIN {
	o = u / 1e6
	if (o <= 0 || b < o - 0.15 || b > o + 0.05 || o / w > 0.85) exit 1 }' || {
	quota_detail
	fail "boundprof's throttled time ${bp_thr:-?} s is not cpu.stat's $oracle us (from one 100-ms period + 50 ms under to 50 ms over), or more than 85% of the ${wall:-?} s wall"
}

# -G: only the cgroup's processes
[ "$(value only-exit)" = 0 ] || fail "boundprof record -G exited '$(value only-exit)'"
sect only.json >"$work/only.json"
pids=$(awk '$1 == "\"pid\":" { gsub(/,/, "", $2); print $2 }' "$work/only.json" | sort -u | tr '\n' ' ')
others=$(awk '$1 == "\"cgroup\":" && $2 != "\"/bpg\"," { print $2 }' "$work/only.json" | sort -u | tr '\n' ' ')
say "-G /sys/fs/cgroup/bpg: pids $pids(inside $(value only-inside), outside $(value only-outside))"
case " $pids" in
*" $(value only-inside) "*) ;;
*) fail "the -G recording lacks the spinner inside the cgroup (pid $(value only-inside))" ;;
esac
case " $pids" in
*" $(value only-outside) "*) fail "the -G recording holds the spinner outside the cgroup" ;;
esac
[ -z "$others" ] || fail "the -G recording holds processes of other cgroups: $others"

# dump: loads, and says the sleeper sleeps in nanosleep and the spinner runs
for d in dump dump-spin; do
	[ "$(value $d-exit)" = 0 ] || {
		sect dump.err >&2
		fail "boundprof dump ($d) exited '$(value $d-exit)' on $kver"
	}
done
sect dump-sleep.json >"$work/dump-sleep.json"
sect dump-spin.json >"$work/dump-spin.json"
grep -q '"wait_class": "sleep"' "$work/dump-sleep.json" &&
	grep -q '"name": "clock_nanosleep"\|"name": "nanosleep"' "$work/dump-sleep.json" ||
	fail "boundprof dump of a sleep: not sleeping in nanosleep on $kver: $(cat "$work/dump-sleep.json")"
grep -q '"state": "running"\|"state": "runnable"' "$work/dump-spin.json" ||
	fail "boundprof dump of a spinner: neither running nor runnable on $kver: $(cat "$work/dump-spin.json")"
say "dump: a sleep in $(sed -n 's/.*"name": "\([a-z_]*nanosleep\)".*/\1/p' "$work/dump-sleep.json" | head -1), a spinner $(sed -n 's/.*"state": "\([a-z]*\)".*/\1/p' "$work/dump-spin.json" | head -1)"

say "ok: $kver loads every program, split is cpu-bound in alpha ($2%), block IO seen and charged to dd, cpu-throttled under cpu.max with its processes in /bpq, -G holds its cgroup only, dump works"
