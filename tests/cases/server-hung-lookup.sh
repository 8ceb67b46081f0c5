# SPDX-License-Identifier: GPL-2.0-only
# desc: an OPEN whose path lookup hangs in a mount that never answers (a
#       FUSE file system whose daemon reads no request) blocks nothing
#       else: the session's other device keeps doing verified IO, another
#       session maps at once, the hung map fails (ETIMEDOUT or ECONNABORTED)
#       when the client's 30 s are up and its session reconnects; once the
#       mount is aborted the server ends the OPEN, and everything unmaps
#       and unloads
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
kmsg "server-hung-lookup: start"
rnbd_setup
nbA=$(nullb_create nullb1 64)
nbB=$(nullb_create nullb2 16)
# never look below the mount point from here: that would hang too
fuse_hang /run/rnbd-hang
fpid=$FUSE_PID
# on any exit the hung lookup ends, so the cleanup after the case can unload
trap 'kill $fpid 2>/dev/null; wait $fpid 2>/dev/null; umount -l /run/rnbd-hang 2>/dev/null' EXIT

devA=$(map_dev hl "$nbA")
# writes at 200 a second for about a minute, then a verify pass; the
# hung map starts once they flow (fio starts slowly on the debug kernel)
fio_outage_start "$devA" 48M
i=0
until [ "$(awk '{ print $5 }' /sys/block/$devA/stat)" -gt 0 ]; do
	i=$((i + 1))
	[ $i -lt $((300 * S)) ] || die "fio wrote nothing to $devA in $((30 * S)) s"
	sleep 0.1
done

t0=$(date +%s)
kmsg "server-hung-lookup: map below the hung mount"
sysfs_write "$MAP_CTL" \
	"sessname=hl path=ip:$RXE_ADDR device_path=/run/rnbd-hang/disk" \
	>/tmp/hung-map.out &
mpid=$!
# the OPEN waits in the server's lookup, not in the connection's work
sleep 2
kill -0 $mpid 2>/dev/null || die "the map below the hung mount ended early: $(cat /tmp/hung-map.out)"

# another session maps and reads at once
t1=$(date +%s)
devB=$(map_dev hl2 "$nbB")
dd if=/dev/urandom of=/tmp/hl-data bs=64k count=16 2>/dev/null
dd if=/tmp/hl-data of=/dev/$devB bs=64k oflag=direct 2>/dev/null || die "write to $devB"
expect_eq "data on the other session" \
	"$(dd if=/dev/$devB bs=64k count=16 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/hl-data)"
t2=$(date +%s)
log "another session mapped and did IO in $((t2 - t1)) s while the lookup hung"
[ $((t2 - t1)) -le $((10 * S)) ] || die "the other session took $((t2 - t1)) s"
kill -0 $mpid 2>/dev/null || die "the map below the hung mount ended early: $(cat /tmp/hung-map.out)"
# and the hung session's own device went on meanwhile
w0=$(awk '{ print $5 }' /sys/block/$devA/stat)
sleep 2
w1=$(awk '{ print $5 }' /sys/block/$devA/stat)
log "writes on $devA during 2 s of the hung OPEN: $((w1 - w0))"
[ $((w1 - w0)) -gt 0 ] || die "$devA did no write while the OPEN hung"

wait $mpid
t3=$(date +%s)
# the OPEN's request timeout (30 s, blk-mq's) reconnects the session,
# which hands the OPEN back, and the map fails with ETIMEDOUT
r=$(cat /tmp/hung-map.out)
expect_eq "map below the hung mount" "$r" ETIMEDOUT
klog | grep -q "session hl: no answer to OPEN for 30 s; reconnecting" ||
	die "no log line for the OPEN timeout"
log "the hung map failed with $r after $((t3 - t0)) s"
[ $((t3 - t0)) -le $((45 * S)) ] || die "the hung map took $((t3 - t0)) s"
# the session reconnected (the server closed the old one although its
# OPEN still waits) and its device finishes its verified IO
wait_path_state hl connected 60
fio_wait_ok $FIO_PID

# abort the mount: the lookup fails, the OPEN ends, and its old session's
# chunks go
kill $fpid
wait $fpid
umount -l /run/rnbd-hang || die "umount"
trap - EXIT
i=0
until klog | grep -q "opening /run/rnbd-hang/disk failed"; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "the server's OPEN did not end"; sleep 0.1
done
unmap_dev "$devA"
unmap_dev "$devB"
client_sessions_gone 10
unload_rnbd
klog | grep -E "BUG|WARNING|hung_task" && die "kernel complaint"
true
