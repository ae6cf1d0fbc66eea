# SPDX-License-Identifier: GPL-2.0
"""
Compare boundprof's user stacks with perf's (`perf record --call-graph
dwarf`) for one program recorded in the same run (bench/unwind.sh):

  completeness   share of the program's samples whose user stack reaches
                 its thread's entry (_start, or the ELF entry point of a
                 stripped binary, clone/clone3/start_thread), for each tool
  shares         inclusive share of each of the functions on perf's stacks
                 most often (below the entry chain), in both

usage: unwind_compare.py COMM BOUNDPROF.folded PERF_SCRIPT.txt [LABEL]
Prints one line per measure; the last is "max diff N.N points".
"""
import re
import subprocess
import sys

ENTRY = re.compile(r'^(_start|__clone3?|clone3?|start_thread|__GI___clone3?)$')
LINE_SUFFIX = re.compile(r' \([^()]*:[0-9]+\)$')
fdes = {}


def entry_offset(path):
    """the ELF entry point of path, as boundprof writes it for a stripped file"""
    try:
        out = subprocess.run(['readelf', '-h', path], capture_output=True, text=True).stdout
    except OSError:
        return None
    m = re.search(r'Entry point address:\s+0x([0-9a-f]+)', out)
    return int(m.group(1), 16) if m else None


def fde_ranges(path):
    """the FDE ranges of path (readelf), to name perf's [unknown] like boundprof"""
    if path not in fdes:
        r = []
        try:
            out = subprocess.run(['readelf', '--debug-dump=frames', path],
                                 capture_output=True, text=True).stdout
            for m in re.finditer(r'FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)', out):
                r.append((int(m.group(1), 16), int(m.group(2), 16)))
        except OSError:
            pass
        r.sort()
        fdes[path] = r
    return fdes[path]


loads = {}


def file_to_vaddr(path, off):
    """perf prints a file offset for a frame in a DSO; FDEs are by vaddr"""
    if path not in loads:
        r = []
        try:
            out = subprocess.run(['readelf', '-lW', path], capture_output=True, text=True).stdout
            for m in re.finditer(r'LOAD\s+0x([0-9a-f]+) 0x([0-9a-f]+) \S+ 0x([0-9a-f]+)', out):
                r.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)))
        except OSError:
            pass
        loads[path] = r
    for o, v, n in loads[path]:
        if o <= off < o + n:
            return off - o + v
    return off


def bp_name(label):
    return LINE_SUFFIX.sub('', label)


def perf_name(addr, sym, dso):
    base = dso.rsplit('/', 1)[-1]
    if sym == '[unknown]':
        addr = file_to_vaddr(dso, addr)
        for s, e in fde_ranges(dso):
            if s <= addr < e:
                return '%s+0x%x' % (base, s)
        return '%s+0x%x' % (base, addr)
    sym = re.sub(r'\+0x[0-9a-f]+$', '', sym)
    return sym.split('@')[0]


def read_folded(path, comm):
    samples = []
    with open(path) as f:
        for line in f:
            line = line.rstrip('\n')
            stack, _, count = line.rpartition(' ')
            frames = stack.split(';')
            if not count.isdigit() or frames[0] != comm:
                continue
            user = [bp_name(x) for x in frames[1:] if not x.endswith('_[k]')]
            samples.append((user, int(count)))
    return samples


def read_perf(path, comm):
    samples, cur, keep = [], [], False
    with open(path, errors='replace') as f:
        for line in f:
            if not line.strip():
                if keep and cur:
                    samples.append((cur[::-1], 1))
                cur, keep = [], False
                continue
            if not line[0].isspace():
                keep = line.split()[0] == comm
                continue
            m = re.match(r'\s+([0-9a-f]+) (.*) \((.*)\)$', line.rstrip('\n'))
            if not m or m.group(3) == '[kernel.kallsyms]':
                continue
            cur.append(perf_name(int(m.group(1), 16), m.group(2), m.group(3)))
    if keep and cur:
        samples.append((cur[::-1], 1))
    return samples


def whole(frames, entries):
    return bool(frames) and frames[0] != '[truncated]' and (
        ENTRY.match(frames[0]) is not None or frames[0] in entries)


def main():
    comm, folded, script = sys.argv[1:4]
    label = sys.argv[4] if len(sys.argv) > 4 else comm
    bp, pf = read_folded(folded, comm), read_perf(script, comm)
    # a stripped binary's _start is its entry point, "gzip+0x3df0"
    entries = set()
    with open(script, errors='replace') as f:
        paths = set(re.findall(r'\((/[^)]*)\)\n', f.read()))
    for path in paths:
        off = entry_offset(path)
        if off is not None:
            entries.add('%s+0x%x' % (path.rsplit('/', 1)[-1], off))
    nbp, npf = sum(c for _, c in bp), sum(c for _, c in pf)
    if not nbp or not npf:
        print('%s: no samples (boundprof %d, perf %d)' % (label, nbp, npf))
        return 1
    cbp = sum(c for f, c in bp if whole(f, entries)) / nbp
    cpf = sum(c for f, c in pf if whole(f, entries)) / npf
    print('%s: %d boundprof samples, %d perf samples' % (label, nbp, npf))
    print('%s: completeness boundprof %.1f%%, perf %.1f%%' % (label, 100 * cbp, 100 * cpf))

    def shares(samples, n):
        inc = {}
        for frames, c in samples:
            for name in set(frames):
                inc[name] = inc.get(name, 0) + c
        return {k: v / n for k, v in inc.items()}

    sbp, spf = shares(bp, nbp), shares(pf, npf)
    # the functions perf puts on most stacks, below the entry chain (~100% in both)
    top = [k for k, v in sorted(spf.items(), key=lambda kv: -kv[1])
           if v < 0.97 and k and k != '[truncated]'][:8]
    worst, compared = 0.0, 0
    for k in top:
        if k not in sbp:
            # an alias (perf: __w_log1p, cfree; boundprof: log1p, free), not a miss
            print('%s:   %-48.48s perf %5.1f%%, named otherwise by boundprof' %
                  (label, k, 100 * spf[k]))
            continue
        d = 100 * (sbp[k] - spf[k])
        worst = max(worst, abs(d))
        compared += 1
        print('%s:   %-48.48s boundprof %5.1f%%  perf %5.1f%%  (%+.1f)' %
              (label, k, 100 * sbp[k], 100 * spf[k], d))
    print('%s: inclusive shares within %.1f points of perf (%d functions)' %
          (label, worst, compared))
    return 0


if __name__ == '__main__':
    sys.exit(main())
