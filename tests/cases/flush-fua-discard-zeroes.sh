# SPDX-License-Identifier: GPL-2.0-only
# desc: flush and FUA reach the server device (fio --fsync=1 counted in its
#       flush statistics), the write cache and FUA flags are mirrored,
#       discard and write-zeroes work (blkdiscard, blkdiscard -z) and read
#       back zeroes
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 64 cache_size=16 discard=1)
dev=$(map_dev flush "$nb")
q=/sys/block/$dev/queue
expect_eq "write_cache" "$(cat $q/write_cache)" "write back"
expect_eq "fua" "$(cat $q/fua)" 1
[ "$(cat $q/discard_max_bytes)" -gt 0 ] || die "discard not advertised"
[ "$(cat $q/write_zeroes_max_bytes)" -gt 0 ] || die "write-zeroes not advertised"
flushes() {	# completed flush requests of the server device (field 16)
	awk '{ print $16 }' "/sys/block/$(basename "$nb")/stat"
}
f0=$(flushes)
fio --name=f --filename=/dev/$dev --rw=write --bs=4k --size=1M --fsync=1 \
	--ioengine=sync >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio --fsync=1"; }
f1=$(flushes)
log "server flushes: $f0 -> $f1"
[ $((f1 - f0)) -ge 256 ] || die "only $((f1 - f0)) flushes reached the server for 256 fsyncs"

head -c 4194304 /dev/urandom | dd of=/dev/$dev bs=1M oflag=direct 2>/dev/null
zero4m=$(head -c 4194304 /dev/zero | sha256sum | cut -d' ' -f1)
[ "$(sha_dev /dev/$dev 4194304)" != "$zero4m" ] || die "pattern not written"
blkdiscard -o 0 -l 4194304 /dev/$dev || die "blkdiscard"
expect_eq "discarded range on the server" "$(sha_dev "$nb" 4194304)" "$zero4m"
head -c 4194304 /dev/urandom | dd of=/dev/$dev bs=1M oflag=direct 2>/dev/null
blkdiscard -z -o 0 -l 4194304 /dev/$dev || die "blkdiscard -z"
expect_eq "write-zeroes through rnbd" "$(sha_dev /dev/$dev 4194304)" "$zero4m"
expect_eq "write-zeroes on the server" "$(sha_dev "$nb" 4194304)" "$zero4m"
unmap_dev "$dev"
