# SPDX-License-Identifier: GPL-2.0-only
# desc: unmap "normal" of a mounted device fails with EBUSY and leaves it
#       working; after umount it succeeds and everything is gone
# boot: shared
# timeout: 200
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev busy "$nb")
mkfs.ext4 -q -F /dev/$dev
mkdir -p /mnt/rnbd
mount /dev/$dev /mnt/rnbd
r=$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)
expect_eq "unmap normal while mounted" "$r" EBUSY
expect_eq "state" "$(cat /sys/block/$dev/rnbd/state)" open
echo still-works >/mnt/rnbd/f && sync || die "IO after refused unmap"
r=$(sysfs_write /sys/block/$dev/rnbd/unmap_device bogus)
expect_eq "unmap with a bad mode" "$r" EINVAL
umount /mnt/rnbd
expect_eq "unmap normal" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)" OK
[ ! -e /sys/block/$dev ] || die "$dev still there"
[ ! -e /sys/class/rtrs-client/busy ] || die "session still there"
