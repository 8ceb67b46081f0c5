# SPDX-License-Identifier: GPL-2.0-only
# desc: unmap "force" while fio runs: fio sees errors and ends promptly, no
#       hang, no splat; every module unloads afterwards
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 128)
dev=$(map_dev force "$nb")
fio --name=f --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=randrw \
	--bs=4k --iodepth=32 --numjobs=2 --time_based --runtime=120 \
	>/tmp/fio.out 2>&1 &
fpid=$!
sleep 5
kill -0 $fpid || { cat /tmp/fio.out; die "fio ended early"; }
t0=$(date +%s)
expect_eq "unmap force" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device force)" OK
i=0
while kill -0 $fpid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 300 ] || die "fio still running 30 s after force unmap"
	sleep 0.1
done
fio_rc=0
wait $fpid || fio_rc=$?
log "fio ended $(( $(date +%s) - t0 )) s after unmap, status $fio_rc"
[ "$fio_rc" != 0 ] || die "fio saw no error"
[ ! -e /sys/block/$dev ] || die "$dev still there"
for m in rnbd_client rnbd_server rnbd_trs_client rnbd_trs_server rnbd_trs_core; do
	rmmod $m || die "rmmod $m"
done
