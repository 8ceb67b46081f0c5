#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Per-IO costs from scripts/bench/profile.sh: CPU time and kernel events
(context switches, interrupts, softirqs, IPIs) per IO, per target and run.

usage: profile-report.py OUT_DIR
"""
import json
import os
import sys

HZ = 100  # USER_HZ: /proc/stat ticks


def ios(path):
    with open(path) as f:
        job = json.load(f)["jobs"][0]
    return sum(job[d]["total_ios"] for d in ("read", "write")), \
        sum(job[d]["iops"] for d in ("read", "write"))


def main():
    out = sys.argv[1]
    rows = []
    keys = []
    for name in sorted(os.listdir(out)):
        if not name.endswith(".counters"):
            continue
        tgt, rep, _ = name.split(".")
        n, iops = ios(os.path.join(out, f"{tgt}.{rep}.fio.json"))
        cnt = {}
        with open(os.path.join(out, name)) as f:
            for line in f:
                k, v = line.split()
                cnt[k] = int(v)
                if k not in keys:
                    keys.append(k)
        # the IOs the device completed while the counters ran, start-up
        # included, when the counters have them (else fio's own count)
        rows.append((tgt, rep, cnt.pop("dev_ios", 0) or n, iops, cnt))
    print("per IO           " + "".join(f"{t + '.' + r:>12}" for t, r, *_ in rows))
    print("iops             " + "".join(f"{i:12.0f}" for _, _, _, i, _ in rows))
    for k in keys:
        if k.endswith("_busy_ticks"):
            # CPU time per IO, all CPUs and each one
            print(f"{k[:-6] + '_us':<17}" + "".join(
                f"{c.get(k, 0) * 1e6 / HZ / max(n, 1):12.1f}"
                for _, _, n, _, c in rows))
    for k in keys:
        if k.endswith("_ticks"):
            continue
        vals = [c.get(k, 0) / max(n, 1) for _, _, n, _, c in rows]
        if max(vals) < 0.005:
            continue
        print(f"{k:<17}" + "".join(f"{v:12.3f}" for v in vals))


if __name__ == "__main__":
    main()
