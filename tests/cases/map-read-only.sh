# SPDX-License-Identifier: GPL-2.0-only
# desc: access_mode=ro maps a read-only disk: reads work, writes fail in the
#       client (the disk is read-only, and stays so after blockdev
#       --setrw); the server's own refusal of a write on a read-only open
#       (EROFS) cannot be reached through the kernel client: hostile-client
#       sends such writes and judges the answers
# boot: shared
# timeout: 200
rnbd_setup
nb=$(nullb_create nullb1 16)
head -c 1048576 /dev/urandom >/tmp/p
dd if=/tmp/p of="$nb" bs=1M oflag=direct 2>/dev/null
dev=$(map_dev ro "$nb" access_mode=ro)
expect_eq "access_mode" "$(cat /sys/block/$dev/rnbd/access_mode)" ro
expect_eq "ro flag" "$(cat /sys/block/$dev/ro)" 1
expect_eq "read" "$(sha_dev /dev/$dev 1048576)" "$(sha256sum </tmp/p | cut -d' ' -f1)"
if dd if=/dev/zero of=/dev/$dev bs=4k count=1 oflag=direct 2>/dev/null; then
	die "write to a read-only map succeeded"
fi
blockdev --setrw /dev/$dev 2>/dev/null || true
expect_eq "ro flag after --setrw" "$(cat /sys/block/$dev/ro)" 1
if dd if=/dev/zero of=/dev/$dev bs=4k count=1 oflag=direct 2>/dev/null; then
	die "write to a read-only map succeeded after blockdev --setrw"
fi
expect_eq "server data unchanged" "$(sha_dev "$nb" 1048576)" "$(sha256sum </tmp/p | cut -d' ' -f1)"
unmap_dev "$dev"
# A second, rw map of the same device from another session while the first
# rw open exists must fail; two ro maps are fine.
dev=$(map_dev rw1 "$nb" access_mode=rw)
r=$(sysfs_write "$MAP_CTL" "sessname=rw2 path=ip:$RXE_ADDR device_path=$nb access_mode=rw")
expect_eq "second rw open" "$r" EBUSY
unmap_dev "$dev"
