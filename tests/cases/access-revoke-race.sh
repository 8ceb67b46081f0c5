# SPDX-License-Identifier: GPL-2.0-only
# desc: an export removed while an OPEN it allowed is in flight: the OPEN
#       passed the check, and sleeps 3 s (fail_function on
#       trs_should_delay()) before its device joins the session; the
#       export is removed in those 3 s, so the revocation work looks
#       before the device is there.  The device must still be closed
#       within 5 s of its map (its IO fails).  Before the fix the map
#       succeeded and the device stayed open for good.  The session's
#       other device goes on.
# kernel: debug
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
[ -d "$FI_FF" ] || die "no fail_function in this kernel (KERNEL=debug)"
kmsg "access-revoke-race: start"
rnbd_setup
SCTL=/sys/class/rnbd-server/ctl
trap 'fi_delay_disarm' EXIT
nb0=$(nullb_create nullb0 64)
nb=$(nullb_create nullb1 64)
echo listed >/sys/module/rnbd_server/parameters/exports
echo "add $nb0 * rw" >$SCTL/exports || die "export add"
echo "add $nb * rw" >$SCTL/exports || die "export add"
# the session first (a path's join has a delay of its own), then the OPEN
r=$(sysfs_write "$MAP_CTL" "sessname=rr path=ip:$RXE_ADDR device_path=$nb0")
[ "$r" = OK ] || die "map of $nb0: $r"
dev0=$(basename "$(ls -d /sys/block/rnbd* | head -1)")

fi_delay_arm
# the fault injection's report says when the OPEN starts its sleep
echo 1 >"$FI_FF/verbose"
kmsg "access-revoke-race: map"
sysfs_write "$MAP_CTL" "sessname=rr path=ip:$RXE_ADDR device_path=$nb" \
	>/tmp/rr-map.out &
mpid=$!
i=0
until klog | grep -q "FAULT_INJECTION: forcing a failure"; do
	i=$((i + 1))
	[ $i -lt $((300 * S)) ] || die "the OPEN never reached its sleep"
	sleep 0.05
done
echo "remove $nb" >$SCTL/exports || die "export remove"
kmsg "access-revoke-race: export removed"
fi_delay_disarm
wait $mpid
res=$(cat /tmp/rr-map.out)
[ "$res" = OK ] || die "the map failed with $res: the export went before the check (window missed)"
t0=$(date +%s%N)
dev=
for d in /sys/block/rnbd*; do
	[ "$(cat "$d/rnbd/mapping_path" 2>/dev/null)" = "$nb" ] && dev=$(basename "$d")
done
[ -n "$dev" ] || die "no device of $nb"
i=0
while dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt $((50 * S)) ] || die "the device is still open 5 s after its map, its export removed"
	sleep 0.1
done
log "the device's IO failed $((($(date +%s%N) - t0) / 1000000)) ms after its map"
klog | grep -q "may no longer have $nb open: closed" ||
	die "no server line for the revocation"
dd if=/dev/$dev0 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null ||
	die "the other device of the session failed its IO"
unmap_dev "$dev"
unmap_dev "$dev0"
echo "remove $nb0" >$SCTL/exports || die "export remove"
echo all >/sys/module/rnbd_server/parameters/exports
client_sessions_gone 30
unload_rnbd
true
