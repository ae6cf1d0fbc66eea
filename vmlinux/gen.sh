#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# The header is committed so that builds do not depend on the build machine's
# kernel; CO-RE relocations adapt the compiled programs to the kernel they load on.
set -eu
arch=${1:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
btf=${BTF:-/sys/kernel/btf/vmlinux}
here=$(dirname "$0")
[ -r "$btf" ] || { echo "gen.sh: $btf not readable: this kernel has no BTF" >&2; exit 1; }
mkdir -p "$here/$arch"
bpftool btf dump file "$btf" format c > "$here/$arch/vmlinux.h.tmp"
mv "$here/$arch/vmlinux.h.tmp" "$here/$arch/vmlinux.h"
echo "wrote $here/$arch/vmlinux.h from $btf"
