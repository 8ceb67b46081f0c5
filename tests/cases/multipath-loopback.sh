# SPDX-License-Identifier: GPL-2.0-only
# desc: a two-path session in one guest (two server addresses on the rxe
#       netdev): map with two path=, both paths connected on the client and
#       on the server (/sys/class/rtrs-server), fio write+verify while path
#       2 is disconnected, reconnected, removed and added back (0 errors,
#       no IO error in dmesg), remove_path of the last path is EBUSY, each
#       policy (round-robin, min-inflight, min-latency) moves data on both
#       paths, round-robin within 10% by requests; a session of a server
#       without the second address fails to add that path, cleanly
# boot: shared
# timeout: 600
S=${RNBD_TIMEOUT_SCALE:-1}
rnbd_setup
A1=$RXE_ADDR
A2=10.9.1.1
ip addr add $A2/24 dev "$RXE_NETDEV" || die "second address"
kmsg "multipath-loopback: start"
nb=$(nullb_create nullb1 128)
sess=mp
C=/sys/class/rtrs-client/$sess
P1="ip:$A1@ip:$A1"
P2="ip:$A2@ip:$A2"

before=$(ls -d /sys/block/rnbd* 2>/dev/null || true)
r=$(sysfs_write "$MAP_CTL" "sessname=$sess path=ip:$A1 path=ip:$A2@ip:$A2 device_path=$nb")
expect_eq "map with two paths" "$r" OK
dev=
for d in /sys/block/rnbd*; do
	echo "$before" | grep -qx "$d" || dev=$(basename "$d")
done
[ -n "$dev" ] || die "no new rnbd device"
expect_eq "paths" "$(ls "$C/paths" | sort | tr '\n' ' ')" "$P1 $P2 "
expect_eq "path 1 state" "$(cat "$C/paths/$P1/state")" connected
expect_eq "path 2 state" "$(cat "$C/paths/$P2/state")" connected
expect_eq "default policy" "$(cat "$C/mpath_policy")" "round-robin (RR: 0)"
# the server: one session, two paths, as the client names them
ssess=$(ls /sys/class/rtrs-server)
expect_eq "server sessions" "$(echo "$ssess" | wc -l)" 1
expect_eq "server paths" "$(ls "/sys/class/rtrs-server/$ssess/paths" | sort | tr '\n' ' ')" "$P1 $P2 "
expect_eq "server path src_addr" "$(cat "/sys/class/rtrs-server/$ssess/paths/$P2/src_addr")" "ip:$A2"
expect_eq "server path state" "$(cat "/sys/class/rtrs-server/$ssess/paths/$P2/state")" connected
expect_eq "server path hca" "$(cat "/sys/class/rtrs-server/$ssess/paths/$P2/hca_name")" "$RXE_DEV"

# requests of a path, from its stats/rdma (reads + writes)
reqs() { awk '{ print $1 + $3 }' "$C/paths/$1/stats/rdma"; }
srv_reqs() { awk '{ print $1 + $3 }' "/sys/class/rtrs-server/$ssess/paths/$1/stats/rdma"; }
wait_state() {	# wait_state PATH STATE SECONDS
	i=0
	until [ "$(cat "$C/paths/$1/state" 2>/dev/null)" = "$2" ]; do
		i=$((i + 1))
		[ $i -lt $(($3 * 10 * S)) ] || die "path $1 stays $(cat "$C/paths/$1/state" 2>/dev/null), waited for $2"
		sleep 0.1
	done
}
fio_check() {
	wait "$1" || { cat /tmp/fio.out; die "fio failed"; }
	if grep -o 'err= *[0-9]*' /tmp/fio.out | grep -vq 'err= *0$'; then
		cat /tmp/fio.out
		die "fio reported an error"
	fi
	grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "no fio report"; }
}

