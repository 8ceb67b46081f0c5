# SPDX-License-Identifier: GPL-2.0-only
# desc: an rxe device comes up on a dummy netdev and an rdma_cm (rping)
#       exchange succeeds over it inside one guest
# boot: shared
# timeout: 120
setup_rxe
rdma link show "$RXE_DEV/1" | grep -q 'state ACTIVE' || die "rxe not ACTIVE"
ibv_devices | grep -q "$RXE_DEV" || die "ibv_devices does not list $RXE_DEV"
timeout 60 rping -s -a "$RXE_ADDR" -C 5 -v >/tmp/rping-s.log 2>&1 &
spid=$!
wait_listen rping
timeout 50 rping -c -a "$RXE_ADDR" -C 5 -v >/tmp/rping-c.log 2>&1 ||
	{ cat /tmp/rping-c.log; die "rping client failed"; }
wait $spid || { cat /tmp/rping-s.log; die "rping server failed"; }
n=$(grep -c 'ping data' /tmp/rping-c.log)
expect_eq "rping client pings" "$n" 5
