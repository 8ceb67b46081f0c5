#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""tool-json.py EXPR < JSON: print the Python expression EXPR over 'd', the
rnbd admin tool's JSON output parsed.  The tool prints no comma between its
two sections of a list ('] "incoming ...'); that is repaired here, the tool
is not changed (../shared/tools/README.md).
"""
import json
import re
import sys

s = re.sub(r'\]\s*(?="incoming)', '],', sys.stdin.read())
d = json.loads(s)
print(eval(sys.argv[1], {}, {"d": d}))
