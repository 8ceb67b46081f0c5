# SPDX-License-Identifier: GPL-2.0-only
# desc: rmmod rnbd_server under fio write+verify, modprobe it again 4 s
#       later: the path goes "reconnecting", IO is held, the session
#       reconnects and opens the device again, and fio ends with 0 errors
#       and every block verified; the same /dev/rnbdN throughout
# boot: shared
# timeout: 900
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev srvback "$nb")
sdir=/sys/class/rtrs-client/srvback
expect_eq "reconnect_delay_sec" "$(cat $sdir/reconnect_delay_sec)" 5
expect_eq "loss_timeout_sec" "$(cat $sdir/loss_timeout_sec)" 600
expect_eq "max_reconnect_attempts" "$(cat $sdir/max_reconnect_attempts)" -1
expect_eq "bad reconnect_delay_sec" "$(sysfs_write $sdir/reconnect_delay_sec 0)" EINVAL
expect_eq "bad max_reconnect_attempts" \
	"$(sysfs_write $sdir/max_reconnect_attempts -2)" EINVAL
expect_eq "path state" "$(path_state srvback)" connected
fio_outage_start "$dev" 24M
fpid=$FIO_PID
sleep 3
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended before the outage"; }
kmsg "rmmod rnbd_server under IO"
t0=$(date +%s)
timeout 60 rmmod rnbd_server || die "rmmod rnbd_server"
wait_path_state srvback reconnecting 10
expect_eq "device state while held" "$(cat /sys/block/$dev/rnbd/state)" open
sleep 4
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended during the outage"; }
ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
wait_path_state srvback connected 30
t1=$(date +%s)
log "outage to reconnect: $((t1 - t0)) s"
fio_wait_ok $fpid
expect_eq "device state after" "$(cat /sys/block/$dev/rnbd/state)" open
klog | grep -q 'srvback: reconnected after' || die "no reconnect line in dmesg"
klog | grep -q "$dev: .* open again" || die "no re-open line in dmesg"
# IO after the reconnect, and a second device on the reconnected session.
nb2=$(nullb_create nullb2 16)
dev2=$(map_dev srvback "$nb2")
dd if=/dev/urandom of=/tmp/blk bs=64k count=4 2>/dev/null
dd if=/tmp/blk of=/dev/$dev2 bs=64k oflag=direct 2>/dev/null || die "write $dev2"
expect_eq "read back" "$(dd if=/dev/$dev2 bs=64k count=4 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/blk)"
unmap_dev "$dev2"
unmap_dev "$dev"
