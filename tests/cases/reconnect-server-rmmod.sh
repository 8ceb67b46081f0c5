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
pstate() { cat $sdir/paths/*/state; }
# wait_pstate STATE SECONDS
wait_pstate() {
	i=0
	until [ "$(pstate)" = "$1" ]; do
		i=$((i + 1))
		[ $i -lt $(($2 * 10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "path state stays $(pstate), expected $1"
		sleep 0.1
	done
}
expect_eq "path state" "$(pstate)" connected
# Writes throttled so that the outage falls in the write phase; then a
# full verify pass.
fio --name=v --filename=/dev/$dev --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=32M --rate_iops=,500 \
	--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
	>/tmp/fio.out 2>&1 &
fpid=$!
sleep 3
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended before the outage"; }
kmsg "rmmod rnbd_server under IO"
t0=$(date +%s)
timeout 60 rmmod rnbd_server || die "rmmod rnbd_server"
wait_pstate reconnecting 10
expect_eq "device state while held" "$(cat /sys/block/$dev/rnbd/state)" open
sleep 4
kill -0 $fpid 2>/dev/null || { cat /tmp/fio.out; die "fio ended during the outage"; }
ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
wait_pstate connected 30
t1=$(date +%s)
log "outage to reconnect: $((t1 - t0)) s"
i=0
while kill -0 $fpid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt $((3000 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "fio still running"
	sleep 0.1
done
wait $fpid || { cat /tmp/fio.out; die "fio failed"; }
grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "no fio job report"; }
if grep -o 'err= *[0-9]*' /tmp/fio.out | grep -vq 'err= *0$'; then
	cat /tmp/fio.out
	die "fio reported an error"
fi
expect_eq "device state after" "$(cat /sys/block/$dev/rnbd/state)" open
dmesg | grep -q 'srvback: reconnected after' || die "no reconnect line in dmesg"
dmesg | grep -q "$dev: .* open again" || die "no re-open line in dmesg"
# IO after the reconnect, and a second device on the reconnected session.
nb2=$(nullb_create nullb2 16)
dev2=$(map_dev srvback "$nb2")
dd if=/dev/urandom of=/tmp/blk bs=64k count=4 2>/dev/null
dd if=/tmp/blk of=/dev/$dev2 bs=64k oflag=direct 2>/dev/null || die "write $dev2"
expect_eq "read back" "$(dd if=/dev/$dev2 bs=64k count=4 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/blk)"
unmap_dev "$dev2"
unmap_dev "$dev"
