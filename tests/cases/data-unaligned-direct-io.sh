# SPDX-License-Identifier: GPL-2.0-only
# desc: direct IO at unusual offsets, lengths and buffer alignments (odd
#       sectors, 512-byte-aligned buffers crossing pages) writes and reads
#       back the right data
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev unaligned "$nb")
for spec in "1536 512" "3584 7680" "4608 4096" "65024 1024" "130560 512"; do
	set -- $spec
	log "bs=$1 buffer alignment=$2"
	fio --name=u --filename=/dev/$dev --ioengine=psync --direct=1 \
		--rw=randwrite --bs="$1" --offset=512 --size=4M --iomem_align="$2" \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 >/tmp/fio.out 2>&1 ||
		{ cat /tmp/fio.out; die "fio bs=$1 align=$2"; }
done
# Byte-exact placement: a 512-byte record at sector 12345 shows up there
# on the server.
printf 'rnbd-unaligned-%0497d' 7 >/tmp/rec
dd if=/tmp/rec of=/dev/$dev bs=512 seek=12345 oflag=direct 2>/dev/null || die "dd"
got=$(dd if="$nb" bs=512 skip=12345 count=1 iflag=direct 2>/dev/null | sha256sum)
expect_eq "record on the server" "$got" "$(sha256sum </tmp/rec)"
unmap_dev "$dev"
