# SPDX-License-Identifier: GPL-2.0-only
# desc: a server that answers reads with fewer bytes than asked, status 0
#       (tests/kmod/rnbd_liar): the client fails each such read with EIO and
#       says so, never hands the user bytes the server did not send; the
#       same module telling the truth passes (bounce-buffer and MR reads)
# boot: shared
# timeout: 300
rnbd_setup
liar=$REPO/tests/kmod/rnbd_liar.ko

# read BS DEV: one direct read of BS bytes at offset 0; prints its sha256
# or "EIO"
read_one() {
	if dd if="/dev/$2" of=/tmp/short-read bs="$1" count=1 iflag=direct \
		2>/tmp/short-read.err; then
		sha256sum </tmp/short-read | cut -d' ' -f1
	else
		grep -q 'Input/output error' /tmp/short-read.err && echo EIO ||
			cat /tmp/short-read.err
	fi
}

for mode in full short empty; do
	ko_insert "$liar" mode=$mode
	dev=$(map_dev "liar-$mode" /liar dest_port=1235) || die "map ($mode)"
	for bs in 4096 65536; do
		got=$(read_one $bs "$dev")
		if [ $mode = full ]; then
			want=$(head -c $bs /dev/zero | tr '\0' '\245' | sha256sum | cut -d' ' -f1)
		else
			want=EIO
		fi
		expect_eq "$mode answer to a $bs-byte read" "$got" "$want"
		log "$mode, $bs bytes: $got"
	done
	if [ $mode != full ]; then
		klog | grep -q "read on slot .* answered with .* bytes: I/O error" ||
			die "no log line for the short read ($mode)"
		# a write still works: only the lying reads fail
		dd if=/dev/zero of="/dev/$dev" bs=4k count=1 oflag=direct 2>/dev/null ||
			die "write after a short read failed ($mode)"
	fi
	unmap_dev "$dev"
	rmmod rnbd_liar || die "rmmod rnbd_liar ($mode)"
done
