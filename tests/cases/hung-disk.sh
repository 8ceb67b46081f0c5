# SPDX-License-Identifier: GPL-2.0-only
# desc: a backing disk that never completes (a suspended dm device) under
#       one device of a session: the session's other device keeps doing
#       verified IO, heartbeats keep the session up, map and unmap of a
#       third device never block; unmap_device force of the hung device
#       returns within 15 s (its IO fails, the session reconnects, the
#       other device is opened again and works), the server closes the
#       old session within 15 s although its bios still hang, and frees
#       it once they end; with a second hung device, rdma link del
#       returns within 15 s
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
# The kernel log of this case only (the guest ran others before).
kmsg "hung-disk: start"
rnbd_setup
modprobe dm_mod || die "modprobe dm_mod"
nbA=$(nullb_create nullb1 64)
nbH=$(nullb_create nullb2 64)
nbC=$(nullb_create nullb3 16)
nbH2=$(nullb_create nullb4 16)
dmsetup create rnbdhang --table "0 $((64 * 2048)) linear $nbH 0" || die "dmsetup create"
dmsetup create rnbdhang2 --table "0 $((16 * 2048)) linear $nbH2 0" || die "dmsetup create 2"
# the kernel's name of a dm device (dm-N; devtmpfs has /dev/dm-N, and
# /dev/mapper/ links need udev rules the guest lacks)
dm_kname() {
	basename "$(readlink -f "/sys/dev/block/$(dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' ')")"
}
hangdev=/dev/$(dm_kname rnbdhang)
hangdev2=/dev/$(dm_kname rnbdhang2)
udev_wait "$hangdev"
udev_wait "$hangdev2"
# On any exit the hung bios end, so the cleanup after the case can unload.
trap 'dmsetup resume rnbdhang 2>/dev/null; dmsetup resume rnbdhang2 2>/dev/null' EXIT

devA=$(map_dev hang "$nbA")
devH=$(map_dev hang "$hangdev")
# The request timeout (the block layer's, 30 s) would reconnect the path
# when the hung requests reach it; this case shows what happens before.
echo 600000 >/sys/block/$devA/queue/io_timeout
echo 600000 >/sys/block/$devH/queue/io_timeout

kmsg "suspending $hangdev"
dmsetup suspend --nolockfs rnbdhang || die "dmsetup suspend"
fio --name=h --filename=/dev/$devH --ioengine=libaio --direct=1 --rw=randrw \
	--bs=4k --iodepth=8 --time_based --runtime=600 >/tmp/fio-hang.out 2>&1 &
