#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write one string to a sysfs file with a single write(2) and print the
outcome: OK, or the errno name of the write or of the open (EINVAL,
EBUSY, ENOENT for a file that is not there...).  The string is given
Python-escaped, so NUL bytes and other controls can be written: \\x00."""
import errno
import os
import sys

path = sys.argv[1]
data = sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1")
try:
    fd = os.open(path, os.O_WRONLY)
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(0)
try:
    n = os.write(fd, data)
    print("OK" if n == len(data) else "SHORT")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
finally:
    os.close(fd)
