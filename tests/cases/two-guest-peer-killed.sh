# SPDX-License-Identifier: GPL-2.0-only
# desc: a peer that dies: (1) the server guest is killed (SIGKILL of its
#       QEMU) under client fio write+verify and booted again: the client
#       holds the IO, reconnects, opens the device again and fio ends with
#       0 errors and every block verified, on the same /dev/rnbdN; (2) the
#       client guest is then killed while mapped rw: the server notices
#       the missing heartbeats and frees the session within 15 s (RDMA
#       objects gone, free memory back), and a freshly booted client maps
#       the same device rw again
# boot: host
# timeout: 1500
. "$REPO/tests/lib/host.sh"
pair_bed 64M
srvnet=$(pair_net $p server)
clinet=$(pair_net $p client)
cat >"$sync/../server1.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_server server1-ready
sleep 100000
G
cat >"$sync/../server2.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.1/24
# What the server holds with no session: read before its listener is up,
# since client1 reconnects the moment it is (its listener adds one cm_id).
base=$(rdma_res_counts | awk '{
	for (i = 1; i <= NF; i++) {
		split($i, kv, "=")
		if (kv[1] == "cm_id")
			$i = "cm_id=" kv[2] + 1
	}
	print $0 " "
}')
load_rnbd_server
touch /sync/server2-ready
# (2) the client guest is killed while it has /dev/vda open rw; the
# session pins its chunks (queue_depth x (4 KiB + max_io_size))
wait_sync /sync/client1-mapped 900
mem_held=$(free_kb)
wait_sync /sync/client1-killed 900
t0=$(date +%s)
# freed: RDMA objects destroyed, then (after an RCU grace period, when
# the session's count of held requests switches off per-CPU mode) memory
freed0=$(dmesg | grep -c 'rnbd_trs_server: .*: freed$' || true)
i=0
until [ "$(dmesg | grep -c 'rnbd_trs_server: .*: freed$')" -gt "$freed0" ]; do
	i=$((i + 1))
	[ $i -lt $((150 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
		{ dmesg | tail -20; die "the dead client's session is still there"; }
	sleep 0.1
done
t1=$(date +%s)
log "dead client's session freed after $((t1 - t0)) s"
[ $((t1 - t0)) -le $((15 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
	die "freeing the dead client's session took $((t1 - t0)) s"
# missed heartbeats, or the retries of an unanswered one ran out first
dmesg | grep -Eq 'no heartbeat from the client for 10 s|closing: heartbeat not sent' ||
	die "no dmesg line about the dead client"
expect_eq "RDMA resources after the dead client's session" "$(rdma_res_counts)" "$base"
# its memory is back: at least 12 MiB of the 16.5 MiB of chunks
mem_freed=$(free_kb)
log "free memory: $mem_held kB with the session, $mem_freed kB after"
[ $((mem_freed - mem_held)) -ge 12288 ] ||
	die "free memory grew by $((mem_freed - mem_held)) kB only when the session was freed"
touch /sync/server2-freed
wait_sync /sync/client2-done 600
unload_rnbd
G
cat >"$sync/../client1.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_client server1-ready
dev=$(MAP_ADDR=10.10.0.1 map_dev peer /dev/vda)
fio_outage_start "$dev" 24M
fpid=$FIO_PID
sleep 5
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended before the outage"; }
kmsg "server killed now"
t0=$(date +%s)
touch /sync/client1-io
wait_path_state peer '!connected' 30
log "dead server noticed after $(($(date +%s) - t0)) s"
wait_sync /sync/server2-ready 600
wait_path_state peer connected 60
log "outage to reconnect: $(($(date +%s) - t0)) s (including the server's boot)"
fio_wait_ok $fpid
expect_eq "the same device" "$(ls /sys/block | grep rnbd)" "$dev"
expect_eq "device state" "$(cat /sys/block/$dev/rnbd/state)" open
dmesg | grep -q "$dev: /dev/vda@peer open again" || die "no re-open line"
# (2) a pattern the next client must find, then this guest dies mapped
head -c 1048576 /dev/urandom >/tmp/p
sha256sum </tmp/p | cut -d' ' -f1 >/sync/pattern.sha
dd if=/tmp/p of=/dev/$dev bs=1M seek=40 oflag=direct conv=fsync 2>/dev/null || die "dd"
touch /sync/client1-mapped
sleep 100000
G
cat >"$sync/../client2.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_client server2-freed
dev=$(MAP_ADDR=10.10.0.1 map_dev peer2 /dev/vda) || die "rw map after the client's death"
expect_eq "pattern" "$(dd if=/dev/$dev bs=1M skip=40 count=1 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" \
	"$(cat /sync/pattern.sha)"
unmap_dev "$dev"
unload_rnbd
touch /sync/client2-done
G
start_guest server1 --timeout 600 --share "$sync" --disk "$img" --net "$srvnet" "$sync/../server1.sh"
start_guest client1 --timeout 1300 --share "$sync" --net "$clinet" "$sync/../client1.sh"
wait_alive "$sync/client1-io" 600 client1 || { guest_log client1; guest_log server1; die "phase 1"; }
kill_guest server1
start_guest server2 --timeout 1200 --share "$sync" --disk "$img" --net "$srvnet" "$sync/../server2.sh"
wait_alive "$sync/client1-mapped" 900 client1 || { guest_log client1; guest_log server2; die "recovery"; }
kill_guest client1
guest_log client1
touch "$sync/client1-killed"
start_guest client2 --timeout 600 --share "$sync" --net "$clinet" "$sync/../client2.sh"
wait_pair client2 server2
