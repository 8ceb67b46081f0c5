# SPDX-License-Identifier: GPL-2.0-only
# desc: a client with two devices of one server through three outages:
#       (1) the server guest paused 20 s (QEMU "stop"/"cont") under fio
#       write+verify: noticed, reconnected, 0 errors; (2) ext4 on the
#       second device, files written through a kill and reboot of the
#       server guest: after recovery fsck -n is clean and every file
#       synced before the kill reads back intact; (3) the server killed
#       for good: unmap_device force of both devices returns within 15 s,
#       fio ends with errors, rmmod rnbd_client works
# boot: host
# timeout: 1500
. "$REPO/tests/lib/host.sh"
pair_bed
imgA=$CASE_RESULTS/disk-a.img
imgB=$CASE_RESULTS/disk-b.img
rm -f "$imgA" "$imgB"
truncate -s 64M "$imgA"
truncate -s 128M "$imgB"
srvnet=$(pair_net $p server)
clinet=$(pair_net $p client)
for s in server1 server2; do
	cat >"$sync/../$s.sh" <<G
. "\$REPO/tests/lib/guest.sh"
pair_server $s-ready
sleep 100000
G
done
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
S=${RNBD_TIMEOUT_SCALE:-1}
pair_client server1-ready
devA=$(MAP_ADDR=10.10.0.1 map_dev out /dev/vda)
devB=$(MAP_ADDR=10.10.0.1 map_dev out /dev/vdb)
mkfs.ext4 -q -F /dev/$devB || die "mkfs.ext4"
mkdir -p /mnt/b

# (1) paused server
fio_outage_start "$devA" 24M
fpid=$FIO_PID
sleep 3
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended before the pause"; }
kmsg "server paused now"
touch /sync/p1-io
t0=$(date +%s)
wait_path_state out '!connected' 60
n=$(($(date +%s) - t0))
log "paused server noticed after $n s"
# heartbeat_timeout_sec is 10 (not scaled): a notice after the 20 s pause
# has ended noticed nothing
[ $n -le 18 ] || die "the paused server was noticed after $n s (heartbeat timeout 10 s, pause 20 s)"
wait_sync /sync/p1-resumed 120
wait_path_state out connected 120
log "pause to reconnect: $(($(date +%s) - t0)) s (paused 20 s)"
fio_wait_ok $fpid
for d in $devA $devB; do
	expect_eq "$d state after the pause" "$(cat /sys/block/$d/rnbd/state)" open
done

# (2) ext4 through a kill and reboot of the server: a writer syncs each
# file and only then records its checksum.  jbd2 and the writer's sync
# wait in D state until the server is back, by design; on a loaded host
# the reboot can take longer than this guest's 60 s hung-task timeout
# (which panics), so give it 300 s here.
echo 300 >/proc/sys/kernel/hung_task_timeout_secs
mount /dev/$devB /mnt/b || die "mount"
: >/tmp/sums
(
	i=0
	while :; do
		i=$((i + 1))
		head -c 262144 /dev/urandom >/tmp/f
		cp /tmp/f /mnt/b/f$i || exit 1
		sync /mnt/b/f$i || exit 1
		echo "$(sha256sum </tmp/f | cut -d' ' -f1) f$i" >>/tmp/sums
		sleep 0.2
	done
) &
wpid=$!
sleep 5
kill -0 $wpid || die "the writer failed before the kill"
nk=$(wc -l </tmp/sums)
kmsg "server killed now"
touch /sync/p2-io
t0=$(date +%s)
wait_path_state out '!connected' 60
wait_sync /sync/server2-ready 600
wait_path_state out connected 120
log "kill to reconnect: $(($(date +%s) - t0)) s (including the server's boot)"
# files written after the reconnect too
t1=$(date +%s)
until [ "$(wc -l </tmp/sums)" -ge $((nk + 3)) ]; do
	kill -0 $wpid || die "the writer failed across the outage"
	[ $(($(date +%s) - t1)) -le $((60 * S)) ] || die "no file written after the reconnect"
	sleep 0.5
done
kill $wpid
wait $wpid 2>/dev/null || true
n=$(wc -l </tmp/sums)
umount /mnt/b || die "umount"
fsck.ext4 -n -f /dev/$devB >/tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; die "fsck -n found problems"; }
mount /dev/$devB /mnt/b || die "mount again"
bad=0
while read -r sum f; do
	[ "$(sha256sum </mnt/b/$f | cut -d' ' -f1)" = "$sum" ] || { log "$f differs"; bad=$((bad + 1)); }
done </tmp/sums
expect_eq "files differing of $n synced" $bad 0
log "$n files synced ($nk before the kill), all intact, fsck clean"

# (3) the server dies for good
fio --name=d --filename=/dev/$devA --ioengine=libaio --direct=1 --rw=randwrite \
	--bs=4k --iodepth=16 --rate_iops=200 --time_based --runtime=600 >/tmp/fio.out 2>&1 &
fpid=$!
sleep 3
kmsg "server killed for good now"
touch /sync/p3-io
wait_sync /sync/p3-killed 60
sleep 2
for d in $devA $devB; do
	t0=$(date +%s)
	timeout $((15 * S)) sh -c "echo force >/sys/block/$d/rnbd/unmap_device" ||
		die "unmap_device force of $d with a dead server: more than $((15 * S)) s"
	log "force unmap of $d with a dead server: $(($(date +%s) - t0)) s"
done
i=0
while kill -0 $fpid 2>/dev/null; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "fio still runs after the force unmap"; sleep 0.1
done
wait $fpid && die "fio saw no error"
timeout $((30 * S)) umount /mnt/b || die "umount after the force unmap"
t0=$(date +%s)
timeout $((15 * S)) rmmod rnbd_client || die "rmmod rnbd_client with a dead server"
log "rmmod rnbd_client with a dead server: $(($(date +%s) - t0)) s"
touch /sync/client-done
G
start_guest server1 --timeout 1200 --share "$sync" --disk "$imgA" --disk "$imgB" --net "$srvnet" "$sync/../server1.sh"
start_guest client --timeout 1400 --share "$sync" --net "$clinet" "$sync/../client.sh"
wait_alive "$sync/p1-io" 600 client || { guest_log client; guest_log server1; die "phase 1"; }
guest_monitor server1 stop
sleep 20
guest_monitor server1 cont
touch "$sync/p1-resumed"
wait_alive "$sync/p2-io" 600 client || { guest_log client; guest_log server1; die "phase 2"; }
kill_guest server1
start_guest server2 --timeout 1200 --share "$sync" --disk "$imgA" --disk "$imgB" --net "$srvnet" "$sync/../server2.sh"
wait_alive "$sync/p3-io" 900 client || { guest_log client; guest_log server2; die "phase 3"; }
kill_guest server2
touch "$sync/p3-killed"
rc=0
wait_guest client || rc=$?
guest_log client
[ "$rc" = 0 ] || die "client guest status $rc"
[ -e "$sync/client-done" ] || die "the client did not finish"
rm -f "$imgA" "$imgB"
