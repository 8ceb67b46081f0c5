# SPDX-License-Identifier: GPL-2.0-only
# desc: two-guest mode survives a server guest crash: the server guest is
#       killed and booted again while the client guest keeps running; the
#       server's disk image keeps what the first boot wrote, and the client
#       reaches the restarted server over RDMA
#       (RNBD_LONG=1 only: two-guest-peer-killed, two-guest-server-outages
#       and mirror-two-servers kill and boot a server guest again and fail
#       if that is broken)
# boot: host
# long: yes
# timeout: 480
. "$REPO/tests/lib/host.sh"
pair_bed 64M
srvnet=$(pair_net $p server)
cat >"$sync/../server1.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.1/24
echo "rnbd-persist-$(cat /sync/token)" | dd of=/dev/vda bs=4096 conv=sync,fsync 2>/dev/null
timeout 300 rping -s -a 10.10.0.1 -v >/tmp/rping.log 2>&1 &
wait_listen rping
touch /sync/server1-ready
sleep 100000
G
cat >"$sync/../server2.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
got=$(dd if=/dev/vda bs=4096 count=1 2>/dev/null | tr -d '\0' | head -1)
expect_eq "disk contents after restart" "$got" "rnbd-persist-$(cat /sync/token)"
setup_rxe eth0 10.10.0.1/24
timeout 200 rping -s -a 10.10.0.1 -C 3 -v >/tmp/rping.log 2>&1 &
wait_listen rping
touch /sync/server2-ready
wait $! || { cat /tmp/rping.log; die "rping server failed"; }
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.2/24
wait_sync /sync/server1-ready 300
timeout 60 rping -c -a 10.10.0.1 -C 3 -v >/tmp/r1.log 2>&1 || { cat /tmp/r1.log; die "rping 1"; }
expect_eq "pings to first server boot" "$(grep -c 'ping data' /tmp/r1.log)" 3
touch /sync/client-phase1
wait_sync /sync/server2-ready 300
timeout 60 rping -c -a 10.10.0.1 -C 3 -v >/tmp/r2.log 2>&1 || { cat /tmp/r2.log; die "rping 2"; }
expect_eq "pings to restarted server" "$(grep -c 'ping data' /tmp/r2.log)" 3
echo "client kept running: up $(cut -d' ' -f1 /proc/uptime) s"
G
echo "$RANDOM$RANDOM" >"$sync/token"
start_guest server1 --timeout 400 --share "$sync" --disk "$img" --net "$srvnet" "$sync/../server1.sh"
start_guest client --timeout 440 --share "$sync" --net "$(pair_net $p client)" "$sync/../client.sh"
wait_file "$sync/client-phase1" 300 || { guest_log client; guest_log server1; die "phase 1"; }
kill_guest server1
start_guest server2 --timeout 300 --share "$sync" --disk "$img" --net "$srvnet" "$sync/../server2.sh"
wait_pair client server2
