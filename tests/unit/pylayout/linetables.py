# SPDX-License-Identifier: GPL-2.0
"""Print the line tables of a set of code objects with the line of every
instruction as this interpreter itself computes it, for test_python.c to
decode and compare. One code object a line:

    MINOR FIRSTLINENO TABLE_HEX IDX:LINE IDX:LINE ...

IDX in code units (2 bytes), LINE 0 where the interpreter gives none.
"""
import dis
import sys

SOURCE = '''
def simple(a, b):
    c = a + b
    return c * 2

def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            total += i
        elif i % 3 == 1:
            total -= 1
        else:
            continue
    while total > 100:
        total //= 2
    return total

def multiline(x):
    y = (x +
         1 +
         2)
    z = [i
         for i in range(y)
         if i % 2]
    return sum(z,
               0)

def handlers(x):
    try:
        return 1 / x
    except ZeroDivisionError:
        return None
    finally:
        x = 0

class Klass:
    def method(self, v):
        return lambda w: (v,
                          w)

def far(x):
    x += 1
''' + '\n' * 300 + '''    x += 2
''' + '\n' * 5000 + '''    return x

def long_body(x):
''' + ''.join('    x = x * %d + %d\n' % (i, i) for i in range(400)) + '''    return x

def backwards(x):
    return (x
            if x else
            -x)
'''


def lines_of(code):
    n = len(code.co_code) // 2
    out = [0] * n
    if hasattr(code, "co_lines"):
        for start, end, line in code.co_lines():
            for off in range(start, end, 2):
                if off // 2 < n:
                    out[off // 2] = line or 0
    else:
        starts = list(dis.findlinestarts(code))
        k = 0
        line = code.co_firstlineno
        for idx in range(n):
            while k < len(starts) and starts[k][0] <= idx * 2:
                line = starts[k][1]
                k += 1
            out[idx] = line
    return out


def walk(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_code"):
            yield from walk(c)


def main():
    top = compile(SOURCE, "linetables_sample.py", "exec")
    minor = sys.version_info[1]
    for code in walk(top):
        table = code.co_linetable if minor >= 10 else code.co_lnotab
        lines = lines_of(code)
        pairs = " ".join("%d:%d" % (i, l) for i, l in enumerate(lines))
        print(minor, code.co_firstlineno, table.hex() or "-", pairs)


main()