# (1) each policy moves data on both paths
for pol in round-robin min-inflight min-latency; do
	expect_eq "policy $pol" "$(sysfs_write "$C/mpath_policy" "$pol")" OK
	a0=$(reqs "$P1"); b0=$(reqs "$P2")
	fio --name=p --filename=/dev/$dev --ioengine=libaio --direct=1 \
		--rw=randrw --bs=4k --iodepth=16 --size=32M --io_size=8M \
		--numjobs=2 --cpus_allowed=0,1 --cpus_allowed_policy=split \
		--group_reporting >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio $pol"; }
	a=$(($(reqs "$P1") - a0)); b=$(($(reqs "$P2") - b0))
	log "$pol: path 1 $a requests, path 2 $b"
	[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || die "$pol: a path carried nothing ($a, $b)"
	if [ "$pol" = round-robin ]; then
		d=$((a > b ? a - b : b - a))
		[ $((d * 10)) -le $((a + b)) ] ||
			die "round-robin: $a and $b requests differ by more than 10%"
	fi
done
expect_eq "policy by number" "$(sysfs_write "$C/mpath_policy" 1)" OK
expect_eq "policy shown" "$(cat "$C/mpath_policy")" "min-inflight (MI: 1)"
expect_eq "bad policy" "$(sysfs_write "$C/mpath_policy" 3)" EINVAL
expect_eq "bad policy name" "$(sysfs_write "$C/mpath_policy" fastest)" EINVAL
sysfs_write "$C/mpath_policy" round-robin >/dev/null
[ "$(srv_reqs "$P2")" -gt 0 ] || die "the server counted no request on path 2"

# (2) admin operations on path 2 under fio write+verify
fio --name=v --filename=/dev/$dev --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=24M --rate_iops=,300 \
	--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
	>/tmp/fio.out 2>&1 &
fpid=$!
sleep 3
kmsg "disconnect path 2"
expect_eq "disconnect" "$(sysfs_write "$C/paths/$P2/disconnect" 1)" OK
expect_eq "disconnected" "$(cat "$C/paths/$P2/state")" disconnected
b0=$(reqs "$P2")
sleep 3
expect_eq "no traffic on a disconnected path" "$(reqs "$P2")" "$b0"
expect_eq "path 1 still" "$(cat "$C/paths/$P1/state")" connected
kmsg "reconnect path 2"
expect_eq "reconnect" "$(sysfs_write "$C/paths/$P2/reconnect" 1)" OK
wait_state "$P2" connected 20
b0=$(reqs "$P2")
sleep 3
[ "$(reqs "$P2")" -gt "$b0" ] || die "path 2 takes no traffic after its reconnect"
kmsg "remove path 2"
expect_eq "remove_path" "$(sysfs_write "$C/paths/$P2/remove_path" 1)" OK
[ ! -e "$C/paths/$P2" ] || die "path 2 still listed"
expect_eq "remove the last path" "$(sysfs_write "$C/paths/$P1/remove_path" 1)" EBUSY
sleep 2
kmsg "add path 2"
expect_eq "add_path" "$(sysfs_write "$C/add_path" "ip:$A2,ip:$A2")" OK
expect_eq "add_path twice" "$(sysfs_write "$C/add_path" "ip:$A2@ip:$A2")" EEXIST
expect_eq "add_path garbage" "$(sysfs_write "$C/add_path" "10.9.1.1")" EINVAL
expect_eq "added path" "$(cat "$C/paths/$P2/state")" connected
b0=$(reqs "$P2")
sleep 3
[ "$(reqs "$P2")" -gt "$b0" ] || die "the added path takes no traffic"
fio_check $fpid
klog | grep -E 'I/O error|blk_update_request' && die "IO errors in dmesg"

# (3) a path to an address nobody listens on: refused, session intact
r=$(sysfs_write "$C/add_path" "ip:10.9.0.77")
[ "$r" != OK ] || die "a path to nowhere was added"
log "add_path to nowhere: $r"
expect_eq "paths after the refused add" "$(ls "$C/paths" | wc -l)" 2

# (4) a device mapped onto the session with its paths given back
nb2=$(nullb_create nullb2 16)
r=$(sysfs_write "$MAP_CTL" "sessname=$sess path=$P1 path=$P2 device_path=$nb2")
expect_eq "map onto the session with both paths" "$r" OK
dd if=/dev/urandom of=/tmp/blk bs=1M count=4 2>/dev/null
dev2=$(basename "$(readlink -f "/sys/class/rnbd-client/ctl/devices/$(echo "$nb2" | tr / !)@$sess")")
dd if=/tmp/blk of=/dev/$dev2 bs=1M oflag=direct 2>/dev/null || die "write $dev2"
expect_eq "data of the second device" "$(sha_dev /dev/$dev2 4194304)" "$(sha256sum </tmp/blk | cut -d' ' -f1)"
unmap_dev "$dev2" || die "unmap $dev2"
unmap_dev "$dev" || die "unmap $dev"
[ ! -e "$C" ] || die "session left"
i=0
while [ -n "$(ls /sys/class/rtrs-server)" ]; do
	i=$((i + 1))
	[ $i -lt $((100 * S)) ] || die "server session left: $(ls /sys/class/rtrs-server)"
	sleep 0.1
done
ip addr del $A2/24 dev "$RXE_NETDEV"
