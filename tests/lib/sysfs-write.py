#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write one string to a sysfs file with a single write(2) and print the
outcome: OK, or the errno name (EINVAL, ENOENT...).  The string is given
Python-escaped, so NUL bytes and other controls can be written: \\x00.
With SYSFS_WRITE_FAIL_TASK=1 in the environment, the write(2) alone runs
with /proc/self/make-it-fail set: failslab and fail_page_alloc with their
task filter fail allocations in it, and in nothing else this does."""
import errno
import os
import sys

path = sys.argv[1]
data = sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1")
fail_task = os.environ.get("SYSFS_WRITE_FAIL_TASK") == "1"


def make_it_fail(on):
    with open("/proc/self/make-it-fail", "w") as f:
        f.write("1" if on else "0")


fd = os.open(path, os.O_WRONLY)
try:
    if fail_task:
        make_it_fail(True)
    try:
        n = os.write(fd, data)
    finally:
        if fail_task:
            make_it_fail(False)
    print("OK" if n == len(data) else "SHORT")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
finally:
    os.close(fd)
