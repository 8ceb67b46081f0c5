#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn the raw results of scripts/bench/guest.sh into a table and JSON.

usage: report.py OUT_DIR JSON_FILE

OUT_DIR holds fio/<repeat>/<row>.<target>.json, wire/<target>.<kind>[.hist],
raw/*.txt (perftest), env and mem.  Prints the table and the bar of the
benchmark issue; writes everything to JSON_FILE.
"""
import json
import os
import re
import statistics
import sys

# rnbd2p: rnbd through a session of two paths (round-robin); file: rnbd
# serving an image file on tmpfs (the server's file IO mode).  Results of
# before them have none, and are reported without them.
TARGETS = ("local", "rnbd", "rnbd2p", "nvme", "file")
OPTIONAL = ("rnbd2p", "file")
RNBD = ("rnbd", "rnbd2p", "file")

# InfiniBand RC opcodes (BTH), as rxe sends them.
OPCODES = {
    0x00: "SEND_FIRST", 0x01: "SEND_MIDDLE", 0x02: "SEND_LAST",
    0x03: "SEND_LAST_IMM", 0x04: "SEND_ONLY", 0x05: "SEND_ONLY_IMM",
    0x06: "WRITE_FIRST", 0x07: "WRITE_MIDDLE", 0x08: "WRITE_LAST",
    0x09: "WRITE_LAST_IMM", 0x0a: "WRITE_ONLY", 0x0b: "WRITE_ONLY_IMM",
    0x0c: "READ_REQUEST", 0x0d: "READ_RESP_FIRST", 0x0e: "READ_RESP_MIDDLE",
    0x0f: "READ_RESP_LAST", 0x10: "READ_RESP_ONLY", 0x11: "ACK",
    0x12: "ATOMIC_ACK", 0x13: "CMP_SWAP", 0x14: "FETCH_ADD",
    0x16: "SEND_LAST_INV", 0x17: "SEND_ONLY_INV",
}
# Opcodes that start a message (a SEND, a WRITE or a READ request).
MSG_START = {0x00, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0c, 0x17}
HEARTBEAT = 0x05
READ_REQ = 0x0c


def kv_file(path):
    """Parse 'a=1 b=2' lines into a dict (numbers as int where possible)."""
    res = {}
    if not os.path.exists(path):
        return res
    with open(path) as f:
        for line in f:
            for tok in line.split():
                if "=" not in tok:
                    continue
                k, v = tok.split("=", 1)
                try:
                    res[k] = int(v)
                except ValueError:
                    res[k] = v
    return res


def fio_stats(path):
    with open(path) as f:
        data = json.load(f)
    job = data["jobs"][0]
    st = job["read"] if job["read"]["io_bytes"] else job["write"]
    clat = st["clat_ns"]
    return {
        "iops": st["iops"],
        "bw_mib": st["bw"] / 1024.0,
        "lat_mean_us": clat["mean"] / 1000.0,
        "lat_p99_us": clat.get("percentile", {}).get("99.000000", 0) / 1000.0,
    }


def summarize(values):
    return {"min": min(values), "median": statistics.median(values),
            "max": max(values)}


def counters_file(path):
    """Parse 'name value' lines (scripts/bench/targets.sh counters_delta)."""
    res = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) == 2:
                    res[p[0]] = int(p[1])
    return res


def insn_deltas(out):
    """Guest instructions (all vCPUs) executed during each fio run, from the
    insn-count plugin's marks (scripts/bench/run --insn): the guest logs
    which two marks bracket which run in insn-marks, the plugin the counts
    at each mark in ../insn.txt.  Keyed by the run's fio JSON path."""
    marks_path = os.path.join(out, "insn-marks")
    counts_path = os.path.join(out, "..", "insn.txt")
    if not os.path.exists(marks_path) or not os.path.exists(counts_path):
        return {}
    at = {}
    with open(counts_path) as f:
        for line in f:
            p = line.split()
            if len(p) > 3 and p[0] == "mark":
                at[int(p[1])] = sum(int(x) for x in p[3:])
    res = {}
    with open(marks_path) as f:
        for line in f:
            p = line.split()
            if len(p) == 3 and int(p[0]) in at and int(p[1]) in at:
                res[os.path.join(out, p[2])] = at[int(p[1])] - at[int(p[0])]
    return res


def targets_of(m):
    """The targets of TARGETS that every row of matrix @m has."""
    return tuple(t for t in TARGETS if all(t in r for r in m.values()))


def per_io(path, iops, cpus, insns=None):
    """CPU time (us) and kernel events per IO over a fio run, from the
    guest's counters around it: the busy share of all CPUs' time, and each
    event's count, divided by the IOs the device completed in between
    (dev_ios: ramp and start-up included, like the counts).  Without
    dev_ios (older results), rates over the window divided by fio's IOPS.
    /proc/stat ticks are USER_HZ (100 per second).  With @insns, the guest
    instructions the run executed, also per IO."""
    c = counters_file(path)
    busy, idle = c.get("cpu_busy_ticks", 0), c.get("cpu_idle_ticks", 0)
    if not busy + idle or not iops:
        return {}
    secs = (busy + idle) / (cpus * 100.0)
    ios = c.get("dev_ios") or secs * iops
    res = {"cpu_us_per_io": busy * 1e4 / ios}
    if insns is not None:
        res["kinsn_per_io"] = insns / ios / 1000.0
    for k in ("ctxt", "intr", "softirq_tasklet", "softirq_irq_poll",
              "rxe_pkts"):
        if k in c:
            res[k + "_per_io"] = c[k] / ios
    if c.get("rnbd_requests"):
        res["client_wrs_per_request"] = c["rnbd_wrs"] / c["rnbd_requests"]
    # a session of several paths: each path's share of the requests
    paths = [c[k] for k in sorted(c) if re.fullmatch(r"rnbd_path\d+_requests",
                                                     k)]
    if sum(paths):
        for i, v in enumerate(paths, 1):
            res[f"path{i}_request_share"] = v / sum(paths)
    return res


def matrix(out, cpus):
    rows = {}
    insn = insn_deltas(out)
    fio_dir = os.path.join(out, "fio")
    for rep in sorted(os.listdir(fio_dir), key=int):
        for name in sorted(os.listdir(os.path.join(fio_dir, rep))):
            if not name.endswith(".json"):
                continue
            row, tgt, _ = name.rsplit(".", 2)
            path = os.path.join(fio_dir, rep, name)
            st = fio_stats(path)
            st.update(per_io(path[:-len(".json")] + ".counters",
                             st["iops"], cpus, insn.get(path)))
            for k, v in st.items():
                rows.setdefault(row, {}).setdefault(tgt, {}).setdefault(
                    k, []).append(v)
    res = {}
    for row, tgts in rows.items():
        res[row] = {t: {k: summarize(v) for k, v in s.items()}
                    for t, s in tgts.items()}
        for t in TARGETS:
            if t not in res[row] and t not in OPTIONAL:
                sys.exit(f"report: row {row} has no result for {t}")
    targets = targets_of(res)
    for row in res:
        med = {t: res[row][t]["iops"]["median"] for t in targets}
        res[row]["rnbd/nvme"] = med["rnbd"] / med["nvme"]
        res[row]["rnbd/local"] = med["rnbd"] / med["local"]
        for t in ("rnbd2p", "file"):
            if t in targets:
                res[row][f"{t}/nvme"] = med[t] / med["nvme"]
                res[row][f"{t}/rnbd"] = med[t] / med["rnbd"]
        for key, what in (("cpu_us_per_io", "cpu"), ("kinsn_per_io", "insn")):
            if not all(key in res[row][t] for t in targets):
                continue
            for t in RNBD:
                if t in targets:
                    res[row][f"{what} {t}/nvme"] = (
                        res[row][t][key]["median"] /
                        res[row]["nvme"][key]["median"])
    # instructions per IO of a two-job row against its one-job row
    for row in res:
        one = row[:-len("-2j")]
        if (row.endswith("-2j") and "insn rnbd/nvme" in res[row] and
                "insn rnbd/nvme" in res.get(one, {})):
            res[row]["insn 2j/1j"] = {
                t: res[row][t]["kinsn_per_io"]["median"] /
                res[one][t]["kinsn_per_io"]["median"] for t in targets}
    return res


def hist_file(path):
    ops = {}
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for line in f:
            m = re.match(r"\{ op:\s+(\d+) \} hitcount:\s+(\d+)", line)
            if m:
                ops[int(m.group(1))] = int(m.group(2))
    return ops


def wire(out):
    res = {}
    wdir = os.path.join(out, "wire")
    if not os.path.isdir(wdir):
        return res
    for name in sorted(os.listdir(wdir)):
        if name.endswith(".hist"):
            continue
        tgt, kind = name.split(".", 1)
        c = kv_file(os.path.join(wdir, name))
        ios = c["ios"]
        ent = {"ios": ios, "pkts_sent_per_io": c["sent"] / ios,
               "pkts_rcvd_per_io": c["rcvd"] / ios}
        if tgt in RNBD:
            ent["client_wrs_per_io"] = c["wrs"] / ios
        paths = [c[k] for k in sorted(c) if re.fullmatch(r"path\d+", k)]
        if paths:
            ent["path_requests_per_io"] = [v / ios for v in paths]
        # the rxe counters of packets sent again or refused, in the last of
        # up to three windows
        if "retrans" in c:
            ent["retrans"] = c["retrans"]
            ent["tries"] = c["tries"]
        ops = hist_file(os.path.join(wdir, name + ".hist"))
        if ops is not None:
            ent["opcodes_per_io"] = {OPCODES.get(k, hex(k)): v / ios
                                     for k, v in sorted(ops.items())}
            # Heartbeats (zero-length SEND_ONLY_IMM, once a second each
            # way while an rnbd session is up, whatever the target) are
            # idle traffic; neither data path sends SEND_ONLY_IMM.
            ent["heartbeats_per_io"] = ops.get(HEARTBEAT, 0) / ios
            ent["messages_per_io"] = sum(v for k, v in ops.items()
                                         if k in MSG_START and
                                         k != HEARTBEAT) / ios
            ent["rdma_reads_per_io"] = ops.get(READ_REQ, 0) / ios
            ent["hist_total_matches_counter"] = sum(ops.values()) == c["sent"]
            # The histogram's packets less the heartbeats (each a
            # SEND_ONLY_IMM and its ACK): the IOs' own packets.  Not the
            # counter's: it is read outside the histogram's window, and
            # removing the trigger can take seconds on a loaded host, seconds
            # of heartbeats (more with more paths) the histogram never sees.
            ent["data_pkts_per_io"] = (sum(ops.values()) -
                                       2 * ops.get(HEARTBEAT, 0)) / ios
        res.setdefault(tgt, {})[kind] = ent
    return res


WIRE_KINDS = ("read-4k", "write-4k", "read-128k", "write-128k")


def wire_2p(w):
    """rnbd2p's wire cost per IO against rnbd's, kind by kind: the same
    packets (heartbeats left out: the two-path session has two, and the
    first session's runs beside it), messages, RDMA READs and client WRs.
    Without opcode histograms, the packet counters' (heartbeats in)."""
    res = {}
    for kind in WIRE_KINDS:
        a = w.get("rnbd", {}).get(kind)
        b = w.get("rnbd2p", {}).get(kind)
        if not a or not b:
            continue
        key = ("data_pkts_per_io"
               if "data_pkts_per_io" in a and "data_pkts_per_io" in b
               else "pkts_sent_per_io")
        if a.get("retrans") or b.get("retrans"):
            # packets sent again: the host's cost, not comparable
            res[kind] = {"pkts": key, "rnbd": a[key], "rnbd2p": b[key],
                         "same": None}
            continue
        same = round(a[key], 2) == round(b[key], 2)
        for k in ("messages_per_io", "rdma_reads_per_io",
                  "client_wrs_per_io"):
            if k in a and k in b:
                same = same and round(a[k], 2) == round(b[k], 2)
        res[kind] = {"pkts": key, "rnbd": a[key], "rnbd2p": b[key],
                     "same": same}
    return res


def perftest_line(path, size, header_word):
    """The result line of a perftest run, split in fields."""
    if not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith("#bytes") and header_word in line:
            for nxt in lines[i + 1:]:
                f = nxt.split()
                if f and f[0] == str(size):
                    return [float(x) for x in f]
    return None


def raw(out):
    """perftest: bw fields are bytes, iterations, peak, average, msg rate;
    latency fields bytes, iterations, min, max, typical, avg, stdev, p99."""
    res = {}
    for size in (4096, 131072):
        ent = {}
        bw = perftest_line(os.path.join(out, "raw", f"write_bw-{size}.txt"),
                           size, "BW average")
        if bw and len(bw) >= 5:
            ent["write_bw_mib"] = bw[3]
            ent["write_msg_rate_k"] = bw[4] * 1000
        for kind in ("write_lat", "send_lat"):
            lat = perftest_line(os.path.join(out, "raw",
                                             f"{kind}-{size}.txt"), size,
                                "t_avg")
            if lat and len(lat) >= 8:
                ent[kind + "_avg_us"] = lat[5]
                ent[kind + "_p99_us"] = lat[7]
        res[str(size)] = ent
    return res


def fmt_row(name, r, targets):
    parts = [f"{name:22}"]
    for t in targets:
        s = r[t]
        parts.append(f"{s['iops']['median']:9.0f} {s['bw_mib']['median']:7.1f}"
                     f" {s['lat_mean_us']['median']:7.0f}"
                     f" {s['lat_p99_us']['median']:7.0f}")
    ratios = f"{r['rnbd/nvme']:5.2f}"
    if "rnbd2p/nvme" in r:
        ratios += f"  {r['rnbd2p/nvme']:5.2f}"
    ratios += f" {r['rnbd/local']:5.2f}"
    if "file/nvme" in r:
        ratios += f"  {r['file/nvme']:5.2f}  {r['file/rnbd']:5.2f}"
    parts.append(ratios)
    return " |".join(parts)


def main():
    out, json_path = sys.argv[1], sys.argv[2]
    env = kv_file(os.path.join(out, "env"))
    mem = kv_file(os.path.join(out, "mem"))
    res = {"env": env, "matrix": matrix(out, env.get("cpus", 1)),
           "wire": wire(out),
           "raw": raw(out), "memory": mem}
    res["wire rnbd2p/rnbd"] = wire_2p(res["wire"])
    m = res["matrix"]
    targets = targets_of(m)
    two = "rnbd2p" in targets
    fil = "file" in targets
    reps = len(os.listdir(os.path.join(out, "fio")))

    clock = ("TCG"
             if not env.get("icount") else
             "TCG icount: the clock counts instructions, 8 ns each")
    print(f"\nrnbd benchmark: kernel {env.get('kernel')}, {env.get('cpus')}"
          f" vCPU(s) ({clock}), rxe MTU {env.get('mtu')}, {reps} repeat(s),"
          " medians")
    hdr = " |".join([f"{'row':22}"] + [f"{t:>9} {'MiB/s':>7} {'mean':>7}"
                                       f" {'p99':>7}" for t in targets]
                    + [("r/nvme 2p/nvme r/loc" if two else "r/nvme r/loc")
                       + (" f/nvme f/rnbd" if fil else "")])
    print(hdr)
    print("  (per target: IOPS, MiB/s, mean and p99 completion latency in us"
          + ("; rnbd2p: two paths,\n  round-robin; r/nvme rnbd/nvme,"
             " 2p/nvme rnbd2p/nvme, r/loc rnbd/local" if two else "")
          + ("; file: rnbd serving\n  an image file on tmpfs, f/nvme"
             " file/nvme, f/rnbd file/rnbd" if fil else "") + ")")
    for name in sorted(m):
        print(fmt_row(name, m[name], targets))
    if reps > 1:
        print("\nspread of IOPS across repeats (min/median/max):")
        for name in sorted(m):
            print(f"  {name:22} " + "  ".join(
                f"{t} {m[name][t]['iops']['min']:.0f}/"
                f"{m[name][t]['iops']['median']:.0f}/"
                f"{m[name][t]['iops']['max']:.0f}" for t in targets))

    cpu = [n for n in sorted(m) if "cpu rnbd/nvme" in m[n]]
    rnbd_t = tuple(t for t in RNBD if t in targets)
    if cpu:
        print("\nCPU time per IO, all vCPUs (us, medians; rnbd/nvme below 1"
              " is cheaper), context switches per IO (" + "/".join(targets)
              + "),\nRDMA packets per IO (" + "/".join(rnbd_t + ("nvme",))
              + ") and rnbd client WRs per request"
              + (" (rnbd/rnbd2p); rnbd2p's requests by path (%)"
                 if two else "") + ":")
        for name in cpu:
            med = {t: {k: v["median"] for k, v in m[name][t].items()}
                   for t in targets}
            line = (f"  {name:22} " + "  ".join(
                f"{t} {med[t]['cpu_us_per_io']:6.1f}" for t in targets)
                + "  " + " ".join(f"{t}/nvme {m[name][f'cpu {t}/nvme']:.2f}"
                                  for t in rnbd_t)
                + "  ctxt " + "/".join(f"{med[t].get('ctxt_per_io', 0):.2f}"
                                       for t in targets)
                + "  pkts " + "/".join(
                    f"{med[t].get('rxe_pkts_per_io', 0):.2f}"
                    for t in rnbd_t + ("nvme",))
                + "  WRs " + "/".join(
                    f"{med[t].get('client_wrs_per_request', 0):.2f}"
                    for t in rnbd_t))
            if two:
                shares = [med["rnbd2p"][k] for k in sorted(med["rnbd2p"])
                          if re.fullmatch(r"path\d+_request_share", k)]
                line += "  paths " + "/".join(f"{100 * v:.0f}"
                                              for v in shares)
            print(line)

    ins = [n for n in sorted(m) if "insn rnbd/nvme" in m[n]]
    if ins:
        print("\nguest instructions per IO, all vCPUs (thousands, medians;"
              " insn-count plugin: the\nsame whatever the host's speed),"
              " and 2-job/1-job QD32 (below 1: the second CPU\nmade each IO"
              " cheaper):")
        for name in ins:
            med = {t: m[name][t]["kinsn_per_io"]["median"] for t in targets}
            line = (f"  {name:22} " + "  ".join(
                f"{t} {med[t]:7.1f}" for t in targets)
                + "  " + " ".join(f"{t}/nvme {m[name][f'insn {t}/nvme']:.2f}"
                                  for t in rnbd_t))
            if "insn 2j/1j" in m[name]:
                line += "  2j/1j " + "/".join(
                    f"{m[name]['insn 2j/1j'][t]:.2f}"
                    for t in rnbd_t + ("nvme",)) + " (" + "/".join(
                        rnbd_t + ("nvme",)) + ")"
            print(line)

    w = res["wire"]
    if w:
        print("\nwire cost per IO (rxe loopback: every packet is sent and"
              " received once):")
        print(f"  {'kind':11} {'target':6} {'pkts':>7} {'msgs':>5}"
              f" {'reads':>5} {'WRs':>5}  opcodes")
        for tgt in ("rnbd", "rnbd2p", "nvme"):
            for kind in WIRE_KINDS:
                e = w.get(tgt, {}).get(kind)
                if not e:
                    continue
                ops = " ".join(f"{k}:{v:g}" for k, v in
                               e.get("opcodes_per_io", {}).items())
                if "path_requests_per_io" in e:
                    ops += "  (requests by path: " + "/".join(
                        f"{v:g}" for v in e["path_requests_per_io"]) + ")"
                if e.get("retrans"):
                    ops += (f"  ({e['retrans']} sent again or refused,"
                            f" {e['tries']} tries)")
                wrs = e.get("client_wrs_per_io")
                print(f"  {kind:11} {tgt:6} {e['pkts_sent_per_io']:7.2f}"
                      f" {e.get('messages_per_io', float('nan')):5.2f}"
                      f" {e.get('rdma_reads_per_io', float('nan')):5.2f}"
                      f" {wrs if wrs is not None else float('nan'):5.2f}"
                      f"  {ops}")
        w2 = res["wire rnbd2p/rnbd"]
        if w2:
            print("  rnbd/rnbd2p packets per IO less heartbeats (opcode"
                  " histogram less each SEND_ONLY_IMM\n  and its ACK), with"
                  " msgs, reads and WRs equal or not:\n    " + "  ".join(
                      f"{k} {v['rnbd']:.2f}/{v['rnbd2p']:.2f} " +
                      {True: "same", False: "DIFFERENT",
                       None: "(packets sent again)"}[v["same"]]
                      for k, v in w2.items()))

    rw = res["raw"]
    if rw.get("4096") or rw.get("131072"):
        print("\nraw verbs on the same rxe device (perftest) and rnbd/raw:")
        r4, r128 = rw.get("4096", {}), rw.get("131072", {})
        rnbd = {k: m[k]["rnbd"] for k in m}

        def ratio(a, b):
            return a / b if a and b else float("nan")
        if "randwrite-4k-qd32-2j" in rnbd and "write_msg_rate_k" in r4:
            v = rnbd["randwrite-4k-qd32-2j"]["iops"]["median"] / 1000
            print(f"  4k write rate: raw {r4['write_msg_rate_k']:.1f} k/s,"
                  f" rnbd QD32x2 {v:.1f} k/s,"
                  f" rnbd/raw {ratio(v, r4['write_msg_rate_k']):.2f}")
        if "write-128k-qd8" in rnbd and "write_bw_mib" in r128:
            v = rnbd["write-128k-qd8"]["bw_mib"]["median"]
            print(f"  128k write bandwidth: raw {r128['write_bw_mib']:.1f} MiB/s,"
                  f" rnbd {v:.1f} MiB/s,"
                  f" rnbd/raw {ratio(v, r128['write_bw_mib']):.2f}")
        if "read-128k-qd8" in rnbd and "write_bw_mib" in r128:
            v = rnbd["read-128k-qd8"]["bw_mib"]["median"]
            print(f"  128k read bandwidth: raw {r128['write_bw_mib']:.1f} MiB/s,"
                  f" rnbd {v:.1f} MiB/s,"
                  f" rnbd/raw {ratio(v, r128['write_bw_mib']):.2f}")
        for row, lat_key, what in (("randwrite-4k-qd1", "write_lat_avg_us",
                                    "4k write"),
                                   ("randread-4k-qd1", "write_lat_avg_us",
                                    "4k read")):
            if row in rnbd and lat_key in r4:
                rtt = 2 * r4[lat_key]
                v = rnbd[row]["lat_mean_us"]["median"]
                print(f"  {what} QD1 latency: raw round trip (2 x"
                      f" ib_write_lat) {rtt:.0f} us, rnbd {v:.0f} us,"
                      f" raw/rnbd {ratio(rtt, v):.2f}")
        for size, e in rw.items():
            print(f"  raw {size} B: " + ", ".join(f"{k} {v:.1f}"
                                                   for k, v in e.items()))

    if mem:
        print("\nmemory:")
        if "server_chunks" in mem:
            pinned = mem["server_chunks"] * mem["server_chunk_bytes"]
            res["memory"]["server_pinned_per_session_kib"] = pinned // 1024
            print(f"  server, pinned per session: {mem['server_chunks']}"
                  f" chunks x {mem['server_chunk_bytes']} B ="
                  f" {pinned // 1024} KiB")
        if "server_chunks" in mem and mem.get("rnbd2p_server_opens"):
            n = mem["rnbd2p_server_opens"]
            pinned = n * mem["server_chunks"] * mem["server_chunk_bytes"]
            res["memory"]["rnbd2p_server_pinned_kib"] = pinned // 1024
            print(f"  server, pinned by rnbd2p's session ({n} paths, chunks"
                  f" per path): {pinned // 1024} KiB")
        for k in ("rnbd_session_and_device_kib", "rnbd_extra_device_kib",
                  "rnbd2p_session_and_device_kib",
                  "nvme_connection_and_device_kib"):
            if k in mem:
                what = k.replace('_kib', '').replace('_', ' ')
                if k.startswith("rnbd2p"):
                    what = (f"rnbd2p session ({mem.get('rnbd2p_paths')} paths,"
                            " modules loaded) and device")
                print(f"  {what}: {mem[k]} KiB (MemAvailable drop)")

    bar = check_bar(res)
    res["bar"] = bar
    print("\nbar:")
    for item in bar["items"]:
        print(f"  [{'ok' if item['ok'] else 'NOT MET'}] {item['what']}")
    with open(json_path, "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
    print(f"\nwritten: {json_path}")


def check_bar(res):
    m, w = res["matrix"], res["wire"]
    items = []
    low = [k for k in sorted(m) if m[k]["rnbd/nvme"] < 1.0]
    items.append({"what": "rnbd/nvme >= 1.0 on every row" +
                  (f" (below: {', '.join(low)})" if low else ""),
                  "ok": not low})
    for kind in ("write-4k", "write-128k"):
        e = w.get("rnbd", {}).get(kind, {})
        ok = e.get("messages_per_io") == 2 and e.get("rdma_reads_per_io") == 0
        items.append({"what": f"rnbd {kind}: exactly 2 messages, no RDMA READ"
                      f" (measured {e.get('messages_per_io')} messages,"
                      f" {e.get('rdma_reads_per_io')} reads)", "ok": ok})
    w2 = res.get("wire rnbd2p/rnbd")
    if w2:
        diff = [k for k, v in w2.items() if v["same"] is False]
        again = [k for k, v in w2.items() if v["same"] is None]
        items.append({"what": "rnbd2p (two paths) wire cost per IO = rnbd's:"
                      " packets less heartbeats, messages, RDMA READs, WRs"
                      " (" + ", ".join(f"{v['rnbd2p']:.2f}"
                                       for v in w2.values()) + ")"
                      + (f" (differ: {', '.join(diff)})" if diff else "")
                      + (f" (not compared, packets sent again: "
                         f"{', '.join(again)})" if again else ""),
                      "ok": not diff})
    a = w.get("rnbd", {}).get("read-4k", {}).get("messages_per_io")
    b = w.get("nvme", {}).get("read-4k", {}).get("messages_per_io")
    items.append({"what": f"4k read messages: rnbd {a} <= nvme {b}",
                  "ok": a is not None and b is not None and a <= b})
    for kind in ("randread", "randwrite"):
        one, two = f"{kind}-4k-qd32", f"{kind}-4k-qd32-2j"
        if one not in m or two not in m:
            continue
        sc = {t: m[two][t]["iops"]["median"] / m[one][t]["iops"]["median"]
              for t in ("rnbd", "nvme")}
        items.append({"what": f"{kind} QD32 2-job/1-job scaling: rnbd"
                      f" {sc['rnbd']:.2f} >= nvme {sc['nvme']:.2f}",
                      "ok": sc["rnbd"] >= sc["nvme"]})
    return {"met": all(i["ok"] for i in items), "items": items}


if __name__ == "__main__":
    main()
