#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Would `make test` find its tools on a fresh machine? Checked without one:
#
#   tests/fresh.sh [--full]          (make test-fresh [FULL=1])
#
# 1. clones the committed HEAD of this checkout into a temporary directory;
# 2. builds a PATH of symlinks to everything on the current PATH except the
#    test tools a fresh Debian 12 image lacks (HIDE below); Node.js and npm
#    stay visible, as on the machines we run on, where they come from
#    outside Debian and `apt-get install nodejs npm` fails;
# 3. puts first on that PATH a stand-in apt-get that logs its arguments,
#    runs the real `apt-get -s` (simulate: resolves the request, installs
#    nothing) and, when that succeeds, un-hides the commands the named
#    packages ship (dpkg -L), as a real install would have made them appear;
#    a request naming a package this machine does not have at all (a fresh
#    one: make test-kernels' qemu) is installed for real, as make test
#    would on it, and `apt-get update` passes through;
# 4. runs `make test-deps` in the clone (with --full: `.ci/run`, which runs
#    `make test`), then
#    checks that apt-get was asked for exactly the hidden tools' packages,
#    never for nodejs or npm, and that every hidden tool is found afterwards.
#
# The hidden tools are simulated when this machine has them from Debian
# (the stand-in un-hides what dpkg knows), installed when it has not.
# Uncommitted changes are not tested.
set -eu

src=$(cd "$(dirname "$0")/.." && pwd)
full=0
[ "${1:-}" = "--full" ] && full=1
HIDE="go chromium prometheus promtool stress-ng fio ruby curl eu-stack Rscript R"
WANT="stress-ng fio golang-go chromium prometheus ruby curl elfutils r-base-core"

# not under /tmp: a test hides /tmp behind a mount of its own, and this PATH with it
tmp=$(mktemp -d "${TMPDIR:-/var/tmp}/boundprof-fresh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
mkdir "$tmp/bin" "$tmp/fake"
# the tests run commands as nobody too: they must find them on this PATH
chmod 755 "$tmp" "$tmp/bin" "$tmp/fake"

if [ -n "$(git -C "$src" status --porcelain --untracked-files=no)" ]; then
	echo "fresh: note: uncommitted changes in $src are not part of the check" >&2
fi
rev=$(git -C "$src" rev-parse HEAD)
git clone -q --no-checkout "$src" "$tmp/src"
git -C "$tmp/src" checkout -q "$rev"
echo "fresh: clone of $(git -C "$src" log -1 --format='%h %s' "$rev" | cut -c1-70) in $tmp/src"

# the hidden PATH: first entry of each name wins, as on the real PATH
old_ifs=$IFS
IFS=:
for d in $PATH; do
	IFS=$old_ifs
	[ -d "$d" ] || continue
	for f in "$d"/*; do
		n=${f##*/}
		case " $HIDE " in *" $n "*) continue ;; esac
		[ -e "$tmp/bin/$n" ] || [ -L "$tmp/bin/$n" ] || ln -s "$f" "$tmp/bin/$n"
	done
done
IFS=$old_ifs

real_apt=$(command -v apt-get)
cat >"$tmp/fake/apt-get" <<EOF
#!/bin/sh
echo "apt-get \$*" >>"$tmp/apt-calls"
verb=
for a in "\$@"; do
	case "\$a" in -*) ;; *) verb=\$a; break ;; esac
done
case "\$verb" in
update) exec $real_apt "\$@" ;;	# package lists only, as on a fresh machine
download) exec $real_apt "\$@" ;;	# a .deb into the current directory: installs nothing
esac
# a package this machine lacks cannot be simulated into place: installed
missing=
if [ "\$verb" = install ]; then
	for p in "\$@"; do
		case "\$p" in -* | install) continue ;; esac
		dpkg-query -W -f='\${Status}' "\$p" 2>/dev/null | grep -q ' installed\$' ||
			missing="\$missing \$p"
	done
fi
if [ -n "\$missing" ]; then
	echo "stand-in: not on this machine:\$missing: installing for real"
	$real_apt "\$@" || exit \$?
else
	$real_apt -s "\$@" || exit \$?
fi
[ "\$verb" = install ] || exit 0
for p in "\$@"; do
	case "\$p" in -* | install) continue ;; esac
	dpkg -L "\$p" 2>/dev/null | while read -r f; do
		case "\$f" in
		/usr/bin/* | /usr/sbin/* | /bin/* | /sbin/*)
			[ -f "\$f" ] && ln -sf "\$f" "$tmp/bin/\${f##*/}" ;;
		esac
	done
done
exit 0
EOF
chmod +x "$tmp/fake/apt-get"
: >"$tmp/apt-calls"

P="$tmp/fake:$tmp/bin"
for t in $HIDE; do
	if PATH=$P command -v "$t" >/dev/null; then
		echo "fresh: FAIL: $t is not hidden" >&2
		exit 1
	fi
done
echo "fresh: hidden from PATH: $HIDE; node $(PATH=$P command -v node || echo -), npm $(PATH=$P command -v npm || echo -) stay"

target=test-deps
[ $full = 1 ] && target=test
# --full runs CI's own entry point, which runs make test
run="make $target"
[ $full = 1 ] && run="sh .ci/run"
echo "fresh: PATH=$P $run"
status=0
(cd "$tmp/src" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS PATH="$P" $run) || status=$?

echo "fresh: apt-get was called as:"
sed 's/^/    /' "$tmp/apt-calls"
log="$tmp/src/.output/apt-test.log"
if [ -s "$log" ]; then
	echo "fresh: what apt-get -s said (.output/apt-test.log, Inst lines and the last line):"
	grep -E '^Inst |newest version' "$log" | sed 's/^/    /' | head -40
	tail -1 "$log" | sed 's/^/    /'
fi
[ $status = 0 ] || { echo "fresh: FAIL: $run exited $status" >&2; exit 1; }

# test-deps asks first (the build's own packages are there): later asks
# are other stages' (make test-kernels' qemu on a machine without it)
asked=$(grep '^apt-get install' "$tmp/apt-calls" | head -1 | tr ' ' '\n' | grep -v '^-' |
	grep -vx 'apt-get\|install' | sort | tr '\n' ' ')
want=$(echo $WANT | tr ' ' '\n' | sort | tr '\n' ' ')
if [ "$asked" != "$want" ]; then
	echo "fresh: FAIL: apt-get was asked for '$asked', expected '$want'" >&2
	exit 1
fi
if grep -qE '^apt-get install.* (nodejs|npm)( |$)' "$tmp/apt-calls"; then
	echo "fresh: FAIL: apt-get was asked for nodejs or npm" >&2
	exit 1
fi
for t in $HIDE; do
	if ! PATH=$P command -v "$t" >/dev/null; then
		echo "fresh: FAIL: $t still missing after make $target" >&2
		exit 1
	fi
done
echo "fresh: ok: make $target asked apt-get only for $WANT, and found every tool afterwards"
