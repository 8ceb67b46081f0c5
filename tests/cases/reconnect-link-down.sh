# SPDX-License-Identifier: GPL-2.0-only
# desc: the link under a session goes down: (1) for 10 s under fio
#       write+verify: IO is held and resumes, 0 errors; (2) for longer than
#       the session's loss_timeout_sec (15 s): IO fails with EIO 15-25 s
#       after the link went down, a normal unmap then works, and once the
#       link is back a new map works
# boot: shared
# timeout: 900
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev flap "$nb")
# (1) a 10 s flap
fio_outage_start "$dev" 16M
fpid=$FIO_PID
sleep 3
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended before the outage"; }
kmsg "link down for 10 s"
ip link set dummy0 down
sleep 10
ip link set dummy0 up
kmsg "link up"
t0=$(date +%s)
wait_path_state flap connected 60
log "link up to reconnect: $(($(date +%s) - t0)) s"
fio_wait_ok $fpid
expect_eq "device state" "$(cat /sys/block/$dev/rnbd/state)" open
# (2) down for longer than the loss timeout
echo 15 >/sys/class/rtrs-client/flap/loss_timeout_sec
fio --name=r --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=randread \
	--bs=4k --iodepth=4 --time_based --runtime=300 >/tmp/fio-r.out 2>&1 &
fpid=$!
sleep 2
kmsg "link down for good"
t0=$(date +%s)
ip link set dummy0 down
i=0
while kill -0 $fpid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt $((600 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "IO still held 60 s after the link went down"
	sleep 0.1
done
t1=$(date +%s)
wait $fpid && die "fio saw no error"
grep -q 'Input/output error' /tmp/fio-r.out || { cat /tmp/fio-r.out; die "fio failed otherwise"; }
log "IO failed $((t1 - t0)) s after the link went down"
[ $((t1 - t0)) -ge 15 ] || die "IO failed before the loss timeout"
[ $((t1 - t0)) -le $((25 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "IO failed too late"
dmesg | grep -q 'flap: no connection for 15 s' || die "no loss timeout line in dmesg"
if dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
	die "new IO succeeded after the loss timeout"
fi
expect_eq "unmap" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)" OK
[ ! -e /sys/class/rtrs-client/flap ] || die "session flap left"
ip link set dummy0 up
dev=$(map_dev flap2 "$nb") || die "map after the link came back"
dd if=/dev/$dev of=/dev/null bs=64k count=16 iflag=direct 2>/dev/null || die "IO after the new map"
unmap_dev "$dev"
