# SPDX-License-Identifier: GPL-2.0-only
# desc: a device that changes size on the server (a loop device whose file
#       grows, losetup -c) changes size on the client by itself within a
#       few seconds: it grows (and the new end takes verified data), a disk
#       shrunk by hand keeps its size when the server's grows, and follows
#       the server's device down when that shrinks below it
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
kmsg "server-resize-event: start"
rnbd_setup
modprobe loop || die "modprobe loop"
f=/tmp/resize.img
truncate -s 32M $f
loop=$(losetup -f --show $f) || die "losetup"
dev=$(map_dev resize "$loop")
expect_eq "size at map" "$(cat /sys/block/$dev/size)" 65536
wait_size() {	# wait_size SECTORS: the client's disk shows SECTORS
	i=0
	until [ "$(cat /sys/block/$dev/size)" = "$1" ]; do
		i=$((i + 1))
		[ $i -lt $((100 * S)) ] ||
			die "size $(cat /sys/block/$dev/size), waited 10 s for $1"
		sleep 0.1
	done
	log "size $1 after $((i / 10)).$((i % 10)) s"
}

# (1) the server's device grows: so does the disk
truncate -s 64M $f
t0=$(date +%s)
losetup -c "$loop" || die "losetup -c"
wait_size 131072
klog | grep -q "changed size: 131072 sectors (was 65536)" || die "no server log line"
klog | grep -q "$dev: $loop@resize is 131072 sectors on the server now" || die "no client log line"
dd if=/dev/urandom of=/tmp/tail bs=1M count=8 2>/dev/null
dd if=/tmp/tail of=/dev/$dev bs=1M seek=56 oflag=direct 2>/dev/null || die "write the new end"
expect_eq "data at the new end" \
	"$(dd if=/dev/$dev bs=1M skip=56 count=8 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/tail)"
expect_eq "data in the file" \
	"$(dd if=$f bs=1M skip=56 count=8 2>/dev/null | sha256sum)" "$(sha256sum </tmp/tail)"

# (2) shrunk by hand, it stays so when the server's device grows
echo 32768 >/sys/block/$dev/rnbd/resize || die "resize by hand"
expect_eq "size by hand" "$(cat /sys/block/$dev/size)" 32768
truncate -s 96M $f
losetup -c "$loop" || die "losetup -c"
i=0
until klog | grep -q "is 196608 sectors on the server now"; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "no notice of the growth to 96M"; sleep 0.1
done
expect_eq "size shrunk by hand after the server grew" "$(cat /sys/block/$dev/size)" 32768
echo 196608 >/sys/block/$dev/rnbd/resize || die "resize to the server's new size"
expect_eq "resize up to the new size" "$(cat /sys/block/$dev/size)" 196608

# (3) the server's device shrinks below the disk: the disk follows
truncate -s 8M $f
losetup -c "$loop" || die "losetup -c"
wait_size 16384
expect_eq "the block device's size" "$(blockdev --getsize64 /dev/$dev)" 8388608
got=$(dd if=/dev/$dev bs=1M skip=7 count=2 iflag=direct 2>/dev/null | wc -c)
expect_eq "bytes read across the new end" "$got" 1048576
unmap_dev "$dev" || die "unmap"
losetup -d "$loop"
rm -f $f /tmp/tail
