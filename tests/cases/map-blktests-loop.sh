# SPDX-License-Identifier: GPL-2.0-only
# desc: blktests rnbd/001 and rnbd/002 with their exact commands: map a
#       free loop device (size 0) as session "blktest", unmap it with
#       "normal"; then 100 map/unmap rounds, every one must succeed
# boot: shared
# timeout: 900
rnbd_setup
modprobe loop
def_traddr=$RXE_ADDR

_stop_rnbd_client() {
	for s in /sys/block/rnbd*; do
		[ -e "$s" ] || continue
		if grep -qx blktest "$s"/rnbd/session; then
			echo "normal" >"$s"/rnbd/unmap_device
		fi
	done
}

_start_rnbd_client() {
	_stop_rnbd_client
	echo "sessname=blktest path=ip:$def_traddr device_path=$1" > \
		/sys/devices/virtual/rnbd-client/ctl/map_device
}

loop_dev="$(losetup -f)"
log "rnbd/001 with $loop_dev"
_start_rnbd_client "$loop_dev" || die "Failed to connect rnbd"
sleep 0.5
dev=$(basename /sys/block/rnbd*)
expect_eq "session" "$(cat /sys/block/$dev/rnbd/session)" blktest
expect_eq "mapping_path" "$(cat /sys/block/$dev/rnbd/mapping_path)" "$loop_dev"
expect_eq "size of a free loop device" "$(cat /sys/block/$dev/size)" 0
_stop_rnbd_client || die "Failed to disconnect rnbd"
[ ! -e "/sys/block/$dev" ] || die "$dev still present after unmap"

log "rnbd/002: 100 rounds"
t0=$(date +%s.%N)
ok=0
for i in $(seq 100); do
	if _start_rnbd_client "$loop_dev" && ls -d /sys/block/rnbd* >/dev/null 2>&1; then
		_stop_rnbd_client && ok=$((ok + 1))
	fi
done
ls -d /sys/block/rnbd* 2>/dev/null && die "devices left after the loop"
log "rnbd/002: 100 rounds in $(echo "$(date +%s.%N) - $t0" | bc) s"
expect_eq "start/stop success ratio" "$ok/100" "100/100"
[ -z "$(ls /sys/class/rtrs-client/ 2>/dev/null)" ] || die "session left: $(ls /sys/class/rtrs-client/)"
