# SPDX-License-Identifier: GPL-2.0-only
# desc: flush and FUA reach the server device (fio --fsync=1 counted in its
#       flush statistics; an O_DSYNC write arrives with RNBD_F_FUA in the
#       server's io_submit event and goes to its device as a FUA bio),
#       the write cache and FUA flags are
#       mirrored, discard and write-zeroes work (blkdiscard, blkdiscard -z)
#       and read back zeroes; write-zeroes reaches the server as
#       WRITE_ZEROES where the device has it, and as zero pages written
#       where it has not
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 64 cache_size=16 discard=1)
dev=$(map_dev flush "$nb")
q=/sys/block/$dev/queue
expect_eq "write_cache" "$(cat $q/write_cache)" "write back"
expect_eq "fua" "$(cat $q/fua)" 1
[ "$(cat $q/discard_max_bytes)" -gt 0 ] || die "discard not advertised"
# null_blk has no write-zeroes: the client must not claim it either (the
# block layer then writes zero pages itself).
expect_eq "write-zeroes limit mirrors the server" \
	"$(cat $q/write_zeroes_max_bytes)" "$(cat /sys/block/nullb1/queue/write_zeroes_max_bytes)"
flushes() {	# completed flush requests of a block device (stat field 16)
	awk '{ print $16 }' "/sys/block/$1/stat"
}
s0=$(flushes "$(basename "$nb")")
c0=$(flushes "$dev")
fio --name=f --filename=/dev/$dev --rw=write --bs=4k --size=1M --fsync=1 \
	--ioengine=sync >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio --fsync=1"; }
s1=$(flushes "$(basename "$nb")")
c1=$(flushes "$dev")
log "flushes: client $c0 -> $c1, server $s0 -> $s1"
[ $((c1 - c0)) -ge 250 ] || die "only $((c1 - c0)) flushes on the client for 256 fsyncs"
expect_eq "flushes that reached the server" $((s1 - s0)) $((c1 - c0))

# server_ops CMD...: the server's io_submit events while CMD runs, one
# "op=OP flags=0xF len=N" line each; the bios queued to the server's
# device meanwhile (block_bio_queue: "RWBS SECTORS") go to /tmp/bios
TR=/sys/kernel/tracing
ndev=$(tr : , <"/sys/block/$(basename "$nb")/dev")
server_ops() {
	echo >"$TR/trace"
	echo 1 >"$TR/events/rnbd_srv/rnbd_srv_io_submit/enable"
	echo 1 >"$TR/events/rnbd_srv/rnbd_srv_io_complete/enable"
	echo 1 >"$TR/events/block/block_bio_queue/enable"
	"$@" || { echo 0 >"$TR/events/rnbd_srv/rnbd_srv_io_submit/enable"; die "$*"; }
	echo 0 >"$TR/events/rnbd_srv/rnbd_srv_io_submit/enable"
	echo 0 >"$TR/events/rnbd_srv/rnbd_srv_io_complete/enable"
	echo 0 >"$TR/events/block/block_bio_queue/enable"
	grep -c 'rnbd_srv_io_complete: .* err=-[0-9]' "$TR/trace" >/tmp/srv-errs || true
	sed -n "s/.*block_bio_queue: $ndev \([A-Z]*\) [0-9]* + \([0-9]*\) .*/\1 \2/p" \
		"$TR/trace" >/tmp/bios
	grep -o 'rnbd_srv_io_submit: .*' "$TR/trace" | grep -o 'op=.*' |
		sed 's/ sector=[0-9]*//'
}
# O_DSYNC direct writes are FUA writes: the flag reaches the server (FUA is
# RNBD_F_FUA, bit 0), and a plain direct write carries none (both carry
# RNBD_F_SYNC, 0x8, as every direct write does)
ops=$(server_ops dd if=/dev/urandom of=/dev/$dev bs=4k count=4 oflag=direct,dsync)
log "O_DSYNC writes on the server: $(echo "$ops" | sort | uniq -c | tr '\n' ';')"
expect_eq "FUA writes on the server" "$(echo "$ops" | grep -c '^op=WRITE flags=0x[0-9a-f]*[13579bdf] len=4096$')" 4
# ...and the server's bios to its device are FUA writes (rwbs "WF...")
log "bios to $nb: $(sort /tmp/bios | uniq -c | tr '\n' ';')"
expect_eq "FUA bios to $nb" "$(grep -c '^WF[A-Z]* 8$' /tmp/bios)" 4
ops=$(server_ops dd if=/dev/urandom of=/dev/$dev bs=4k count=4 oflag=direct)
expect_eq "plain writes on the server, without FUA" \
	"$(echo "$ops" | grep -c '^op=WRITE flags=0x[0-9a-f]*[02468ace] len=4096$')" 4
