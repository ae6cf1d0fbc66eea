#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Regenerate the fuzzers' seed corpora in tests/fuzz/corpus/HARNESS/ (they
# are committed: small, and each made here from something real).
#
#   tests/fuzz/gen_corpus.sh [PROFILE.pb.gz...]
#
# pprof: the saved profiles given (boundprof record -o X.pb.gz of a real
# program), as written and decompressed, and a short recording of the spin
# fixture when run as root with ./boundprof built; elf: small binaries built
# here (symbols, dynamic symbols, stripped with a debuglink, compressed
# debug sections, a stripped binary followed by its debug file); procmaps: this shell's /proc/self/maps and odd lines;
# kallsyms: lines of /proc/kallsyms; perfmap: the unit tests' JIT map; httpd:
# requests as curl, Prometheus and browsers send them; json: a report and
# the state of a saved profile, and small documents; ipc: the local socket's
# requests and answers.
set -eu
cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p $C/pprof $C/elf $C/procmaps $C/kallsyms $C/perfmap $C/httpd $C/json

# ---- pprof
n=0
for f in "$@"; do
	n=$((n + 1))
	cp "$f" $C/pprof/profile$n.pb.gz
	gzip -dc "$f" > $C/pprof/profile$n.pb
done
if [ $# -eq 0 ] && [ "$(id -u)" = 0 ] && [ -x ./boundprof ] && [ -x .output/tests/fixtures/spin ]; then
	./boundprof record -F 99 -o $C/pprof/spin.pb.gz -- .output/tests/fixtures/spin 1 >/dev/null
	gzip -dc $C/pprof/spin.pb.gz > $C/pprof/spin.pb
fi

# ---- elf
cat > "$tmp/tiny.c" <<'SRC'
int tiny_alpha(int x) { return x * 3 + 1; }
int tiny_beta(int x) { return tiny_alpha(x) ^ 5; }
static int tiny_gamma(int x) { return x - 7; }
int tiny_delta(int x) { return tiny_gamma(x) + tiny_beta(x); }
void _start(void) { for (;;) tiny_delta(1); }
SRC
small="-Os -nostdlib -fno-asynchronous-unwind-tables -Wl,-z,noseparate-code -Wl,--build-id=sha1"
cc $small -static -o $C/elf/exe_symtab "$tmp/tiny.c"
cc $small -shared -fPIC -o $C/elf/lib_dynsym.so "$tmp/tiny.c"
strip -o $C/elf/lib_stripped.so $C/elf/lib_dynsym.so
cc $small -g -fdebug-prefix-map="$tmp"=. -static -o "$tmp/full" "$tmp/tiny.c"
objcopy --only-keep-debug "$tmp/full" "$tmp/exe.debug"
strip -o $C/elf/exe_debuglink "$tmp/full"
objcopy --add-gnu-debuglink="$tmp/exe.debug" $C/elf/exe_debuglink
objcopy --compress-debug-sections=zlib "$tmp/exe.debug" $C/elf/exe_zdebug.debug
# a stripped binary and its debug file in one input, after the harness's mark
{ cat $C/elf/exe_debuglink; printf '\000BP-DEBUG-FILE\000'; cat "$tmp/exe.debug"; } \
	> $C/elf/exe_with_debug_file
strip --only-keep-debug -o "$tmp/lib.debug" $C/elf/lib_dynsym.so
{ cat $C/elf/lib_stripped.so; printf '\000BP-DEBUG-FILE\000'; cat "$tmp/lib.debug"; } \
	> $C/elf/lib_with_build_id_debug

# ---- procmaps
cat /proc/self/maps > $C/procmaps/self.maps
cat > $C/procmaps/odd.maps <<'MAPS'
55d0c0a00000-55d0c0a21000 r-xp 00002000 fd:01 1310722                    /usr/bin/my app (v2)
7f1e2c000000-7f1e2c021000 rw-p 00000000 00:00 0 
7f1e2d400000-7f1e2d600000 r-xp 00000000 00:05 4711                       /memfd:jit (deleted)
7f1e2e000000-7f1e2e001000 r-xs 00010000 103:02 99                        /dev/shm/code (deleted) (deleted)
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]
7ffd5c1fe000-7ffd5c200000 r-xp 00000000 00:00 0                          [vdso]
MAPS

