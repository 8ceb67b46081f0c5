# SPDX-License-Identifier: GPL-2.0-only
# The guest side of `make demo` (runs under scripts/guest-run).
. "$REPO/tests/lib/guest.sh"
set -e
step() {
	echo
	echo "### $*"
}
step "soft-RoCE: rxe0 on dummy0 with $RXE_ADDR"
setup_rxe
rdma link show
step "rdma_cm sanity check: rping over rxe0"
rping -s -a "$RXE_ADDR" -C 3 >/dev/null 2>&1 &
wait_listen rping
rping -c -a "$RXE_ADDR" -C 3 -v
wait
if [ ! -e "$REPO/client/rnbd_client.ko" ]; then
	step "the rnbd modules are not built yet: the test bed works"
	exit 0
fi
