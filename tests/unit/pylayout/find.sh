#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The CPython 3 headers to check the layout table against, one "NAME DIR"
# a line: pyenv's versions ($PYENV_ROOT, default /root/.pyenv) and
# Debian's python3.X (its headers come from libpython3.X-dev, which the
# build installs where the interpreter is installed).
root=${PYENV_ROOT:-/root/.pyenv}
for d in "$root"/versions/3.*; do
	[ -d "$d" ] || continue
	v=${d##*/}
	for inc in "$d"/include/python3.*; do
		[ -f "$inc/Python.h" ] && echo "$v $inc"
	done
done
for py in /usr/bin/python3.[0-9] /usr/bin/python3.[0-9][0-9]; do
	[ -x "$py" ] || continue
	v=${py##*/python}
	echo "$v-debian /usr/include/python$v"
done
