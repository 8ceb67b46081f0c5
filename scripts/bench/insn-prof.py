#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Guest instructions per IO by symbol, from scripts/bench/run --insn-prof.

usage: insn-prof.py OUT [--top N] [--diff A B] [--repeat K]

OUT is the bench job's out directory (.build/bench/out).  The insn-count
plugin wrote, at each mark, the instructions every translation block
executed since the previous mark (../insn-prof.txt); the guest logged which
marks bracket which fio run (insn-marks) and its /proc/kallsyms per target
(kallsyms.TGT).  Prints, per run, the symbols that executed the most
instructions per IO and, by module, where the instructions went.  With
--diff A B (each ROW or ROW:TARGET), which symbols cost more or less per
IO in B than in A: a two-job row against its one-job row on every target,
or rnbd against nvme on one row.  Counts are whole
translation blocks, attributed to the symbol a block starts in.
"""
import bisect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import report  # noqa: E402


class Symbols:
    """Text symbols of one /proc/kallsyms, by address."""

    def __init__(self, path):
        syms = []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3 or p[1] not in "tTwW":
                    continue
                mod = p[3].strip("[]") if len(p) > 3 else "vmlinux"
                syms.append((int(p[0], 16), p[2], mod))
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def lookup(self, addr):
        if addr < 0xffff800000000000:
            return "[user]", "user"
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0:
            return "[unknown]", "unknown"
        return self.syms[i][1], self.syms[i][2]


def prof_sections(path):
    """{mark seq: {address: instructions since the previous mark}}"""
    res, cur = {}, None
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) == 2 and p[0] == "mark":
                cur = res.setdefault(int(p[1]), {})
            elif len(p) == 2 and cur is not None:
                a = int(p[0], 16)
                cur[a] = cur.get(a, 0) + int(p[1])
    return res


def runs(out):
    """{(row, target, repeat): (per-IO scale, {symbol: insns}, {module:
    insns})} for every fio run the profile covers."""
    sections = prof_sections(os.path.join(out, "..", "insn-prof.txt"))
    cpus = report.kv_file(os.path.join(out, "env")).get("cpus", 1)
    syms, res = {}, {}
    with open(os.path.join(out, "insn-marks")) as f:
        for line in f:
            p = line.split()
            if len(p) != 3 or int(p[1]) not in sections:
                continue
            rep, name = p[2].split("/")[-2:]
            row, tgt, _ = name.rsplit(".", 2)
            path = os.path.join(out, p[2])
            blocks = sections[int(p[1])]
            total = sum(blocks.values())
            st = report.fio_stats(path)
            pio = report.per_io(path[:-len(".json")] + ".counters",
                                st["iops"], cpus, total)
            if not total or "kinsn_per_io" not in pio:
                continue
            scale = pio["kinsn_per_io"] * 1000.0 / total
            if tgt not in syms:
                syms[tgt] = Symbols(os.path.join(out, "kallsyms." + tgt))
            by_sym, by_mod = {}, {}
            for a, n in blocks.items():
                s, m = syms[tgt].lookup(a)
                by_sym[s] = by_sym.get(s, 0) + n * scale
                by_mod[m] = by_mod.get(m, 0) + n * scale
            res[(row, tgt, rep)] = (by_sym, by_mod)
    return res


def show(res, top):
    for (row, tgt, rep), (by_sym, by_mod) in sorted(res.items()):
        total = sum(by_sym.values())
        print(f"== {row} on {tgt} (repeat {rep}): {total:.0f} instructions"
              " per IO")
        mods = sorted(by_mod.items(), key=lambda x: -x[1])
        print("   by module: " + ", ".join(
            f"{m} {n:.0f}" for m, n in mods if n >= total / 200))
        for s, n in sorted(by_sym.items(), key=lambda x: -x[1])[:top]:
            print(f"   {n:9.0f} {100.0 * n / total:5.1f}%  {s}")


def diff_one(title, a, b, top):
    ta, tb = sum(a[0].values()), sum(b[0].values())
    print(f"== {title}: {ta:.0f} -> {tb:.0f} instructions per IO"
          f" ({tb - ta:+.0f})")
    mods = sorted(set(a[1]) | set(b[1]),
                  key=lambda m: -abs(b[1].get(m, 0) - a[1].get(m, 0)))
    print("   by module: " + ", ".join(
        f"{m} {a[1].get(m, 0):.0f}->{b[1].get(m, 0):.0f}" for m in mods[:8]))
    syms = sorted(set(a[0]) | set(b[0]),
                  key=lambda s: -abs(b[0].get(s, 0) - a[0].get(s, 0)))
    for s in syms[:top]:
        na, nb = a[0].get(s, 0), b[0].get(s, 0)
        print(f"   {na:9.0f} {nb:9.0f} {nb - na:+9.0f}  {s}")


def diff(res, run_a, run_b, rep, top):
    """Compare ROW[:TARGET] A with B: the named targets, or every target
    both rows ran on."""
    (row_a, _, tgt_a), (row_b, _, tgt_b) = (run_a.partition(":"),
                                            run_b.partition(":"))
    tgts = [(tgt_a, tgt_b)] if tgt_a and tgt_b else [
        (t, t) for t in sorted({k[1] for k in res})]
    for ta, tb in tgts:
        a, b = res.get((row_a, ta, rep)), res.get((row_b, tb, rep))
        if a and b:
            diff_one(f"{row_a} on {ta} -> {row_b} on {tb}", a, b, top)


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__.split("\n\n")[1])
    out, top, rep, pair = argv[0], 25, "1", None
    args = argv[1:]
    while args:
        if args[0] == "--top" and len(args) > 1:
            top, args = int(args[1]), args[2:]
        elif args[0] == "--repeat" and len(args) > 1:
            rep, args = args[1], args[2:]
        elif args[0] == "--diff" and len(args) > 2:
            pair, args = (args[1], args[2]), args[3:]
        else:
            sys.exit(__doc__.split("\n\n")[1])
    res = runs(out)
    if not res:
        sys.exit("insn-prof: no profiled run in " + out)
    if pair:
        diff(res, pair[0], pair[1], rep, top)
    else:
        show(res, top)


if __name__ == "__main__":
    main(sys.argv[1:])
