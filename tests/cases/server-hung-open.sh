# SPDX-License-Identifier: GPL-2.0-only
# desc: an OPEN whose file open hangs (file_exports=1, a file on a FUSE
#       mount whose daemon answers LOOKUP but holds every OPEN) holds up
#       nothing of its session: another device of the session maps and
#       does verified IO at once, one unmaps at once, the hung map fails
#       (ETIMEDOUT or ECONNABORTED) after the client's 30 s and the session
#       reconnects (the server closed the old one); the OPEN answered
#       late, after its session closed, is closed again (a log line, the
#       daemon sees the RELEASE); rdma link del returns at once while
#       another OPEN hangs; once the daemon is killed that OPEN fails and
#       everything unloads; and the hung OPEN's admin work keeps its
#       memory while it runs (the workqueue and kfree tracepoints): freed
#       at its start, it was recycled by the next OPEN's kmalloc() now and
#       then, and the workqueue, which runs a work at the address of one
#       running with the same function only after it, held that OPEN
#       behind the hung one (seen in CI at 0cdb714 and on 6.12 at c381f5d)
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
# not /tmp: the guest's root shows the host's files below its own
W=/run/rnbd-hung-open
M=$W/mnt
SERVER_PARAMS="file_exports=1"
kmsg "server-hung-open: start"
rnbd_setup
modprobe fuse || die "modprobe fuse"
nbA=$(nullb_create nullb1 32)
nbB=$(nullb_create nullb2 32)
rm -rf $W
mkdir -p $M
# its OPENs wait until SIGUSR1, or its end (at the latest after 300 s)
python3 "$REPO/tests/lib/fuse-hold-open.py" $M $((16 * 1048576)) $((300 * S)) \
	>$W/fho.out 2>&1 &
fpid=$!
# on any exit the hung OPENs end, so the cleanup after the case can unload
trap 'kill $fpid 2>/dev/null; wait $fpid 2>/dev/null; umount -l $M 2>/dev/null; rmdir $T 2>/dev/null' EXIT

# A trace of the server's admin works (their starts and ends) and of the
# kfree() calls made from their function, in a tracing instance of its own
T=/sys/kernel/tracing/instances/rnbd-hung-open
grep -q " /sys/kernel/tracing " /proc/mounts || mount -t tracefs nodev /sys/kernel/tracing ||
	die "mount tracefs"
fa=$(awk '$3 == "rnbd_srv_admin_work" && $4 == "[rnbd_server]" { print $1; exit }' /proc/kallsyms)
# where the function ends: the module's next symbol
fb=$(awk '$4 == "[rnbd_server]" { print $1 }' /proc/kallsyms | sort | awk -v a="$fa" '$1 > a { print; exit }')
[ -n "$fa" ] && [ -n "$fb" ] || die "rnbd_srv_admin_work not in /proc/kallsyms ($fa, $fb)"
mkdir $T || die "mkdir $T"
for e in workqueue/workqueue_execute_start workqueue/workqueue_execute_end; do
	echo "function == 0x$fa" >$T/events/$e/filter && echo 1 >$T/events/$e/enable ||
		die "trace $e"
done
echo "call_site >= 0x$fa && call_site < 0x$fb" >$T/events/kmem/kfree/filter &&
	echo 1 >$T/events/kmem/kfree/enable || die "trace kmem/kfree"

# fho_wait LINE SECONDS [PID]: the FUSE daemon printed LINE, while the
# map PID waits
fho_wait() {
	i=0
	until grep -qx "$1" $W/fho.out; do
		i=$((i + 1))
		kill -0 $fpid 2>/dev/null || die "the FUSE daemon ended: $(cat $W/fho.out)"
		[ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null ||
			die "the map ended before its OPEN reached the FUSE daemon: $(cat $W/ho-map*.out)"
		[ $i -lt $(($2 * 10 * S)) ] || die "FUSE daemon: no '$1' in $2 s: $(cat $W/fho.out)"
		sleep 0.1
	done
}
# since T SECONDS: fail unless at most SECONDS (scaled) passed since T
since() {
	el=$(($(date +%s) - $1))
	[ $el -le $(($2 * S)) ] || die "$3 took $el s (at most $(($2 * S)) s)"
	log "$3: $el s"
}
fho_wait mounted 30
grep -q " $M fuse" /proc/mounts || die "no FUSE mount on $M"

devA=$(map_dev ho "$nbA")
dd if=/dev/urandom of=$W/ho-a bs=64k count=16 2>/dev/null
dd if=$W/ho-a of=/dev/$devA bs=64k oflag=direct 2>/dev/null || die "write to $devA"

t0=$(date +%s)
kmsg "server-hung-open: map the file whose OPEN hangs"
sysfs_write "$MAP_CTL" "sessname=ho path=ip:$RXE_ADDR device_path=$M/disk" \
	>$W/ho-map1.out &
m1=$!
fho_wait "open held 1" 30 $m1
kill -0 $m1 2>/dev/null || die "the hung map ended early: $(cat $W/ho-map1.out)"

# The admin work of the hung OPEN runs (started, not ended): it must not
# have freed its memory (struct rnbd_srv_admin, whose first member is the
# work) since it started.  The pointers are hashed alike in one boot.
cat $T/trace >$W/trace
running=$(awk '
	{ for (i = 1; i < NF; i++) if ($i == "struct") { w = $(i + 1); sub(/:$/, "", w) } }
	/workqueue_execute_start:/ { run[w] = 1; freed[w] = 0 }
	/workqueue_execute_end:/ { delete run[w] }
	/ kfree: / { p = $0; sub(/.* ptr=/, "", p); sub(/ .*/, "", p); if (p in run) freed[p] = 1 }
	END { for (w in run) print w, (freed[w] ? "freed" : "kept") }' $W/trace)
log "admin works running while the OPEN hangs: $running"
[ "$(echo "$running" | grep -c .)" = 1 ] ||
	die "want one admin work running (the hung OPEN's), got '$running': $(cat $W/trace)"
case $running in
*kept) ;;
*) die "the hung OPEN's admin work freed its memory while it runs: $(cat $W/trace)" ;;
esac

