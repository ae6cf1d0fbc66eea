# SPDX-License-Identifier: GPL-2.0
"""A fixed amount of pure-Python work DEPTH frames deep, for bench/python.sh:
prints its own wall time (time.perf_counter) when done, so interpreter start
and exit are left out. usage: pywork.py MILLION_ITERATIONS [DEPTH] [--wait]
With --wait it prints "ready" and reads a line from stdin before it starts
(for attaching with -p)."""
import sys
import time


def work(n):
    x = 0
    for i in range(n): x = (x + i * i) % 1000003
    return x


def deep(n, d):
    if d <= 0:
        return work(n)
    return deep(n, d - 1)


def main():
    n = int(float(sys.argv[1]) * 1000000)
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if "--wait" in sys.argv:
        print("ready", flush=True)
        sys.stdin.readline()
    t0 = time.perf_counter()
    deep(n, depth)
    print("%.4f" % (time.perf_counter() - t0), flush=True)


main()