# ---- kallsyms
# real lines, their addresses moved to the unrandomized bases (this machine's
# kernel layout stays here)
if [ -r /proc/kallsyms ]; then
	{ grep -m 12 ' [tT] ' /proc/kallsyms | sed -E 's/^[0-9a-f]{10}([0-9a-f]{6}) /ffffffff81\1 /'
	  grep -m 8 '\[' /proc/kallsyms | sed -E 's/^[0-9a-f]{10}([0-9a-f]{6}) /ffffffffc0\1 /'
	} > $C/kallsyms/real
fi
cat > $C/kallsyms/odd <<'KSYMS'
ffffffff81000000 T _text
ffffffff81001000 T do_syscall_64
ffffffff81001000 t do_syscall_64.cold
ffffffff81002000 t __x64_sys_read.constprop.0
ffffffff81003000 W weak_fn
ffffffff81004000 D some_data
ffffffff81005000 T _etext
ffffffffc0a00000 t ext4_readdir	[ext4]
ffffffffc0a01000 t ext4_file_read_iter	[ext4]
ffffffffc0b00000 T xfs_alloc	[xfs]
0000000000000000 T zeroed
KSYMS

# ---- perfmap
cp tests/unit/symfix/perf-sample.map $C/perfmap/sample.map
printf '7f0000001000 40 jit_one\n0x7f0000001040 0x20 jit two with spaces\n7f0000001000 10 jit_one_again\nbad line\n' \
	> $C/perfmap/jit.map

# ---- httpd
r=$C/httpd
printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nUser-Agent: curl/7.88.1\r\nAccept: */*\r\n\r\n' > $r/curl
printf 'GET /metrics HTTP/1.1\r\nHost: localhost:9464\r\nUser-Agent: Prometheus/2.42.0\r\nAccept: application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1\r\nAccept-Encoding: gzip\r\nX-Prometheus-Scrape-Timeout-Seconds: 10\r\n\r\n' > $r/prometheus
printf 'GET /report?seconds=5&format=json HTTP/1.1\r\nHost: [::1]:9464\r\nAccept: text/html,application/xhtml+xml\r\nAccept-Language: en-US,en;q=0.5\r\nConnection: keep-alive\r\n\r\n' > $r/browser
printf 'HEAD /healthz HTTP/1.0\r\n\r\n' > $r/head10
printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9464\r\nAuthorization: Bearer 3q2+7w==\r\nAccept: text/plain;version=0.0.4\r\n\r\n' > $r/token
printf 'GET /hold?seconds=%%33 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\nextra' > $r/held
printf 'GET /flame%%20graph?x=a+b%%26c HTTP/1.1\nHost: a\n\n' > $r/lf_only
printf 'POST /metrics HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello' > $r/post

# ---- json
if [ -n "${1:-}" ] && [ -x ./boundprof ]; then
	./boundprof report "$1" --json > "$tmp/report.json" &&
		cp "$tmp/report.json" $C/json/report.json
fi
printf '{"a":[1,-2.5e-3,18446744073709551615,-9223372036854775808,1e400x],"b":{"b":null}}' > $C/json/bad_number
printf '{"k":"\\u00e9\\ud83d\\ude00\\ud800","k":true,"":[[],{}],"n":0.1,"big":123456789012345678901234567890}' > $C/json/escapes
printf '[{"pid":1,"comm":{"hex":"ff00"},"threads":[{"tid":1,"wake_hist":[0,1,2]}]}]' > $C/json/state_like

# ---- ipc: requests as record, top and dump send them, and the agent's answers
r=$C/ipc
mkdir -p $r
printf 'boundprof/1 record pids=1,2 hz=99\n' > $r/record_pids
printf 'boundprof/1 record tree=1234\nstop\n' > $r/record_tree
printf 'boundprof/1 record seconds=5 hz=49\n' > $r/record_secs
printf 'boundprof/1 top cgroup=/user.slice/user-1000.slice\n' > $r/top_cgroup
printf 'boundprof/1 dump pids=42\n' > $r/dump
printf 'ok record hz=99\nnote a limit\nprofile 0\n' > $r/replies
printf 'error 2 bad request\n' > $r/error
