# SPDX-License-Identifier: GPL-2.0-only
# desc: mkfs.ext4 on /dev/rnbdN, mount, copy files, sync, umount, fsck -n,
#       remount and compare checksums
# boot: shared
# timeout: 600
rnbd_setup
nb=$(nullb_create nullb1 256)
dev=$(map_dev fs "$nb")
mkfs.ext4 -q -F /dev/$dev || die "mkfs.ext4"
mkdir -p /mnt/rnbd
mount /dev/$dev /mnt/rnbd || die "mount"
# A tree of files of many sizes, made in the guest's tmpfs, then copied.
mkdir -p /tmp/tree
for i in $(seq 1 150); do
	d=/tmp/tree/d$((i % 7))
	mkdir -p "$d"
	head -c $(( (i * 7919) % 300000 + 1 )) /dev/urandom >"$d/f$i"
done
head -c 20000000 /dev/urandom >/tmp/tree/big
cp -a /tmp/tree /mnt/rnbd/tree || die "cp"
(cd /mnt/rnbd && find . -type f -print0 | sort -z | xargs -0 sha256sum) >/tmp/sums
n=$(wc -l </tmp/sums)
[ "$n" -gt 100 ] || die "only $n files copied"
sync
umount /mnt/rnbd || die "umount"
fsck.ext4 -n -f /dev/$dev || die "fsck found problems"
echo 3 >/proc/sys/vm/drop_caches
mount /dev/$dev /mnt/rnbd || die "remount"
(cd /mnt/rnbd && sha256sum -c --quiet /tmp/sums) || die "checksums differ after remount"
umount /mnt/rnbd
log "$n files verified"
unmap_dev "$dev"
