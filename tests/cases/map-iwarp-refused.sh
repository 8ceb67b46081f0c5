# SPDX-License-Identifier: GPL-2.0-only
# desc: a map over an iWARP device (soft-iWARP, siw), which has no RDMA
#       WRITE with immediate data, fails fast with EOPNOTSUPP and a dmesg
#       line that says so, leaves nothing behind, and the client maps over
#       soft-RoCE on the same netdev afterwards
# boot: shared
# kernel: debug
# timeout: 300
modprobe siw || die "modprobe siw (the debug kernel has it; Debian's has not)"
modprobe rdma_ucm || die "modprobe rdma_ucm"
lsmod | grep -q '^dummy ' || modprobe dummy numdummies=0 || die "modprobe dummy"
ip link add dummy0 type dummy
ip link set dummy0 mtu "$RXE_MTU" up
ip addr add "$RXE_ADDR/24" dev dummy0
rdma link add siw0 type siw netdev dummy0 || die "rdma link add siw0"
i=0
until rdma link show siw0/1 2>/dev/null | grep -q 'state ACTIVE'; do
	i=$((i + 1))
	[ $i -lt 50 ] || die "siw0 did not become ACTIVE"
	sleep 0.1
done
log "$(rdma link show siw0/1)"
load_rnbd
nb=$(nullb_create nullb0 16)
kmsg "map over iWARP"
t0=$(date +%s)
r=$(sysfs_write "$MAP_CTL" "sessname=iw path=ip:$RXE_ADDR device_path=$nb")
t1=$(date +%s)
# errno 95 (Python names it ENOTSUP, its alias)
case "$r" in EOPNOTSUPP|ENOTSUP) ;; *) die "map over siw0: got $r, expected EOPNOTSUPP" ;; esac
# Fast: no connect timeout (10 s per step) was waited for.
[ $((t1 - t0)) -lt $((5 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
	die "the refused map took $((t1 - t0)) s"
klog | grep -q 'siw0: iWARP has no RDMA WRITE with immediate data' ||
	die "no dmesg line naming the iWARP device"
! ls -d /sys/block/rnbd* >/dev/null 2>&1 || die "a device was left"
[ ! -e /sys/class/rtrs-client/iw ] || die "session iw was left"
rdma link del siw0 || die "rdma link del siw0"
rmmod siw || die "rmmod siw"
# The same netdev with soft-RoCE (setup_rxe adds the address itself): the
# map works.
ip addr del "$RXE_ADDR/24" dev dummy0
setup_rxe
dev=$(map_dev iw "$nb")
expect_eq "size over rxe" "$(cat /sys/block/$dev/size)" 32768
unmap_dev "$dev"
