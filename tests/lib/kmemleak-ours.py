#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Pick our leaks out of a kmemleak report.

usage: kmemleak-ours.py REPORT RANGES

REPORT is what /sys/kernel/debug/kmemleak printed; RANGES has a line
"NAME 0xADDRESS SIZE" for every load of one of our modules (from
/proc/modules).  An unreferenced object is ours when a frame of its
allocation backtrace names one of our modules ("[rnbd_...]") or, once the
module is gone and the frame prints as a bare address, lies in one of the
ranges.  Prints those objects whole, with the module each was pinned on,
and exits 1 if there is any; 0 otherwise.
"""
import re
import sys

OURS = re.compile(r'\[(rnbd_\w+)\]\s*$')
BARE = re.compile(r'\]\s+0x([0-9a-f]+)\s*$')


def load_ranges(path):
    ranges = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3:
                    base = int(parts[1], 16)
                    ranges.append((parts[0], base, base + int(parts[2])))
    except FileNotFoundError:
        pass
    return ranges


def records(text):
    rec = []
    for line in text.splitlines():
        if line.startswith('unreferenced object') and rec:
            yield rec
            rec = []
        if line.strip():
            rec.append(line)
    if rec:
        yield rec


def owner(rec, ranges):
    for line in rec:
        m = OURS.search(line)
        if m:
            return m.group(1)
        m = BARE.search(line)
        if m:
            addr = int(m.group(1), 16)
            for name, lo, hi in ranges:
                if lo <= addr < hi:
                    return name + ' (unloaded)'
    return None


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], errors='replace') as f:
        text = f.read()
    ranges = load_ranges(sys.argv[2])
    found = 0
    for rec in records(text):
        who = owner(rec, ranges)
        if who:
            found += 1
            print('leak in %s:' % who)
            print('\n'.join('  ' + line for line in rec))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