# the session's other OPENs and CLOSEs go on meanwhile
t1=$(date +%s)
if ! devB=$(map_dev ho "$nbB"); then
	# what waits, for the report's kernel log
	echo w >/proc/sysrq-trigger
	die "map of $nbB on the session of the hung OPEN failed after $(($(date +%s) - t1)) s"
fi
since $t1 10 "map of $nbB on the session of the hung OPEN"
dd if=/dev/urandom of=$W/ho-b bs=64k count=16 2>/dev/null
dd if=$W/ho-b of=/dev/$devB bs=64k oflag=direct 2>/dev/null || die "write to $devB"
expect_eq "data on $devB" "$(sha_dev /dev/$devB 1048576)" "$(sha256sum <$W/ho-b | cut -d' ' -f1)"
expect_eq "data on $devA" "$(sha_dev /dev/$devA 1048576)" "$(sha256sum <$W/ho-a | cut -d' ' -f1)"
t1=$(date +%s)
unmap_dev "$devA" || die "unmap $devA"
since $t1 10 "unmap of $devA while the OPEN hangs"
klog | grep -q "closing the device on the server failed" && die "the CLOSE of $devA failed"
kill -0 $m1 2>/dev/null || die "the hung map ended early: $(cat $W/ho-map1.out)"

# the hung map gives up; the reconnect needs the server to close the old
# session, whose OPEN still waits
wait $m1
r=$(cat $W/ho-map1.out)
case $r in
ETIMEDOUT | ECONNABORTED) ;;
*) die "map of the file whose OPEN hangs: $r" ;;
esac
since $t0 45 "the hung map failed with $r"
t1=$(date +%s)
wait_path_state ho connected 60
since $t1 60 "reconnect of session ho while its old OPEN hangs"
expect_eq "data on $devB after the reconnect" "$(sha_dev /dev/$devB 1048576)" \
	"$(sha256sum <$W/ho-b | cut -d' ' -f1)"
[ -z "$(ls /sys/class/rnbd-server/ctl/files/)" ] || die "a file export before the OPEN ended"

# the daemon answers: the server opened the file for a closed session,
# and closes it again
kill -USR1 $fpid
fho_wait "open answered 1" 10
i=0
until klog | grep -q "$M/disk opened after the session closed: closed again"; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "no log line of the late OPEN"; sleep 0.1
done
fho_wait release 10
[ -z "$(ls /sys/class/rnbd-server/ctl/files/)" ] ||
	die "file exports left after the late OPEN: $(ls /sys/class/rnbd-server/ctl/files/)"

# the server's teardown of a session whose OPEN hangs: rdma link del
sysfs_write "$MAP_CTL" "sessname=hz path=ip:$RXE_ADDR device_path=$M/disk" \
	>$W/ho-map2.out &
m2=$!
fho_wait "open held 2" 30 $m2
t1=$(date +%s)
kmsg "server-hung-open: rdma link del while an OPEN hangs"
rdma link del "$RXE_DEV" &
lpid=$!
i=0
while kill -0 $lpid 2>/dev/null; do
	# (the daemon's end, on exit, lets a hung one finish)
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "rdma link del while an OPEN hangs: still running after $((10 * S)) s"; sleep 0.1
done
wait $lpid || die "rdma link del failed"
since $t1 10 "rdma link del while an OPEN hangs"
wait $m2
r=$(cat $W/ho-map2.out)
[ "$r" != OK ] || die "the map whose OPEN hangs succeeded without an RDMA device"
log "the second hung map: $r"

# kill the daemon: the OPEN fails, its old session goes
kill $fpid
wait $fpid || true
umount -l $M || die "umount"
rm -rf $W
trap - EXIT
i=0
# the first OPEN, closed again, failed too
until [ "$(klog | grep -c "opening $M/disk failed")" -ge 2 ]; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "the server's second OPEN did not end"; sleep 0.1
done
expect_eq "unmap $devB" "$(sysfs_write /sys/block/$devB/rnbd/unmap_device force)" OK
t1=$(date +%s)
unload_rnbd
since $t1 30 "unload"
klog | grep -E "BUG|WARNING|hung_task" && die "kernel complaint"
true
