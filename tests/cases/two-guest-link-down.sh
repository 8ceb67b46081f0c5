# SPDX-License-Identifier: GPL-2.0-only
# desc: the client's link goes silent (netem, 100% loss on its egress):
#       (1) for 10 s under fio write+verify: IO is held and resumes, 0
#       errors; (2) for longer than the session's loss_timeout_sec (15 s):
#       IO fails with EIO 15-25 s after the cut, a normal unmap then works,
#       and once the link is back a new map works; (3) a map started while
#       the link is silent, whose only ARP probe is lost, connects within
#       10 s once the link is back.  (A link set down
#       instead would take soft-RoCE's port down, and a DREQ sent on the
#       down port seems to leave rxe's CM unusable until it is reloaded.)
#       (RNBD_LONG=1 only: two-guest-server-outages holds and resumes IO
#       through a server that goes silent, rdma-link-del-mapped and
#       hung-disk fail held IO after a loss timeout)
# boot: host
# long: yes
# timeout: 1200
. "$REPO/tests/lib/host.sh"
pair_bed 64M
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.1/24
# Never an ARP request to the client: one would refresh the client's entry
# for us while its link is silent, and phase (3) needs that entry to fail.
ip neigh replace 10.10.0.2 lladdr 52:54:00:00:00:02 dev eth0 nud permanent
load_rnbd_server
touch /sync/server-ready
wait_sync /sync/client-done 1000
unload_rnbd
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_client
dev=$(MAP_ADDR=10.10.0.1 map_dev flap /dev/vda)
cut() { tc qdisc add dev eth0 root netem loss 100% || die "netem"; }
mend() { tc qdisc del dev eth0 root || die "netem del"; }
# (1) 10 s of silence
fio_outage_start "$dev" 16M
fpid=$FIO_PID
# writes flowing before the cut (fio's start under TCG takes seconds)
wait_io_flowing "$dev" 200
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended before the outage"; }
kmsg "link silent for 10 s"
cut
# the IO is held, neither completed nor failed, while the link is silent:
# no write completes from 2 s to 9 s into the silence (field 5 of the
# device's stat; held requests wait outside the driver, so its in-flight
# count may be 0), fio is still running, and it ends without an error
sleep 2
w0=$(awk '{ print $5 }' /sys/block/$dev/stat)
sleep 7
w1=$(awk '{ print $5 }' /sys/block/$dev/stat)
sleep 1
mend
log "silent link: writes completed $w0 -> $w1"
[ "$w0" -gt 0 ] || die "no write completed before the silence"
expect_eq "writes completed during the silence" "$w1" "$w0"
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended during the silence"; }
kmsg "link back"
t0=$(date +%s)
wait_path_state flap connected 90
log "link back to connected: $(($(date +%s) - t0)) s;" \
	"$(dmesg | grep -c 'flap: reconnected after') reconnect(s)"
fio_wait_ok $fpid
expect_eq "device state" "$(cat /sys/block/$dev/rnbd/state)" open
# (2) silent for longer than the loss timeout
echo 15 >/sys/class/rtrs-client/flap/loss_timeout_sec
fio --name=r --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=randread \
	--bs=4k --iodepth=4 --time_based --runtime=300 >/tmp/fio-r.out 2>&1 &
fpid=$!
sleep 2
kmsg "link silent for good"
t0=$(date +%s)
cut
i=0
while kill -0 $fpid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt $((600 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "IO still held 60 s after the cut"
	sleep 0.1
done
t1=$(date +%s)
wait $fpid && die "fio saw no error"
grep -q 'Input/output error' /tmp/fio-r.out || { cat /tmp/fio-r.out; die "fio failed otherwise"; }
log "IO failed $((t1 - t0)) s after the cut"
[ $((t1 - t0)) -ge 15 ] || die "IO failed before the loss timeout"
[ $((t1 - t0)) -le $((25 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "IO failed too late"
dmesg | grep -q 'flap: no connection for 15 s' || die "no loss timeout line in dmesg"
if dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
	die "new IO succeeded after the loss timeout"
fi
expect_eq "unmap" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)" OK
[ ! -e /sys/class/rtrs-client/flap ] || die "session flap left"
mend
dev=$(MAP_ADDR=10.10.0.1 map_dev flap2 /dev/vda) || die "map after the link came back"
dd if=/dev/$dev of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null || die "IO after the new map"
unmap_dev "$dev"
# (3) a map started while the link is still silent, whose one ARP probe
# is lost: the link comes back while the neighbour entry waits out its
# probe, which then fails with no event that rdma_cm would hear.
sysctl -qw net.ipv4.neigh.eth0.mcast_solicit=1 \
	net.ipv4.neigh.eth0.retrans_time_ms=3000 || die "neighbour sysctls"
cut
ip neigh flush dev eth0
kmsg "map while the link is silent"
t0=$(date +%s)
(MAP_ADDR=10.10.0.1 map_dev flap3 /dev/vda >/tmp/map3.out 2>&1
 echo $? >/tmp/map3.rc) &
i=0
until ip neigh show 10.10.0.1 dev eth0 | grep -Eq 'INCOMPLETE|FAILED'; do
	i=$((i + 1))
	[ $i -lt $((100 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
		die "no lost ARP probe for the map: $(ip neigh show 10.10.0.1 dev eth0)"
	sleep 0.05
done
sleep 1
mend
kmsg "link back"
i=0
until [ -s /tmp/map3.rc ]; do
	i=$((i + 1)); [ $i -lt $((300 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "map still waiting 30 s later"
	sleep 0.1
done
expect_eq "map while the link came back" "$(cat /tmp/map3.rc)" 0
log "map across the lost probe: $(($(date +%s) - t0)) s"
[ $(($(date +%s) - t0)) -le $((10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
	die "the map took longer than the connect step's 10 s"
dev=$(cat /tmp/map3.out)
dd if=/dev/$dev of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null || die "IO after the map"
unmap_dev "$dev"
unload_rnbd
touch /sync/client-done
G
pair_run 1100
