#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# parse.py LOG: run.sh's log as one table per test, a column per system
# (jobs tagged "... rN" are repetitions of one column), each cell the median
# of the repetitions [min-max], and weft's median over MPICH's as the ratio.
import collections
import re
import statistics
import sys

RESULT = re.compile(r'^(\d+)\s+([\d.]+)(\s+[\d.]+)*\s*$')   # size, value, more columns
SINGLE = re.compile(r'^\s+()([\d.]+)\s*$')                  # osu_barrier: one value


def read(path):
    data = collections.defaultdict(lambda: collections.defaultdict(list))
    column = None
    for line in open(path):
        line = line.rstrip('\n')
        start = re.match(r'=== (?!end)(\S+) (.*?) \|', line)
        if start:
            test, rest = start.group(1), start.group(2)
            if test == 'c16':   # "c16 allreduce weft r1": the collective is part of the test
                words = rest.split()
                test, rest = 'c16 ' + words[0], ' '.join(words[1:])
            column = (test, re.sub(r'\s*r\d+$', '', rest))
            continue
        if line.startswith('=== end'):
            column = None
            continue
        if column:
            m = RESULT.match(line) or SINGLE.match(line)
            if m:
                data[column][int(m.group(1) or 0)].append(float(m.group(2)))
    return data


def main():
    data = read(sys.argv[1])
    for test in sorted({t for t, _ in data}):
        systems = sorted((s for t, s in data if t == test), key=lambda s: (s != 'weft', s != 'mpich', s))
        sizes = sorted({n for s in systems for n in data[(test, s)]})
        higher = test.startswith(('bw', 'bibw', 'mbw'))
        print(f'## {test} ({"MB/s, higher is better" if higher else "us, lower is better"}); ratio: weft / mpich')
        print('size'.ljust(9) + ''.join(s[:22].rjust(24) for s in systems) + '   ratio')
        for n in sizes:
            row, med = str(n).ljust(9), {}
            for s in systems:
                v = data[(test, s)].get(n, [])
                if not v:
                    row += '-'.rjust(24)
                    continue
                med[s] = statistics.median(v)
                cell = f'{med[s]:.2f} [{min(v):.1f}-{max(v):.1f}]' if len(v) > 1 else f'{v[0]:.2f}'
                row += cell.rjust(24)
            if med.get('mpich'):
                row += f'   {med.get("weft", float("nan")) / med["mpich"]:.2f}'
            print(row)
        print()


if __name__ == '__main__':
    main()
