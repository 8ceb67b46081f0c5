# SPDX-License-Identifier: GPL-2.0-only
# desc: a map whose session directory fails half way (its paths/ directory
#       cannot be made) while an add_path write to that session waits for
#       the session's paths_mutex.  The directory must be removed after
#       the map's open dropped the mutex: removed under it, the removal
#       waits for the add_path store and the store for the mutex, and both
#       hang (before the fix, trs_clt_sysfs_add() removed it itself).  On
#       the debug kernel the session directory's setup sleeps 3 s
#       (fail_function on trs_should_delay()) right after the directory
#       appears; the case then writes add_path and makes the next
#       allocation, the paths/ directory's, fail (trs_should_fail_alloc()).
#       The map must fail with ENOMEM, the add_path write with ENODEV (the
#       session is closing), and nothing of the session may stay.
# boot: shared
# kernel: debug
# timeout: 600
S=${RNBD_TIMEOUT_SCALE:-1}
[ -d "$FI_FF" ] || die "no fail_function in this kernel (KERNEL=debug)"
FN=trs_should_fail_alloc
fail_disarm() {
	echo 0 >"$FI_FF/probability"
	if grep -q "^$FN\\b" "$FI_FF/inject" 2>/dev/null; then
		echo "!$FN" >"$FI_FF/inject"
	fi
}
trap 'fi_delay_disarm; fail_disarm' EXIT
rnbd_setup
nb=$(nullb_create nullb0 32)
SESS=/sys/class/rtrs-client/sr

kmsg "session-sysfs-fail-race: map with the setup delay armed"
# the server's path setup sleeps 3 s too (another site of the same delay)
fi_delay_arm
sysfs_write "$MAP_CTL" "sessname=sr path=ip:$RXE_ADDR device_path=$nb" \
	>/tmp/sr-map.out &
mpid=$!
i=0
until [ -e $SESS/add_path ]; do
	i=$((i + 1)); [ $i -lt $((600 * S)) ] || die "session sr did not appear"
	kill -0 $mpid 2>/dev/null || die "the map ended early: $(cat /tmp/sr-map.out)"
	sleep 0.05
done
# The session directory's setup sleeps now.  Its next allocation is the
# paths/ directory: make that one fail (fail_function's settings are
# shared by the functions it injects, so the delay goes first).
fi_delay_disarm
echo $FN >"$FI_FF/inject"
echo 1 >"$FI_FF/$FN/retval"
echo 0 >"$FI_FF/space"
echo 1 >"$FI_FF/interval"
echo 1 >"$FI_FF/times"
echo 2 >"$FI_FF/verbose"
echo 100 >"$FI_FF/probability"
sysfs_write $SESS/add_path "ip:$RXE_ADDR" >/tmp/sr-add.out &
apid=$!
# the add_path store waits for paths_mutex, which the map's open holds
i=0
until grep -q trs_clt_add_path /proc/$apid/stack 2>/dev/null; do
	i=$((i + 1))
	kill -0 $mpid 2>/dev/null ||
		die "the map ended before add_path waited: $(cat /tmp/sr-map.out)"
	[ $i -lt 40 ] || die "add_path did not wait for the session"
	sleep 0.05
done
log "add_path waits: $(grep -m1 -o 'trs_clt_add_path[^ ]*' /proc/$apid/stack)"
# Done in seconds; hung, the guest's hung task check (60 s) panics it.
i=0
while kill -0 $mpid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 900 ] || die "the map hangs: the session directory's removal waits for the add_path store, and the store for paths_mutex"
	sleep 0.1
done
wait $apid
left=$(cat "$FI_FF/times")
fail_disarm
trap - EXIT
r=$(cat /tmp/sr-map.out)
a=$(cat /tmp/sr-add.out)
log "map: $r; add_path: $a; failures left: $left"
[ "$left" = 0 ] || die "no allocation failed"
# the failure was the paths/ directory's (verbose 2 dumps its stack)
klog | grep -A40 "FAULT_INJECTION: forcing a failure" | grep -q trs_clt_sysfs_add ||
	die "the injected failure was not trs_clt_sysfs_add()'s"
case "$r" in ENOMEM*) ;; *) die "the map said '$r', not ENOMEM" ;; esac
case "$a" in ENODEV*) ;; *) die "add_path said '$a', not ENODEV" ;; esac
client_sessions_gone 30
[ -z "$(ls /sys/block | grep rnbd)" ] || die "a device is left"
# the session works once the failure is gone
d=$(map_dev sr "$nb") || die "the second map failed"
unmap_dev "$d"
unload_rnbd
true