expect_eq "plain bios to $nb, without FUA" "$(grep -c '^W[^F]* 8$' /tmp/bios)" 4

head -c 4194304 /dev/urandom | dd of=/dev/$dev bs=1M oflag=direct 2>/dev/null
zero4m=$(head -c 4194304 /dev/zero | sha256sum | cut -d' ' -f1)
[ "$(sha_dev /dev/$dev 4194304)" != "$zero4m" ] || die "pattern not written"
blkdiscard -o 0 -l 4194304 /dev/$dev || die "blkdiscard"
expect_eq "discarded range on the server" "$(sha_dev "$nb" 4194304)" "$zero4m"
head -c 4194304 /dev/urandom | dd of=/dev/$dev bs=1M oflag=direct 2>/dev/null
ops=$(server_ops blkdiscard -z -o 0 -l 4194304 /dev/$dev)
# no write-zeroes on null_blk: the client's block layer wrote zero pages
echo "$ops" | grep -q '^op=WRITE_ZEROES' && die "WRITE_ZEROES sent to a device without it"
expect_eq "bytes written as zero pages" \
	"$(echo "$ops" | sed -n 's/^op=WRITE .*len=//p' | awk '{ s += $1 } END { print s + 0 }')" 4194304
expect_eq "write-zeroes through rnbd" "$(sha_dev /dev/$dev 4194304)" "$zero4m"
expect_eq "write-zeroes on the server" "$(sha_dev "$nb" 4194304)" "$zero4m"
unmap_dev "$dev"

# A loop device over a tmpfs file does support write-zeroes: it must be
# advertised and carried as such.
modprobe loop
truncate -s 64M /tmp/loop.img
lo=$(losetup -f --show /tmp/loop.img)
dev=$(map_dev wz "$lo")
wz=$(cat /sys/block/$dev/queue/write_zeroes_max_bytes)
[ "$wz" -gt 0 ] || die "write-zeroes of the loop device not advertised"
head -c 4194304 /dev/urandom | dd of=/dev/$dev bs=1M oflag=direct 2>/dev/null
# fallocate --punch-hole on a block device is a write-zeroes without
# REQ_NOUNMAP and without the block layer's fallback to zero pages (a
# BLKZEROOUT, blkdiscard -z, asks NOUNMAP, which loop turns into a
# ZERO_RANGE that tmpfs lacks: it fails, and zero pages are written)
ops=$(server_ops fallocate --punch-hole --keep-size -o 1048576 -l 2097152 /dev/$dev)
# carried as WRITE_ZEROES, and each one done on the server: a failed one
# would make the client's block layer write zero pages instead, and the
# data alone would not tell
log "requests on the server during the write-zeroes: $(echo "$ops" | sed 's/ flags=[^ ]*//' | sort | uniq -c | tr '\n' ';')"
expect_eq "WRITE_ZEROES bytes on the server" \
	"$(echo "$ops" | sed -n 's/^op=WRITE_ZEROES .*len=//p' | awk '{ s += $1 } END { print s + 0 }')" 2097152
expect_eq "requests the server failed during the write-zeroes" "$(cat /tmp/srv-errs)" 0
got=$(dd if="$lo" bs=1M skip=1 count=2 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
expect_eq "zeroed range on the loop device" "$got" "$(head -c 2097152 /dev/zero | sha256sum | cut -d' ' -f1)"
unmap_dev "$dev"
losetup -d "$lo"
