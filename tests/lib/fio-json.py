#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Check the JSON report of a fio write+verify job (fio_mp_start in
guest-fio.sh): usage: fio-json.py FILE MAX_LAT_S.  Prints one line per job
(writes, reads, errors, slowest request) and fails if a job reported an
error, wrote nothing, read back fewer blocks than it wrote (the verify
pass), or a request took longer than MAX_LAT_S seconds (submission to
completion, reads or writes)."""
import json
import sys

path, max_lat_s = sys.argv[1], float(sys.argv[2])
try:
    text = open(path, encoding="utf-8", errors="replace").read()
except OSError as e:
    print(f"fio-json: {path}: {e}")
    sys.exit(1)
# fio may put a warning line or two before the JSON
start = text.find("{")
try:
    report, _ = json.JSONDecoder().raw_decode(text[start:]) if start >= 0 else (None, 0)
except ValueError as e:
    report = None
    err = e
if not report or not report.get("jobs"):
    print(f"fio-json: no fio report in {path}" + (f" ({err})" if report is None and start >= 0 else ""))
    print(text[-2000:])
    sys.exit(1)
if text[:start].strip():
    print("fio said: " + text[:start].strip())
ok = True
for job in report["jobs"]:
    w, r = job["write"], job["read"]
    lat = max(w["lat_ns"]["max"], r["lat_ns"]["max"]) / 1e9
    print(f"fio {job['jobname']}: {w['total_ios']} writes, {r['total_ios']} reads "
          f"(verify), error {job['error']}, slowest request {lat:.3f} s "
          f"(write {w['lat_ns']['max'] / 1e9:.3f}, read {r['lat_ns']['max'] / 1e9:.3f})")
    if job["error"]:
        print(f"FAIL: fio job {job['jobname']}: error {job['error']}")
        ok = False
    if w["total_ios"] == 0:
        print(f"FAIL: fio job {job['jobname']} wrote nothing")
        ok = False
    if r["total_ios"] < w["total_ios"]:
        print(f"FAIL: fio job {job['jobname']} verified {r['total_ios']} of {w['total_ios']} writes")
        ok = False
    if lat > max_lat_s:
        print(f"FAIL: a request took {lat:.3f} s, more than {max_lat_s:g} s: IO stalled")
        ok = False
sys.exit(0 if ok else 1)
