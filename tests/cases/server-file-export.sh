# SPDX-License-Identifier: GPL-2.0-only
# desc: regular files exported as block devices (the server's file IO
#       mode): an image on tmpfs (buffered IO, 512-byte blocks, a size
#       rounded down) and one on ext4 over a 4k-sector loop device
#       (O_DIRECT, 4096-byte blocks): geometry and cache flags, the
#       server's sysfs view, fio verify, discard punches a hole (the
#       file's allocated blocks shrink), write-zeroes keeps them, a grown
#       file grows the disk, ext4 on each, and data the client fsynced
#       survives a server module reload and a remount of the file system
# boot: shared
# timeout: 400
E=/run/fexp
B=/run/fexp-backing
SERVER_PARAMS="dev_search_path=$E"
SRV=/sys/class/rnbd-server/ctl
cleanup_fexp() {	# a shared boot: leave no mount or loop device behind
	for d in /sys/block/rnbd*; do
		[ ! -e "$d/rnbd/unmap_device" ] || echo force >"$d/rnbd/unmap_device" || true
	done
	for m in /mnt/fexp "$E/tmpfs" "$E/ext4"; do
		! mountpoint -q "$m" || umount -l "$m" || true
	done
	losetup -D || true
	rm -rf "$B" "$E" /mnt/fexp
}
trap cleanup_fexp EXIT
mkdir -p "$E/tmpfs" "$E/ext4" "$B" /mnt/fexp
mount -t tmpfs -o size=256M fexp "$E/tmpfs" || die "mount tmpfs"
modprobe loop
truncate -s 160M "$B/fs.img"
lo=$(losetup -f --show --sector-size 4096 "$B/fs.img") || die "losetup"
mkfs.ext4 -q -b 4096 "$lo" || die "mkfs.ext4 on $lo"
mount "$lo" "$E/ext4" || die "mount $lo"
# 64 MiB and 1000 bytes: not a whole number of blocks
size=$((64 * 1048576 + 1000))
truncate -s $size "$E/tmpfs/disk.img" "$E/ext4/disk.img"
rnbd_setup

blocks() {	# allocated 512-byte blocks of an image
	stat -c %b "$1"
}
zero_sha() {
	head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1
}
# range_sha DEV OFFSET_MIB MIB: checksum of a range, read directly
range_sha() {
	dd if="$1" bs=1M skip="$2" count="$3" iflag=direct 2>/dev/null |
		sha256sum | cut -d' ' -f1
}
flushes() {	# completed flush requests of a block device (stat field 16)
	awk '{ print $16 }' "/sys/block/$1/stat"
}

