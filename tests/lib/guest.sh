# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Helpers for scripts that run inside the test guest (scripts/guest-run).
# Source it: . "$REPO/tests/lib/guest.sh".  REPO is set by guest-run.
# This is the one file to source: it sets the defaults below and then
# sources the helpers, which are split by topic:
#   guest-core.sh    log, die, expect_eq, kmsg, klog, wait_sync, sysfs_write
#   guest-rdma.sh    soft-RoCE, rxe counters and opcode probes, two links, netem
#   guest-rnbd.sh    our modules, map/unmap, null_blk, session state, counters
#   guest-fio.sh     the fio wrapper (fresh seeds) and the fio jobs of cases
#   guest-mpath.sh   multipath: mp_map, path state and counters, mp_server
#   guest-checks.sh  lockdep, kmemleak (module ranges), IO errors
# They are found under $REPO/tests/lib (a script sourcing this may run under
# sh, which has no BASH_SOURCE).

RXE_DEV=${RXE_DEV:-rxe0}
RXE_NETDEV=${RXE_NETDEV:-dummy0}
RXE_ADDR=${RXE_ADDR:-10.9.0.1}
RXE_MTU=${RXE_MTU:-1500}

# shellcheck source=tests/lib/guest-core.sh
. "$REPO/tests/lib/guest-core.sh"
# shellcheck source=tests/lib/guest-rdma.sh
. "$REPO/tests/lib/guest-rdma.sh"
# shellcheck source=tests/lib/guest-rnbd.sh
. "$REPO/tests/lib/guest-rnbd.sh"
# shellcheck source=tests/lib/guest-fio.sh
. "$REPO/tests/lib/guest-fio.sh"
# shellcheck source=tests/lib/guest-mpath.sh
. "$REPO/tests/lib/guest-mpath.sh"
# shellcheck source=tests/lib/guest-checks.sh
. "$REPO/tests/lib/guest-checks.sh"
