# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Helpers for scripts that run inside the test guest (scripts/guest-run).
# Source it: . "$REPO/tests/lib/guest.sh".  REPO is set by guest-run.

RXE_DEV=${RXE_DEV:-rxe0}
RXE_NETDEV=${RXE_NETDEV:-dummy0}
RXE_ADDR=${RXE_ADDR:-10.9.0.1}
RXE_MTU=${RXE_MTU:-1500}

log() {
	echo "# $*"
}

die() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
	[ "$2" = "$3" ] || die "$1: got '$2', expected '$3'"
}

# Mark the kernel log so a problem report can be tied to a step.
kmsg() {
	echo "rnbd-test: $*" >/dev/kmsg
}

# setup_rxe [NETDEV ADDR/PREFIX]: an rxe device on a netdev with an IPv4
# address.  Without arguments a dummy netdev (rxe loops back in itself).
setup_rxe() {
	nd=${1:-$RXE_NETDEV}
	addr=${2:-$RXE_ADDR/24}
	modprobe rdma_rxe || die "modprobe rdma_rxe"
	modprobe rdma_ucm || die "modprobe rdma_ucm"
	if [ "$nd" = dummy0 ] && ! ip link show dummy0 >/dev/null 2>&1; then
		modprobe dummy numdummies=0 || die "modprobe dummy"
		ip link add dummy0 type dummy || die "ip link add dummy0"
	fi
	ip link set "$nd" mtu "$RXE_MTU" up || die "ip link set $nd up"
	ip addr add "$addr" dev "$nd" 2>/dev/null
	rdma link add "$RXE_DEV" type rxe netdev "$nd" || die "rdma link add"
	i=0
	while ! rdma link show "$RXE_DEV/1" 2>/dev/null | grep -q 'state ACTIVE'; do
		i=$((i + 1))
		[ $i -lt 50 ] || die "$RXE_DEV did not become ACTIVE"
		sleep 0.1
	done
	log "$(rdma link show "$RXE_DEV/1")"
}

teardown_rxe() {
	rdma link del "$RXE_DEV" 2>/dev/null
	ip link del dummy0 2>/dev/null
	true
}

# Count the RDMA resources (pd, cq, qp, mr, cm_id) currently allocated.
# free_kb: free memory in kB, counting the pages on the per-CPU free lists
# (MemFree and MemAvailable do not: tens of MiB freed can wait there).
free_kb() {
	awk '/^MemFree:/ { print $2 }' /proc/meminfo |
		awk -v pcp="$(awk '/ count:/ { s += $2 } END { print s * 4 }' /proc/zoneinfo)" \
			'{ print $1 + pcp }'
}

rdma_res_counts() {
	for r in pd cq qp mr cm_id; do
		printf '%s=%s ' "$r" "$(rdma resource show "$r" 2>/dev/null | grep -c . || true)"
	done
	echo
}

# Insert one of our modules after loading its in-kernel dependencies.
ko_insert() {
	ko=$1
	shift
	for d in $(modinfo -F depends "$ko" | tr , ' '); do
		lsmod | grep -q "^$d " && continue
		[ -e "$(dirname "$ko")/$d.ko" ] && continue
		modprobe "$d" || die "modprobe $d (for $ko)"
	done
	insmod "$ko" "$@" || die "insmod $ko"
	mod_range_record "$(basename "$ko" .ko)"
}

# ---- kmemleak and lockdep (debug kernel) ----------------------------------

# lockdep_check: fail once, in the case during which it happened, if lockdep
# switched itself off (after any report, or any taint but an out-of-tree
# module): every later case would run unchecked.  Succeeds without lockdep.
lockdep_check() {
	[ -r /proc/lockdep_stats ] || return 0
	grep -q 'debug_locks: *0' /proc/lockdep_stats || return 0
	[ -e /run/lockdep-off ] && return 0
	touch /run/lockdep-off
	echo "FAIL: lockdep is off from here on (tainted: $(cat /proc/sys/kernel/tainted))"
	return 1
}

KMEMLEAK=/sys/kernel/debug/kmemleak
MOD_RANGES=/run/rnbd-module-ranges

