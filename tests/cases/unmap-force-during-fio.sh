# SPDX-License-Identifier: GPL-2.0-only
# desc: unmap "force" while fio runs: fio sees errors and ends promptly, no
#       hang, no splat; a disk held open past its force unmap keeps its
#       name (rnbdN) until its last close: a new map gets another one, and
#       the name is free again after the close; every module unloads
#       afterwards
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

# Held open: its index stays taken until the last close (.free_disk).
held=$(map_dev force "$nb") || die "map"
exec 3<"/dev/$held"
expect_eq "unmap force of $held held open" \
	"$(sysfs_write /sys/block/$held/rnbd/unmap_device force)" OK
[ ! -e "/sys/block/$held" ] || die "$held still there"
next=$(map_dev force "$nb") || die "map while $held is held open"
log "$held held open after its force unmap; a new map is $next"
[ "$next" != "$held" ] || die "$next: the name of $held, still open, given again"
exec 3<&-
unmap_dev "$next" || die "unmap $next"
# the last close freed it (an RCU grace period may come first)
i=0
while :; do
	again=$(map_dev force "$nb") || die "map after the close of $held"
	[ "$again" != "$held" ] || break
	unmap_dev "$again" || die "unmap $again"
	i=$((i + 1))
	[ $i -lt 20 ] || die "$held never free again after its last close (got $again)"
	sleep 0.5
done
log "after the close, a new map is $again again"
unmap_dev "$again" || die "unmap $again"
for m in rnbd_client rnbd_server rnbd_trs_client rnbd_trs_server rnbd_trs_core; do
	rmmod $m || die "rmmod $m"
done
