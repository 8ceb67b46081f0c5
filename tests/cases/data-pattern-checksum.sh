# SPDX-License-Identifier: GPL-2.0-only
# desc: data written through /dev/rnbdN lands on the server device and
#       reads back identical (sha256 through both devices, buffered and
#       direct IO, several sizes)
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev data "$nb")
expect_eq "size in sectors" "$(cat /sys/block/$dev/size)" $((64 * 2048))
head -c $((32 * 1048576)) /dev/urandom >/tmp/pattern
want=$(head -c $((32 * 1048576)) /tmp/pattern | sha256sum | cut -d' ' -f1)
dd if=/tmp/pattern of=/dev/$dev bs=1M oflag=direct 2>/dev/null || die "direct write"
expect_eq "server side after direct write" "$(sha_dev "$nb" $((32 * 1048576)))" "$want"
expect_eq "client side after direct write" "$(sha_dev /dev/$dev $((32 * 1048576)))" "$want"
# Buffered, with odd block sizes, at an offset.
head -c $((8 * 1048576)) /dev/urandom >/tmp/p2
dd if=/tmp/p2 of=/dev/$dev bs=12345 seek=$((40 * 1048576)) oflag=seek_bytes conv=fsync 2>/dev/null ||
	die "buffered write"
echo 3 >/proc/sys/vm/drop_caches
a=$(dd if=/dev/$dev bs=1M skip=40 count=8 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
b=$(sha256sum </tmp/p2 | cut -d' ' -f1)
expect_eq "buffered write read back" "$a" "$b"
c=$(dd if="$nb" bs=1M skip=40 count=8 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
expect_eq "buffered write on the server" "$c" "$b"
unmap_dev "$dev"
