#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Write one string to a sysfs file with a single write(2) and print the
outcome: OK, or the errno name (EINVAL, ENOENT...).  The string is given
Python-escaped, so NUL bytes and other controls can be written: \\x00."""
import errno
import os
import sys

path = sys.argv[1]
data = sys.argv[2].encode("latin-1").decode("unicode_escape").encode("latin-1")
fd = os.open(path, os.O_WRONLY)
try:
    n = os.write(fd, data)
    print("OK" if n == len(data) else "SHORT")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
finally:
    os.close(fd)
