# SPDX-License-Identifier: GPL-2.0-only
# desc: the answer to an OPEN arrives while blk-mq's timeout handler of
#       that OPEN runs: the handler must touch only the request, not the
#       exchange its waiter frees when the answer completes it.  The OPEN's
#       path lookup hangs in a FUSE mount; once the 30 s request timeout
#       fired, the handler sleeps 3 s (fail_function on trs_should_delay()),
#       and the mount is aborted in those 3 s: the lookup fails, the server
#       answers, the map fails with the lookup's error (not ETIMEDOUT), its
#       session is released, and the handler then goes on: before the fix
#       it read the freed exchange and the closed transport session (KASAN:
#       use-after-free in trs_clt_sess_any, from rnbd_clt_admin_timeout);
#       now the release waits for it (blk_sync_queue()) and it touches only
#       the request.
# kernel: debug
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
[ -d "$FI_FF" ] || die "no fail_function in this kernel (KERNEL=debug)"
kmsg "admin-timeout-race: start"
rnbd_setup
fuse_hang /run/rnbd-hang
trap 'fi_delay_disarm; kill $FUSE_PID 2>/dev/null; wait $FUSE_PID 2>/dev/null; umount -l /run/rnbd-hang 2>/dev/null' EXIT

kmsg "admin-timeout-race: map below the hung mount"
sysfs_write "$MAP_CTL" \
	"sessname=ar path=ip:$RXE_ADDR device_path=/run/rnbd-hang/disk" \
	>/tmp/race-map.out &
mpid=$!
# the OPEN goes out as soon as the session is up
i=0
until klog | grep -q "ar: connected to"; do
	i=$((i + 1)); [ $i -lt $((300 * S)) ] || die "session ar did not connect"; sleep 0.1
done
# when the OPEN went out, in ms of uptime: the kernel's own time of the
# connect (on the debug kernel the log is read late, and the window is 3 s)
t_open=$(klog | grep -m1 "ar: connected to" |
	sed -n 's/^\[ *\([0-9]*\)\.\([0-9]\{3\}\).*/\1\2/p')
[ -n "$t_open" ] || die "no kernel time for the session's connect"
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
# the delay, armed only now, would slow the session's connect too; the
# admin timeout is 30 s whatever the timeout scale.  Counted from the
# connect's kernel time: a slow guest notices the connect seconds late.
until [ $(($(now_ms) - t_open)) -ge 25000 ]; do
	sleep 0.2
done
[ $(($(now_ms) - t_open)) -lt 29000 ] ||
	die "the connect was noticed too late to arm the delay before the timeout"
kill -0 $mpid 2>/dev/null || die "the map ended early: $(cat /tmp/race-map.out)"
fi_delay_arm
# blk-mq fires the timeout between 30 and 31 s after the OPEN; the
# handler then sleeps 3 s: the answer comes in the middle of that
until [ $(($(now_ms) - t_open)) -ge 31500 ]; do
	sleep 0.05
done
kmsg "admin-timeout-race: abort the mount"
kill $FUSE_PID
wait $FUSE_PID
umount -l /run/rnbd-hang || die "umount"
wait $mpid
r=$(cat /tmp/race-map.out)
log "the map failed with $r"
i=0
until klog | grep -q "session ar: no answer to OPEN for 30 s; reconnecting"; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "the timeout handler did not run"; sleep 0.1
done
fi_delay_disarm
trap - EXIT
# the answer, not the timeout, ended the OPEN: it came while the handler slept
case "$r" in
""|OK*|ETIMEDOUT*|ECONNABORTED*) die "the answer did not come within the handler: map said '$r'" ;;
esac
klog | grep -q "opening /run/rnbd-hang/disk failed" ||
	die "the server's OPEN did not end"
client_sessions_gone 30
unload_rnbd
true