# mod_range_record NAME: remember where a loaded module of ours lies, so
# that kmemleak_check can pin a leak on it after it is unloaded, when its
# frames print as bare addresses.
mod_range_record() {
	sed -n "s/^\($1\) \([0-9]*\) .* \(0x[0-9a-f]*\).*/\1 \3 \2/p" \
		/proc/modules >>"$MOD_RANGES"
}

# kmemleak_check: scan for leaks, print every unreferenced object whose
# allocation passed through one of our modules and fail if there is one.
# The list is cleared after, so the next check sees only newer leaks.
# Succeeds at once without kmemleak (Debian's kernel).
kmemleak_check() {
	[ -w "$KMEMLEAK" ] || return 0
	# kmemleak leaves objects younger than 5 s alone.
	sleep 6
	echo scan >"$KMEMLEAK" || { echo "kmemleak scan failed"; return 1; }
	cat "$KMEMLEAK" >/run/kmemleak.txt
	echo clear >"$KMEMLEAK"
	python3 "$REPO/tests/lib/kmemleak-ours.py" /run/kmemleak.txt "$MOD_RANGES"
}

# Load the rnbd stack from this tree: transport, then server and client.
# wait_sync FILE SECONDS: wait up to SECONDS for the other guest of a
# two-guest case to create FILE on the /sync share; dies if it does not.
wait_sync() {
	local i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -le $(($2 * 2)) ] || die "timed out waiting for $1"
		sleep 0.5
	done
}

# SERVER_PARAMS and TRS_SERVER_PARAMS: parameters of rnbd_server and of
# rnbd_trs_server (sess_queue_depth=...).
load_rnbd() {
	for m in rnbd_trs_core rnbd_trs_server rnbd_trs_client; do
		lsmod | grep -q "^$m " && continue
		if [ $m = rnbd_trs_server ]; then
			ko_insert "$REPO/transport/$m.ko" $TRS_SERVER_PARAMS
		else
			ko_insert "$REPO/transport/$m.ko"
		fi
	done
	lsmod | grep -q '^rnbd_server ' || ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
	lsmod | grep -q '^rnbd_client ' || ko_insert "$REPO/client/rnbd_client.ko"
}

load_rnbd_server() {
	lsmod | grep -q "^rnbd_trs_core " || ko_insert "$REPO/transport/rnbd_trs_core.ko"
	lsmod | grep -q "^rnbd_trs_server " ||
		ko_insert "$REPO/transport/rnbd_trs_server.ko" $TRS_SERVER_PARAMS
	lsmod | grep -q '^rnbd_server ' || ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
}

load_rnbd_client() {
	for m in rnbd_trs_core rnbd_trs_client; do
		lsmod | grep -q "^$m " || ko_insert "$REPO/transport/$m.ko"
	done
	lsmod | grep -q '^rnbd_client ' || ko_insert "$REPO/client/rnbd_client.ko"
}

# Unmap every rnbd device, then remove our modules; fail if one won't go.
unload_rnbd() {
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/unmap_device" ] || continue
		echo force >"$d/rnbd/unmap_device" 2>/dev/null
	done
	for m in rnbd_client rnbd_server rnbd_trs_client rnbd_trs_server rnbd_trs_core; do
		lsmod | grep -q "^$m " || continue
		rmmod "$m" || die "rmmod $m failed"
	done
}

MAP_CTL=/sys/devices/virtual/rnbd-client/ctl/map_device

# map SESS DEVICE_PATH [extra options]: map and print the new device name.
map_dev() {
	sess=$1
	path=$2
	shift 2
	before=$(ls -d /sys/block/rnbd* 2>/dev/null || true)
	echo "sessname=$sess path=ip:${MAP_ADDR:-$RXE_ADDR} device_path=$path $*" \
		>"$MAP_CTL" || return 1
	for d in /sys/block/rnbd*; do
		echo "$before" | grep -qx "$d" || { basename "$d"; return 0; }
	done
	die "map succeeded but no new /sys/block/rnbd*"
}

unmap_dev() {
	echo "${2:-normal}" >"/sys/block/$1/rnbd/unmap_device"
}