hpid=$!
i=0
until [ "$(awk '{ print $1 + $2 }' /sys/block/$devH/inflight)" -ge 8 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || die "no request in flight on $devH"; sleep 0.1
done
log "in flight on the hung device: $(cat /sys/block/$devH/inflight)"

# The other device of the session: verified writes, 0 errors.
fio --name=a --filename=/dev/$devA --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=4M --verify=crc32c \
	--verify_fatal=1 >/tmp/fio-a.out 2>&1 || { cat /tmp/fio-a.out; die "IO to the other device"; }
grep -q 'err= *0' /tmp/fio-a.out || { cat /tmp/fio-a.out; die "fio on the other device"; }
# Map and unmap of another device, five times, each within 10 s.
for n in 1 2 3 4 5; do
	t0=$(date +%s)
	devC=$(timeout $((10 * S)) bash -c ". $REPO/tests/lib/guest.sh; map_dev hang $nbC") ||
		die "map $n of another device blocked or failed"
	timeout $((10 * S)) sh -c "echo normal >/sys/block/$devC/rnbd/unmap_device" ||
		die "unmap $n of another device blocked or failed"
	[ $(($(date +%s) - t0)) -le $((10 * S)) ] || die "map+unmap $n took $(($(date +%s) - t0)) s"
done
sleep $((12 * S))
expect_eq "session state with a hung disk" "$(path_state hang)" connected
klog | grep -q 'session hang: lost its connection' && die "the session reconnected while only a disk hung"
kill -0 $hpid || die "IO to the hung device ended"
expect_eq "requests still in flight" "$(awk '{ print ($1 + $2 >= 8) }' /sys/block/$devH/inflight)" 1

# Force unmap of the hung device: bounded, its IO fails, the session
# reconnects to take its requests back, the other device carries on.
kmsg "force unmap of $devH"
t0=$(date +%s)
timeout $((15 * S)) sh -c "echo force >/sys/block/$devH/rnbd/unmap_device" ||
	die "unmap_device force of the hung device took more than $((15 * S)) s"
log "force unmap of the hung device: $(($(date +%s) - t0)) s"
i=0
while kill -0 $hpid 2>/dev/null; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "fio on the unmapped device still runs"; sleep 0.1
done
wait $hpid && die "fio on the hung device saw no error"
klog | grep -q "unanswered after 5 s; reconnecting session hang" || die "no take-back line"
wait_path_state hang connected 30
t0=$(date +%s)
until klog | grep -q "$devA: $nbA@hang open again"; do
	[ $(($(date +%s) - t0)) -le $((30 * S)) ] || die "$devA not opened again"
	sleep 0.2
done
fio --name=a2 --filename=/dev/$devA --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=4M --verify=crc32c \
	--verify_fatal=1 >/tmp/fio-a.out 2>&1 || { cat /tmp/fio-a.out; die "IO after the reconnect"; }
# The server closed the old session (RDMA objects gone) with its bios
# still hanging, and keeps only their memory.
klog | grep -q "device $(dm_kname rnbdhang) closed with IO in flight" ||
	die "no line about the device closed with IO in flight"
expect_eq "server sessions closed" "$(klog | grep -c 'rnbd_trs_server: .*: closed$')" 1
klog | grep -q 'rnbd_trs_server: .*: freed$' && die "a session with hung bios was freed"
kmsg "resuming $hangdev"
dmsetup resume rnbdhang || die "dmsetup resume"
t0=$(date +%s)
until klog | grep -q 'rnbd_trs_server: .*: freed$'; do
	[ $(($(date +%s) - t0)) -le $((15 * S)) ] || die "the old session not freed after its bios ended"
	sleep 0.2
done

# rdma link del with a hung bio: returns within 15 s.
devH2=$(map_dev hang "$hangdev2")
echo 600000 >/sys/block/$devH2/queue/io_timeout
dmsetup suspend --nolockfs rnbdhang2 || die "dmsetup suspend 2"
dd if=/dev/$devH2 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &
dpid=$!
i=0
until [ "$(awk '{ print $1 + $2 }' /sys/block/$devH2/inflight)" -ge 1 ]; do
	i=$((i + 1)); [ $i -lt 100 ] || die "no request in flight on $devH2"; sleep 0.1
done
echo 5 >/sys/class/rtrs-client/hang/loss_timeout_sec
kmsg "rdma link del with a hung bio"
t0=$(date +%s)
timeout $((15 * S)) rdma link del "$RXE_DEV" || die "rdma link del with a hung bio: more than $((15 * S)) s"
log "rdma link del with a hung bio: $(($(date +%s) - t0)) s"
dmsetup resume rnbdhang2 || die "dmsetup resume 2"
i=0
while kill -0 $dpid 2>/dev/null; do
	i=$((i + 1)); [ $i -lt $((300 * S)) ] || die "IO still held 30 s after link del (loss timeout 5 s)"; sleep 0.1
done
for d in $devA $devH2; do
	expect_eq "unmap $d" "$(sysfs_write /sys/block/$d/rnbd/unmap_device normal)" OK
done
for m in rnbd_client rnbd_server; do
	rmmod $m || die "rmmod $m"
done
trap - EXIT
for d in rnbdhang rnbdhang2; do
	dmsetup remove --retry "$d" || die "dmsetup remove $d"
done
