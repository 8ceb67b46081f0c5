#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Pick our leaks out of a kmemleak report.

usage: kmemleak-ours.py REPORT LOADS [SCAN_UPTIME]

REPORT is what /sys/kernel/debug/kmemleak printed.  LOADS has, for every
load of one of our modules, a line "load NAME 0xBASE SIZE UPTIME KO" (KO
is the module file, "-" if unknown) followed by "sect SECTION 0xADDRESS"
lines, one per section of the loaded module (tests/lib/guest-checks.sh,
mod_range_record); older files with bare "NAME 0xBASE SIZE" lines are
read too.  SCAN_UPTIME is /proc/uptime when the report was read.

An unreferenced object is ours when a frame of its allocation backtrace
names one of our modules ("[rnbd_...]") or, once the module is gone and
the frame prints as a bare address, lies in the memory of one of its
loads.  Modules load at the same addresses again and again, so a bare
address is pinned on the load that was in place when the object was
allocated (its age in the report, against SCAN_UPTIME), and symbolized
from that module file's symbol table and the load's section addresses.
Prints those objects whole, each bare frame followed by its symbol, with
the module each was pinned on, and exits 1 if there is any; 0 otherwise.
"""
import re
import subprocess
import sys

OURS = re.compile(r'\[(rnbd_\w+)\]\s*$')
BARE = re.compile(r'\]\s+0x([0-9a-f]+)\s*$')
AGE = re.compile(r'\(age (\d+)\.(\d+)s\)')
SYM = re.compile(r'^([0-9a-f]+)\s.{7}\s(\S+)\s+([0-9a-f]+)\s+(\S+)$')


class Load:
    def __init__(self, name, base, size, t, ko):
        self.name = name
        self.lo = base
        self.hi = base + size
        self.t = t
        self.ko = ko
        self.sects = {}


def read_loads(path):
    loads = []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        return loads
    for line in lines:
        p = line.split()
        if len(p) == 6 and p[0] == 'load':
            loads.append(Load(p[1], int(p[2], 16), int(p[3]), float(p[4]),
                              None if p[5] == '-' else p[5]))
        elif len(p) == 3 and p[0] == 'sect' and loads:
            loads[-1].sects[p[1]] = int(p[2], 16)
        elif len(p) == 3 and p[0] not in ('load', 'sect'):
            loads.append(Load(p[0], int(p[1], 16), int(p[2]), None, None))
    return loads


_symtabs = {}


def symtab(ko):
    """Function symbols of a module file: {section: [(value, size, name)]}."""
    if ko in _symtabs:
        return _symtabs[ko]
    tab = {}
    try:
        out = subprocess.run(['objdump', '-t', ko], capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        out = ''
    for line in out.splitlines():
        m = SYM.match(line)
        if m and ' F ' in line:
            tab.setdefault(m.group(2), []).append(
                (int(m.group(1), 16), int(m.group(3), 16), m.group(4)))
    _symtabs[ko] = tab
    return tab


def symbolize(load, addr):
    if not load.ko or not load.sects:
        return None
    tab = symtab(load.ko)
    for sect, base in load.sects.items():
        for value, size, name in tab.get(sect, ()):
            if base + value <= addr < base + value + max(size, 1):
                return '%s+0x%x/0x%x' % (name, addr - base - value, size)
    return None


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


def alloc_time(rec, scan):
    if scan is None:
        return None
    for line in rec:
        m = AGE.search(line)
        if m:
            return scan - int(m.group(1)) - int(m.group(2)) / 1000.0
    return None


def load_at(loads, addr, t):
    """The load that held @addr at time @t (the latest one if unknown)."""
    best = None
    for ld in loads:
        if not ld.lo <= addr < ld.hi:
            continue
        # one second of slack: /proc/uptime and jiffies are not in step
        if t is not None and ld.t is not None and ld.t > t + 1:
            continue
        best = ld
    return best


def examine(rec, loads, scan):
    """Return (owner, annotated lines) or (None, rec)."""
    who = None
    t = alloc_time(rec, scan)
    out = []
    for line in rec:
        out.append(line)
        m = OURS.search(line)
        if m:
            who = who or m.group(1)
            continue
        m = BARE.search(line)
        if not m:
            continue
        ld = load_at(loads, int(m.group(1), 16), t)
        if not ld:
            continue
        who = who or ld.name + ' (unloaded)'
        sym = symbolize(ld, int(m.group(1), 16))
        out.append('      = %s [%s, unloaded]' % (sym or '?', ld.name))
    return who, out


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1], errors='replace') as f:
        text = f.read()
    loads = read_loads(sys.argv[2])
    scan = float(sys.argv[3]) if len(sys.argv) == 4 else None
    found = 0
    for rec in records(text):
        who, lines = examine(rec, loads, scan)
        if who:
            found += 1
            print('leak in %s:' % who)
            print('\n'.join('  ' + line for line in lines))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main())
