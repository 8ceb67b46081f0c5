# SPDX-License-Identifier: GPL-2.0-only
# desc: two guests joined by a private virtual link, each with its own rxe
#       device, exchange rdma_cm traffic (rping) between them
#       (RNBD_LONG=1 only: every two-guest case boots the same bed and fails
#       if it is broken)
# boot: host
# long: yes
# timeout: 300
. "$REPO/tests/lib/host.sh"
pair_bed
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.1/24
timeout 120 rping -s -a 10.10.0.1 -C 5 -v >/tmp/rping.log 2>&1 &
wait_listen rping
touch /sync/server-ready
wait $! || { cat /tmp/rping.log; die "rping server failed"; }
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.2/24
wait_sync /sync/server-ready 120
timeout 100 rping -c -a 10.10.0.1 -C 5 -v >/tmp/rping.log 2>&1 ||
	{ cat /tmp/rping.log; die "rping client failed"; }
cat /tmp/rping.log
expect_eq "pings" "$(grep -c 'ping data' /tmp/rping.log)" 5
G
pair_run 240
