#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""fuse-hang.py MOUNTPOINT: mount a FUSE file system that never answers.

Opens /dev/fuse, mounts it on MOUNTPOINT and never reads a request: the
kernel's FUSE_INIT stays unanswered, so every lookup below MOUNTPOINT
waits (killable only) until this process ends.  Its end closes /dev/fuse,
which aborts the connection: the waiting lookups fail with ENOTCONN, and
the mount is left for umount.  Prints "mounted" once the mount exists.
"""
import ctypes
import os
import signal
import sys

MS_NOSUID = 2
MS_NODEV = 4


def main():
    if len(sys.argv) != 2:
        print("usage: fuse-hang.py MOUNTPOINT", file=sys.stderr)
        return 2
    fd = os.open("/dev/fuse", os.O_RDWR)
    libc = ctypes.CDLL(None, use_errno=True)
    opts = "fd=%d,rootmode=40000,user_id=0,group_id=0" % fd
    if libc.mount(b"rnbd-hang", sys.argv[1].encode(), b"fuse",
                  MS_NOSUID | MS_NODEV, opts.encode()) != 0:
        err = ctypes.get_errno()
        print("fuse-hang: mount: %s" % os.strerror(err), file=sys.stderr)
        return 1
    print("mounted", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        signal.pause()


if __name__ == "__main__":
    sys.exit(main())
