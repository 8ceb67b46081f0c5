#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""fuse-hold-open.py MOUNTPOINT SIZE LIFETIME: a FUSE file system whose one
file can be looked up but not opened.

Mounts a FUSE file system on MOUNTPOINT with one regular file, "disk", of
SIZE bytes (reads as zeroes), speaking the FUSE protocol on /dev/fuse
itself (no libfuse).  It answers INIT, LOOKUP, GETATTR, READ, RELEASE and
FLUSH, and holds every OPEN unanswered: the opener waits in the kernel
(killable only) until SIGUSR1 makes it answer the OPENs it holds (with
success), or until this process ends: closing /dev/fuse aborts the
connection, and the waiting OPENs fail with ENOTCONN.  It ends by itself
after LIFETIME seconds, so that a test that fails leaves no opener hung.
Prints one line per event, flushed: "mounted", "open held N" (N OPENs so
far), "open answered N", "release".
"""
import ctypes
import errno
import os
import select
import signal
import struct
import sys
import time

MS_NOSUID = 2
MS_NODEV = 4

FUSE_LOOKUP = 1
FUSE_FORGET = 2
FUSE_GETATTR = 3
FUSE_OPEN = 14
FUSE_READ = 15
FUSE_RELEASE = 18
FUSE_FLUSH = 25
FUSE_INIT = 26
FUSE_INTERRUPT = 36
FUSE_DESTROY = 38
FUSE_BATCH_FORGET = 42
NO_REPLY = (FUSE_FORGET, FUSE_BATCH_FORGET, FUSE_INTERRUPT)

IN_HDR = struct.Struct("<IIQQIIII")	# len opcode unique nodeid uid gid pid pad
OUT_HDR = struct.Struct("<IiQ")		# len error unique
# ino size blocks atime mtime ctime, 3 nsec, mode nlink uid gid rdev
# blksize flags
ATTR = struct.Struct("<QQQQQQIIIIIIIIII")
ROOT_ID = 1
DISK_ID = 2
VALID = 3600	# seconds the kernel may cache entries and attributes
BUF = 256 * 1024	# >= the kernel's minimum: a header, a write, max_write


def attr(nodeid, size):
    if nodeid == ROOT_ID:
        return ATTR.pack(ROOT_ID, 0, 0, 0, 0, 0, 0, 0, 0, 0o040755, 2, 0, 0,
                         0, 4096, 0)
    return ATTR.pack(DISK_ID, size, (size + 511) // 512, 0, 0, 0, 0, 0, 0,
                     0o100644, 1, 0, 0, 0, 4096, 0)


def reply(fd, unique, err=0, data=b""):
    os.write(fd, OUT_HDR.pack(OUT_HDR.size + len(data), -err, unique) + data)


def say(msg):
    print(msg, flush=True)


def main():
    if len(sys.argv) != 4:
        print("usage: fuse-hold-open.py MOUNTPOINT SIZE LIFETIME",
              file=sys.stderr)
        return 2
    size = int(sys.argv[2])
    end = time.monotonic() + int(sys.argv[3])
    fd = os.open("/dev/fuse", os.O_RDWR)
    libc = ctypes.CDLL(None, use_errno=True)
    opts = "fd=%d,rootmode=40000,user_id=0,group_id=0" % fd
    if libc.mount(b"rnbd-hold-open", sys.argv[1].encode(), b"fuse",
                  MS_NOSUID | MS_NODEV, opts.encode()) != 0:
        err = ctypes.get_errno()
        print("fuse-hold-open: mount: %s" % os.strerror(err),
              file=sys.stderr)
        return 1
    say("mounted")
    release = [False]
    signal.signal(signal.SIGUSR1, lambda *_: release.__setitem__(0, True))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    held = []
    opens = answered = 0
    while time.monotonic() < end:
        if release[0]:
            release[0] = False
            for unique in held:
                # fh 1, no open flags
                reply(fd, unique, 0, struct.pack("<QII", 1, 0, 0))
                answered += 1
                say("open answered %d" % answered)
            held = []
        if not select.select([fd], [], [], 0.2)[0]:
            continue
        try:
            msg = os.read(fd, BUF)
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.EINTR):
                continue	# a request interrupted before we read it
            raise
        _, opcode, unique, nodeid = IN_HDR.unpack_from(msg)[:4]
        arg = msg[IN_HDR.size:]
        if opcode in NO_REPLY:
            continue
        if opcode == FUSE_INIT:
            _, _, readahead = struct.unpack_from("<III", arg)
            # 7.31, no flags; max_background 16, congestion 12,
            # max_write 128 KiB, time_gran 1
            reply(fd, unique, 0, struct.pack("<IIIIHHIIHHI28x", 7, 31,
                                             readahead, 0, 16, 12, 131072,
                                             1, 0, 0, 0))
        elif opcode == FUSE_LOOKUP:
            name = arg.split(b"\0", 1)[0]
            if nodeid != ROOT_ID or name != b"disk":
                reply(fd, unique, errno.ENOENT)
                continue
            reply(fd, unique, 0, struct.pack("<QQQQII", DISK_ID, 1, VALID,
                                             VALID, 0, 0) +
                  attr(DISK_ID, size))
        elif opcode == FUSE_GETATTR:
            reply(fd, unique, 0, struct.pack("<QII", VALID, 0, 0) +
                  attr(nodeid, size))
        elif opcode == FUSE_OPEN:
            held.append(unique)
            opens += 1
            say("open held %d" % opens)
        elif opcode == FUSE_READ:
            _, off, count = struct.unpack_from("<QQI", arg)
            reply(fd, unique, 0, bytes(max(0, min(count, size - off))))
        elif opcode == FUSE_RELEASE:
            reply(fd, unique)
            say("release")
        elif opcode in (FUSE_FLUSH, FUSE_DESTROY):
            reply(fd, unique)
        else:
            reply(fd, unique, errno.ENOSYS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