# wait_listen COMM: wait (30 s at most) until a process named COMM has an
# rdma_cm listener, so a client started next is not rejected.
wait_listen() {
	i=0
	until rdma resource show cm_id 2>/dev/null | grep "comm $1" | grep -q LISTEN; do
		i=$((i + 1))
		[ $i -lt 300 ] || die "$1 never listened"
		sleep 0.1
	done
}

# rnbd_setup: soft-RoCE plus the whole rnbd stack in this guest.
rnbd_setup() {
	setup_rxe
	load_rnbd
}

# nullb_create NAME SIZE_MB [ATTR=VALUE...]: a null_blk device through
# configfs (memory backed unless told otherwise); prints /dev/NAME.
nullb_create() {
	name=$1
	size=$2
	shift 2
	lsmod | grep -q '^null_blk ' || modprobe null_blk nr_devices=0 ||
		die "modprobe null_blk"
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || die "configfs"
	d=/sys/kernel/config/nullb/$name
	mkdir "$d" || die "mkdir $d"
	echo "$size" >"$d/size"
	echo 1 >"$d/memory_backed"
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || die "nullb $name: ${kv%%=*}"
	done
	echo 1 >"$d/power" || die "nullb $name: power"
	udev_wait "/dev/$name"
	echo "/dev/$name"
}