# check_export KIND DEV IMAGE LBS SECTORS IO_MODE MIN_BS
check_export() {
	kind=$1 dev=$2 img=$3 lbs=$4 sectors=$5 mode=$6 minbs=$7
	q=/sys/block/$dev/queue
	expect_eq "$kind: size" "$(cat "/sys/block/$dev/size")" "$sectors"
	expect_eq "$kind: logical block size" "$(cat "$q"/logical_block_size)" "$lbs"
	expect_eq "$kind: physical block size" "$(cat "$q"/physical_block_size)" 4096
	expect_eq "$kind: write cache" "$(cat "$q"/write_cache)" "write back"
	expect_eq "$kind: fua" "$(cat "$q"/fua)" 1
	expect_eq "$kind: rotational" "$(cat "$q"/rotational)" 0
	[ "$(cat "$q"/discard_max_bytes)" -gt 0 ] || die "$kind: no discard"
	[ "$(cat "$q"/write_zeroes_max_bytes)" -gt 0 ] || die "$kind: no write-zeroes"
	expect_eq "$kind: discard granularity" "$(cat "$q"/discard_granularity)" 4096
	# the server's view: files/, not devices/ (the rnbd tool reads that)
	name=$(echo "${img#/}" | tr / '!')
	f=$SRV/files/$name
	[ -d "$f" ] || die "$kind: no $f: $(ls $SRV/files)"
	[ ! -e "$SRV/devices/$name" ] || die "$kind: a file under devices/"
	expect_eq "$kind: file_path" "$(cat "$f/file_path")" "$img"
	expect_eq "$kind: io_mode" "$(cat "$f/io_mode")" "$mode"
	expect_eq "$kind: access_mode" "$(cat "$f"/sessions/*/access_mode)" rw
	expect_eq "$kind: mapping_path" "$(cat "$f"/sessions/*/mapping_path)" "${img#"$E"}"

	fio --name=v --filename="/dev/$dev" --ioengine=libaio --direct=1 \
		--rw=randwrite --bsrange="$minbs"-64k --iodepth=16 --size=16M \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "$kind: fio verify"; }
	grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "$kind: no fio report"; }

	# discard: 8 MiB at 16 MiB, written first, is a hole afterwards
	head -c 8388608 /dev/urandom >/tmp/fexp.rand
	dd if=/tmp/fexp.rand of="/dev/$dev" bs=1M seek=16 oflag=direct 2>/dev/null ||
		die "$kind: write"
	b0=$(blocks "$img")
	blkdiscard -o $((16 * 1048576)) -l 8388608 "/dev/$dev" || die "$kind: blkdiscard"
	b1=$(blocks "$img")
	log "$kind: allocated blocks $b0 -> $b1 after an 8 MiB discard"
	[ $((b0 - b1)) -ge 16384 ] || die "$kind: discard freed $((b0 - b1)) blocks, not 16384"
	expect_eq "$kind: discarded range" "$(range_sha "/dev/$dev" 16 8)" "$(zero_sha 8388608)"
	expect_eq "$kind: discarded range in the file" "$(range_sha "$img" 16 8)" "$(zero_sha 8388608)"

	# write-zeroes (BLKZEROOUT: no unmap): zeroes, the blocks stay
	dd if=/tmp/fexp.rand of="/dev/$dev" bs=1M seek=32 count=4 oflag=direct 2>/dev/null ||
		die "$kind: write"
	b0=$(blocks "$img")
	blkdiscard -z -o $((32 * 1048576)) -l 4194304 "/dev/$dev" || die "$kind: blkdiscard -z"
	b1=$(blocks "$img")
	log "$kind: allocated blocks $b0 -> $b1 after a 4 MiB write-zeroes"
	[ "$b1" -ge $((b0 - 64)) ] || die "$kind: write-zeroes unmapped $((b0 - b1)) blocks"
	expect_eq "$kind: zeroed range" "$(range_sha "/dev/$dev" 32 4)" "$(zero_sha 4194304)"

	# ext4 on the export
	mkfs.ext4 -q -F "/dev/$dev" || die "$kind: mkfs.ext4"
	mount "/dev/$dev" /mnt/fexp || die "$kind: mount"
	for i in $(seq 1 24); do
		head -c $(( (i * 7919) % 200000 + 1 )) /dev/urandom >"/mnt/fexp/f$i"
	done
	cp /tmp/fexp.rand /mnt/fexp/big
	(cd /mnt/fexp && sha256sum ./*) >/tmp/fexp.sums
	umount /mnt/fexp || die "$kind: umount"
	fsck.ext4 -n -f "/dev/$dev" >/dev/null || die "$kind: fsck found problems"
	mount "/dev/$dev" /mnt/fexp || die "$kind: remount"
	(cd /mnt/fexp && sha256sum -c --quiet /tmp/fexp.sums) ||
		die "$kind: checksums differ after remount"
	umount /mnt/fexp
}

dev=$(map_dev fexp /tmpfs/disk.img)
# 512-byte blocks: the size rounded down to 131073 sectors
check_export tmpfs "$dev" "$E/tmpfs/disk.img" 512 131073 buffered 512
# a file that grows: the disk follows (rnbd-srv-size.c)
truncate -s 80M "$E/tmpfs/disk.img"
i=0
until [ "$(cat "/sys/block/$dev/size")" = 163840 ]; do
	i=$((i + 1))
	[ $i -lt $((100 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
		die "grown file: size $(cat "/sys/block/$dev/size"), not 163840"
	sleep 0.1
done
unmap_dev "$dev"

dev=$(map_dev fexp /ext4/disk.img)
# O_DIRECT: the 4k sectors of the loop device; the size a whole number of them
check_export ext4 "$dev" "$E/ext4/disk.img" 4096 131072 direct 4k

# fsync on the client, then a server module reload and a remount of the
# file system the image is on: the data is on the loop device
head -c 4194304 /dev/urandom >/tmp/fexp.rand
f0=$(flushes "$(basename "$lo")")
dd if=/tmp/fexp.rand of="/dev/$dev" bs=1M seek=40 conv=fsync 2>/dev/null ||
	die "write and fsync"
f1=$(flushes "$(basename "$lo")")
log "flushes of $lo: $f0 -> $f1"
[ "$f1" -gt "$f0" ] || die "the client's fsync did not flush the server's file system"
unmap_dev "$dev"
kmsg "fexp: server module reload"
rmmod rnbd_server || die "rmmod rnbd_server"
[ ! -d "$SRV" ] || die "$SRV stays after rmmod"
umount "$E/ext4" || die "umount the image's file system (still open?)"
echo 3 >/proc/sys/vm/drop_caches
mount "$lo" "$E/ext4" || die "mount $lo again"
ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
dev=$(map_dev fexp /ext4/disk.img)
expect_eq "data after the reload" "$(range_sha "/dev/$dev" 40 4)" \
	"$(sha256sum </tmp/fexp.rand | cut -d' ' -f1)"
unmap_dev "$dev"
rm -f /tmp/fexp.rand /tmp/fexp.sums