udev_wait() {
	i=0
	while [ ! -b "$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || die "$1 did not appear"
		sleep 0.05
	done
}

# sysfs_write FILE STRING: one write(2), prints OK or the errno name.
sysfs_write() {
	python3 "$REPO/tests/lib/sysfs-write.py" "$1" "$2"
}

# Remove every null_blk configfs device (after unmapping).
nullb_destroy_all() {
	for d in /sys/kernel/config/nullb/*/; do
		[ -e "$d/power" ] || continue
		echo 0 >"$d/power"
		rmdir "$d"
	done
}

# path_state SESS: the state of the client session's path.
path_state() {
	cat /sys/class/rtrs-client/"$1"/paths/*/state
}

# wait_path_state SESS STATE SECONDS: wait until the path is (with "!":
# is no longer) in STATE; SECONDS scale with RNBD_TIMEOUT_SCALE.
wait_path_state() {
	i=0
	while case "$2" in
		!*) [ "$(path_state "$1")" = "${2#!}" ] ;;
		*) [ "$(path_state "$1")" != "$2" ] ;;
	esac; do
		i=$((i + 1))
		[ $i -lt $(($3 * 10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "session $1: path state stays $(path_state "$1"), waited for $2"
		sleep 0.1
	done
}

# fio_outage_start DEV SIZE: 4k random writes with crc32c, throttled to
# 200 (writes) a second so that an outage a few seconds in falls in the
# write phase, then a full verify pass; in the background, output in
# /tmp/fio.out, pid in FIO_PID.
fio_outage_start() {
	fio --name=v --filename="/dev/$1" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 --size="$2" --rate_iops=,200 \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1 &
	FIO_PID=$!
}

# fio_wait_ok PID: the fio job ends with status 0 and reports no error.
fio_wait_ok() {
	wait "$1" || { cat /tmp/fio.out; die "fio failed"; }
	grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "no fio job report"; }
	if grep -o 'err= *[0-9]*' /tmp/fio.out | grep -vq 'err= *0$'; then
		cat /tmp/fio.out
		die "fio reported an error"
	fi
}

# conn_stat SESS CONN FILE: a per-connection counter of a client session.
conn_stat() {
	cat /sys/class/rtrs-client/"$1"/paths/*/conns/"$2"/"$3"
}

# sess_sum SESS FILE: a per-connection counter of a client session, summed
# over its connections.
sess_sum() {
	cat /sys/class/rtrs-client/"$1"/paths/*/conns/*/"$2" |
		awk '{ s += $1 } END { print s + 0 }'
}

# sess_wrs SESS: work requests the client transport posted on all the
# connections of a session (sum of their wrs_posted counters).
sess_wrs() {
	sess_sum "$1" wrs_posted
}

# sha_dev DEV BYTES: checksum of the first BYTES of a device, read directly.
sha_dev() {
	dd if="$1" bs=1M count=$(($2 / 1048576)) iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1
}

# ---- RDMA packets of the rxe device ---------------------------------------

RXE_CNT=/sys/class/infiniband/$RXE_DEV/ports/1/hw_counters
RXE_OPC_EVENT=

# rxe_active_mtu: the RDMA path MTU of the rxe port (1024 on a 1500 netdev).
rxe_active_mtu() {
	modprobe ib_uverbs || return 1
	ibv_devinfo -d "$RXE_DEV" | sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p'
}

rxe_sent_pkts() {
	cat "$RXE_CNT/sent_pkts"
}

# rxe_retrans: the rxe device's counters of packets sent again or refused
# (retransmit timer, duplicate or out-of-sequence requests, sequence and
# receiver-not-ready NAKs), one "name=value" each.  A loaded host can
# delay an ACK past the retransmit timeout, and then a window of packets
# holds more than the protocol sends.
rxe_retrans() {
	for c in completer_retry_err duplicate_request out_of_seq_request \
		rcvd_seq_err rcvd_rnr_err send_rnr_err; do
		[ -r "$RXE_CNT/$c" ] && printf '%s=%s ' "$c" "$(cat "$RXE_CNT/$c")"
	done
	echo
}

# btf_offset FILE STRUCT MEMBER: byte offset of a member in a BTF file
# (/sys/kernel/btf/vmlinux or a module's); empty if it is not there.
btf_offset() {
	bpftool btf dump file "$1" 2>/dev/null | awk -v s="'$2'" -v m="'$3'" '
		$2 == "STRUCT" && $3 == s { in_s = 1; next }
		in_s && /^\[/ { exit }
		in_s && $1 == m { sub(/.*bits_offset=/, ""); print $1 / 8; exit }'
}

# rxe_opcode_probe: a kprobe on rxe_xmit_packet() that records the BTH
# opcode of every packet the rxe device sends (with rxe loopback it also
# receives each of them).  The offset of rxe_pkt_info.opcode is read from
# the module's BTF.  Fails if that cannot be done.
rxe_opcode_probe() {
	tr=/sys/kernel/tracing
	grep -q " $tr " /proc/mounts || mount -t tracefs nodev "$tr" || return 1
	off=$(bpftool btf dump file /sys/kernel/btf/rdma_rxe 2>/dev/null | awk '
		/STRUCT .rxe_pkt_info. / { in_s = 1; next }
		in_s && /^\[/ { exit }
		in_s && /.opcode. type_id=/ { sub(/.*bits_offset=/, ""); print $1 / 8; exit }')
	[ -n "$off" ] || { echo "no BTF offset of rxe_pkt_info.opcode" >&2; return 1; }
	# rxe_xmit_packet(qp, pkt, skb): pkt is the second argument
	grep -q '^p:rnbdpkt/xmit ' "$tr/kprobe_events" ||
		echo "p:rnbdpkt/xmit rdma_rxe:rxe_xmit_packet op=+$off(%si):u8" \
			>>"$tr/kprobe_events" || return 1
	RXE_OPC_EVENT=$tr/events/rnbdpkt/xmit
}

rxe_opcode_hist_start() {
	echo 'hist:keys=op:vals=hitcount:sort=op' >"$RXE_OPC_EVENT/trigger"
}

# rxe_opcode_hist_stop FILE: save the histogram ("{ op: N } hitcount: M").
rxe_opcode_hist_stop() {
	cat "$RXE_OPC_EVENT/hist" >"$1"
	echo '!hist:keys=op:vals=hitcount:sort=op' >"$RXE_OPC_EVENT/trigger"
}

# rxe_opcode_probe_remove: undo rxe_opcode_probe (before rdma_rxe goes).
rxe_opcode_probe_remove() {
	RXE_OPC_EVENT=
	grep -qs '^p:rnbdpkt/xmit ' /sys/kernel/tracing/kprobe_events || return 0
	echo '-:rnbdpkt/xmit' >>/sys/kernel/tracing/kprobe_events
}

# rxe_opcode_count FILE OPCODE...: packets of these opcodes in a histogram.
rxe_opcode_count() {
	f=$1
	shift
	for op in "$@"; do
		sed -n "s/^{ op: *$op } hitcount: *\([0-9]*\).*/\1/p" "$f"
	done | awk '{ s += $1 } END { print s + 0 }'
}
