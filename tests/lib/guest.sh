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

# The kernel log of this case only (from the runner's begin line on): an
# earlier case of a shared boot may have made the same messages on purpose.
# If the begin line has left the kernel's ring buffer, every "no such line"
# check on klog's output would pass: the case is failed instead (klog runs
# in a pipeline's subshell, so it ends the case's shell, $$, itself).
# (The log is taken whole first: a reader that stops early, grep -q, must
# not make the search for the begin line fail with SIGPIPE.)
klog() {
	local out
	if ! out=$(dmesg | awk -v m="rnbd-check: begin ${RNBD_CASE:?}" '
		!on && length($0) >= length(m) &&
		    substr($0, length($0) - length(m) + 1) == m { on = 1 }
		on { print }
		END { exit !on }'); then
		echo "FAIL: klog: 'rnbd-check: begin $RNBD_CASE' is no longer in the kernel log" >&2
		kill -TERM $$
		exit 1
	fi
	printf '%s\n' "$out"
}

# setup_rxe [NETDEV ADDR/PREFIX [RXEDEV]]: an rxe device (RXE_DEV, rxe0,
# unless named) on a netdev with an IPv4 address.  Without arguments a
# dummy netdev (rxe loops back in itself).
setup_rxe() {
	nd=${1:-$RXE_NETDEV}
	addr=${2:-$RXE_ADDR/24}
	rd=${3:-$RXE_DEV}
	modprobe rdma_rxe || die "modprobe rdma_rxe"
	modprobe rdma_ucm || die "modprobe rdma_ucm"
	if [ "$nd" = dummy0 ] && ! ip link show dummy0 >/dev/null 2>&1; then
		modprobe dummy numdummies=0 || die "modprobe dummy"
		ip link add dummy0 type dummy || die "ip link add dummy0"
	fi
	ip link set "$nd" mtu "$RXE_MTU" up || die "ip link set $nd up"
	ip addr add "$addr" dev "$nd" 2>/dev/null
	rdma link add "$rd" type rxe netdev "$nd" || die "rdma link add $rd"
	i=0
	while ! rdma link show "$rd/1" 2>/dev/null | grep -q 'state ACTIVE'; do
		i=$((i + 1))
		[ $i -lt 50 ] || die "$rd did not become ACTIVE"
		sleep 0.1
	done
	log "$(rdma link show "$rd/1")"
}

# Each may be absent: safe under errexit (guest-run --errexit).
teardown_rxe() {
	rdma link del "$RXE_DEV" 2>/dev/null || true
	# the second link's device (setup_links)
	rdma link del rxe1 2>/dev/null || true
	ip link del dummy0 2>/dev/null || true
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
# On the debug kernel (KERNEL=debug) a kernel without lockdep fails too:
# its checks would pass unseen.
LOCKDEP_STATS=/proc/lockdep_stats
LOCKDEP_OFF_MARK=/run/lockdep-off
lockdep_check() {
	if [ ! -r "$LOCKDEP_STATS" ]; then
		[ "${KERNEL:-}" = debug ] || return 0
		echo "FAIL: no lockdep ($LOCKDEP_STATS) on the debug kernel"
		return 1
	fi
	grep -q 'debug_locks: *0' "$LOCKDEP_STATS" || return 0
	[ -e "$LOCKDEP_OFF_MARK" ] && return 0
	touch "$LOCKDEP_OFF_MARK"
	echo "FAIL: lockdep is off from here on (tainted: $(cat /proc/sys/kernel/tainted))"
	return 1
}

KMEMLEAK=/sys/kernel/debug/kmemleak
MOD_RANGES=/run/rnbd-module-ranges

# mod_range_record NAME [KO]: remember where a loaded module of ours lies
# (its memory and the address of each section), when it was loaded and
# from which file (KO; found in the tree if not given), so that
# kmemleak_check can pin a leak on it and name the function after it is
# unloaded, when its frames print as bare addresses.
mod_range_record() {
	local ko=${2:-} d line s
	if [ -z "$ko" ]; then
		for d in transport server client tests/kmod; do
			[ -e "$REPO/$d/$1.ko" ] && ko=$REPO/$d/$1.ko
		done
	fi
	line=$(sed -n "s/^$1 \([0-9]*\) .* \(0x[0-9a-f]*\).*/\2 \1/p" /proc/modules)
	[ -n "$line" ] || return 0
	{
		echo "load $1 $line $(cut -d' ' -f1 /proc/uptime) ${ko:--}"
		for s in "/sys/module/$1/sections/".[a-z]*; do
			[ -r "$s" ] && echo "sect ${s##*/} $(cat "$s")"
		done
	} >>"$MOD_RANGES"
}

# kmemleak_check: scan for leaks, print every unreferenced object whose
# allocation passed through one of our modules and fail if there is one.
# The list is cleared after, so the next check sees only newer leaks.
# Succeeds at once without kmemleak on Debian's kernel; fails without it
# on the debug kernel (KERNEL=debug), or if it turned itself off (a scan
# is refused).
kmemleak_check() {
	if [ ! -w "$KMEMLEAK" ]; then
		[ "${KERNEL:-}" = debug ] || return 0
		echo "FAIL: no kmemleak ($KMEMLEAK) on the debug kernel"
		return 1
	fi
	# kmemleak leaves objects younger than 5 s alone.
	sleep 6
	# Two scans: kmemleak reports an unreferenced object only once its
	# contents' checksum is the same in two scans in a row.  A zeroed
	# object matches the initial checksum at the first scan; any other is
	# reported at the second (with one scan, by the next case's check,
	# blamed on that case, or never after the last case of a boot).
	echo scan >"$KMEMLEAK" || { echo "kmemleak scan failed"; return 1; }
	echo scan >"$KMEMLEAK" || { echo "kmemleak scan failed"; return 1; }
	cat "$KMEMLEAK" >/run/kmemleak.txt
	local up
	up=$(cut -d' ' -f1 /proc/uptime)
	echo clear >"$KMEMLEAK"
	python3 "$REPO/tests/lib/kmemleak-ours.py" /run/kmemleak.txt "$MOD_RANGES" "$up"
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
		# one already going away may refuse; the rmmod below judges
		echo force >"$d/rnbd/unmap_device" 2>/dev/null || true
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

# fio: every fio job that verifies gets a fresh random seed, and checks it.
# With fio's default (randrepeat=1) a job run again writes the same blocks
# with the same data, seeds and numberio, so a write that never reached
# the disk reads back an earlier run's copy and verifies.  A fresh seed
# alone is not enough: fio (3.33) checks a block's seed only in a job that
# both reads and writes, so a write-only job becomes the same job as a
# read/write mix of 100% writes (--rw=randwrite: randrw, --rw=write: rw).
# The seed goes to the kernel log and to stderr (with fio's output), so a
# failure can be replayed: FIO_RANDSEED=N gives every verifying job seed N.
# A job that sets --randseed or --randrepeat itself is left as it is.
fio() {
	local a n verify= seed
	for a in "$@"; do
		case "$a" in
		--randseed=* | --randrepeat=*) command fio "$@"; return ;;
		--verify=*) verify=1 ;;
		esac
	done
	[ -n "$verify" ] || { command fio "$@"; return; }
	n=$#
	while [ "$n" -gt 0 ]; do
		a=$1
		shift
		n=$((n - 1))
		case "$a" in
		--rw=randwrite) set -- "$@" --rw=randrw --rwmixwrite=100 ;;
		--rw=write) set -- "$@" --rw=rw --rwmixwrite=100 ;;
		*) set -- "$@" "$a" ;;
		esac
	done
	seed=${FIO_RANDSEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	echo "fio: --randseed=$seed $*" >&2
	kmsg "fio --randseed=$seed $*" 2>/dev/null || true
	command fio --randseed="$seed" "$@"
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

# ---- two links between two guests, multipath -----------------------------
#
# A case that gives both guests two links (tests/lib/host.sh, pair_net
# PORT ROLE 1) has link 1 on eth0, 10.10.0.0/24, and link 2 on eth1,
# 10.11.0.0/24: server .1, client .2, an rxe device on each (rxe0, rxe1).
# rdma_cm takes each subnet to its own device: the route to the peer's
# address names the netdev, and the netdev its rxe device.

# shellcheck disable=SC2034 # the cases use them
MP_PATH1=ip:10.10.0.2@ip:10.10.0.1
# shellcheck disable=SC2034
MP_PATH2=ip:10.11.0.2@ip:10.11.0.1

# setup_links server|client: both links, each with its rxe device; dies if
# eth0 and eth1 are not the links host.sh made (by their MACs: link N's
# end in 0N:01 on the server, 0N:02 on the client).
setup_links() {
	local h l mac
	case "$1" in
	server) h=1 ;;
	client) h=2 ;;
	*) die "setup_links server|client" ;;
	esac
	for l in 0 1; do
		mac=$(cat "/sys/class/net/eth$l/address" 2>/dev/null) ||
			die "no eth$l: the case must give two --net (pair_net PORT ROLE 1)"
		expect_eq "eth$l MAC" "$mac" "52:54:00:00:0$l:0$h"
		setup_rxe "eth$l" "10.1$l.0.$h/24" "rxe$l"
	done
}

# rxe_pkts RXEDEV: packets the rxe device sent and received ("S R").
rxe_pkts() {
	echo "$(cat "/sys/class/infiniband/$1/ports/1/hw_counters/sent_pkts")" \
		"$(cat "/sys/class/infiniband/$1/ports/1/hw_counters/rcvd_pkts")"
}

# link_netem IFACE [NETEM ARGS...]: the same netem qdisc on both ends of a
# link ("loss 100%": the link is silent both ways; "delay 20ms": 40 ms more
# round trip), or none without ARGS.  Applied here, then by the other
# guest's netem_follow; returns once both have it.  Never `ip link set
# down`: that takes the rxe port down too, and a DREQ sent on a down port
# can leave rxe's CM unusable (two-guest-link-down).
NETEM_SEQ=0
link_netem() {
	local ifc i
	ifc=$1
	shift
	if [ $# -gt 0 ]; then
		tc qdisc replace dev "$ifc" root netem "$@" || die "netem $* on $ifc"
	else
		tc qdisc del dev "$ifc" root 2>/dev/null || true
	fi
	NETEM_SEQ=$((NETEM_SEQ + 1))
	echo "$NETEM_SEQ $*" >"/sync/netem.$ifc.tmp"
	mv "/sync/netem.$ifc.tmp" "/sync/netem.$ifc"
	i=0
	while :; do
		case "$(cat "/sync/netem.$ifc.done" 2>/dev/null)" in
		"$NETEM_SEQ") break ;;
		"fail $NETEM_SEQ") die "the other guest could not set netem $* on $ifc" ;;
		esac
		i=$((i + 1))
		[ $i -lt $((100 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "the other guest did not apply netem '$*' on $ifc (no netem_follow?)"
		sleep 0.1
	done
	kmsg "netem on $ifc, both ends: ${*:-none}"
}

# netem_follow: apply, on this guest's end, what the other guest asks for
# with link_netem (/sync/netem.IFACE: "SEQ ARGS"; /sync/netem.IFACE.done
# gets SEQ once applied).  Runs until killed; start it in the background
# with its output redirected (a background job holding the console pipe
# would keep the guest from ending).
netem_follow() {
	while :; do
		for f in /sync/netem.*; do
			case "$f" in *.done | *.tmp | '/sync/netem.*') continue ;; esac
			ifc=${f#/sync/netem.}
			read -r seq args <"$f" 2>/dev/null || continue
			[ "$seq" != "$(cat "/run/netem.$ifc.seq" 2>/dev/null)" ] || continue
			if [ -n "$args" ]; then
				# shellcheck disable=SC2086 # the netem arguments, split
				tc qdisc replace dev "$ifc" root netem $args && ok=$seq || ok="fail $seq"
			else
				tc qdisc del dev "$ifc" root 2>/dev/null || true
				ok=$seq
			fi
			echo "$seq" >"/run/netem.$ifc.seq"
			echo "netem on $ifc: ${args:-none} ($ok)"
			echo "$ok" >"/sync/netem.$ifc.done.tmp"
			mv "/sync/netem.$ifc.done.tmp" "/sync/netem.$ifc.done"
		done
		sleep 0.1
	done
}

MP_CLASS=/sys/class/rtrs-client

# mp_map SESS DEVICE_PATH PATH...: map over several paths at once (each
# [SRC@]DST, one path= each) and print the new device.  Dies at once, and
# says so, if the client modules have no multipath (EOPNOTSUPP).
mp_map() {
	local sess dp line p before r d
	sess=$1
	dp=$2
	shift 2
	line="sessname=$sess"
	for p in "$@"; do
		line="$line path=$p"
	done
	line="$line device_path=$dp"
	before=$(ls -d /sys/block/rnbd* 2>/dev/null || true)
	r=$(sysfs_write "$MAP_CTL" "$line")
	case "$r" in
	OK) ;;
	EOPNOTSUPP | ENOTSUP) # errno 95 (Python names it ENOTSUP)
		die "no multipath in the client modules: map_device with $# path= returned EOPNOTSUPP ($line)" ;;
	*) die "map_device ($line): $r" ;;
	esac
	for d in /sys/block/rnbd*; do
		echo "$before" | grep -qx "$d" || { basename "$d"; return 0; }
	done
	die "map succeeded but no new /sys/block/rnbd*"
}

# mp_paths SESS: the session's path directories, one a line, sorted.
mp_paths() {
	# shellcheck disable=SC2012 # path names have no newline
	ls "$MP_CLASS/$1/paths" 2>/dev/null | sort
}

# mp_state SESS PATH: the path's state; "gone" once it has no directory.
mp_state() {
	cat "$MP_CLASS/$1/paths/$2/state" 2>/dev/null || echo gone
}

# mp_wait_state SESS PATH STATE SECONDS: wait until the path is (with
# "!STATE": is no longer) in STATE ("gone": its directory is); SECONDS
# scale with RNBD_TIMEOUT_SCALE.
mp_wait_state() {
	local i=0
	while case "$3" in
		!*) [ "$(mp_state "$1" "$2")" = "${3#!}" ] ;;
		*) [ "$(mp_state "$1" "$2")" != "$3" ] ;;
	esac; do
		i=$((i + 1))
		[ $i -lt $(($4 * 10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "session $1, path $2: state stays $(mp_state "$1" "$2"), waited $4 s for $3"
		sleep 0.1
	done
}

# mp_check_path SESS PATH RXEDEV: the path is connected, on RXEDEV port 1,
# with the addresses its name says.
mp_check_path() {
	local d
	d=$MP_CLASS/$1/paths/$2
	[ -d "$d" ] || die "session $1 has no path $2 (it has: $(mp_paths "$1" | tr '\n' ' '))"
	expect_eq "$2 state" "$(cat "$d/state")" connected
	expect_eq "$2 hca_name" "$(cat "$d/hca_name")" "$3"
	expect_eq "$2 hca_port" "$(cat "$d/hca_port")" 1
	expect_eq "$2 src_addr" "$(cat "$d/src_addr")" "${2%@*}"
	expect_eq "$2 dst_addr" "$(cat "$d/dst_addr")" "${2#*@}"
}

# mp_rdma SESS PATH: the path's stats/rdma: "reads read_bytes writes
# write_bytes inflight failovers".
mp_rdma() {
	cat "$MP_CLASS/$1/paths/$2/stats/rdma"
}

# mp_reqs SESS PATH: requests the path carried (reads + writes).
mp_reqs() {
	mp_rdma "$1" "$2" | awk '{ print $1 + $3 }'
}

# mp_failovers SESS: requests moved from a failed path to another, summed
# over the session's paths (the sixth number of stats/rdma).
mp_failovers() {
	cat "$MP_CLASS/$1"/paths/*/stats/rdma | awk '{ s += $6 } END { print s + 0 }'
}

# mp_reconnects SESS PATH: the path's successful reconnects.
mp_reconnects() {
	awk '{ print $1 }' "$MP_CLASS/$1/paths/$2/stats/reconnects"
}

# mp_policy SESS NAME: set the session's multipath policy (a name or its
# number) and check what mpath_policy reads back.
mp_policy() {
	local want
	expect_eq "mpath_policy $2" "$(sysfs_write "$MP_CLASS/$1/mpath_policy" "$2")" OK
	case "$2" in
	round-robin | 0) want="round-robin (RR: 0)" ;;
	min-inflight | 1) want="min-inflight (MI: 1)" ;;
	min-latency | 2) want="min-latency (ML: 2)" ;;
	*) die "mp_policy: unknown policy $2" ;;
	esac
	expect_eq "mpath_policy after writing $2" "$(cat "$MP_CLASS/$1/mpath_policy")" "$want"
}

# dev_ios DEV: requests the block device completed, reads plus writes.
dev_ios() {
	awk '{ print $1 + $5 }' "/sys/block/$1/stat"
}

# mp_takes_traffic SESS PATH DEV: 2 s of 4k random reads (queue depth 16)
# on DEV; the path must carry some of them.
mp_takes_traffic() {
	local r0 r1 n0 n1
	r0=$(mp_reqs "$1" "$2")
	n0=$(dev_ios "$3")
	fio --name=t --filename="/dev/$3" --ioengine=libaio --direct=1 \
		--rw=randread --bs=4k --iodepth=16 --time_based --runtime=2 \
		>/tmp/fio-t.out 2>&1 || { cat /tmp/fio-t.out; die "fio (reads)"; }
	r1=$(mp_reqs "$1" "$2")
	n1=$(dev_ios "$3")
	log "$2 carried $((r1 - r0)) requests while $3 completed $((n1 - n0)) (2 s of reads)"
	[ $((r1 - r0)) -gt 0 ] || die "path $2 takes no traffic"
}

# wait_io_flowing DEV [N]: wait until DEV has completed N more requests (50
# unless given); fio takes seconds to start under TCG.  Dies after 30 s
# (times RNBD_TIMEOUT_SCALE).
wait_io_flowing() {
	local n0 i=0
	n0=$(dev_ios "$1")
	while [ "$(dev_ios "$1")" -lt $((n0 + ${2:-50})) ]; do
		i=$((i + 1))
		[ $i -lt $((300 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			{ cat /tmp/fio.err 2>/dev/null; die "no IO on $1 30 s after fio started"; }
		sleep 0.1
	done
}

# fio_mp_start DEV SIZE [RATE]: 4k random writes with crc32c at RATE writes
# a second (200 unless given; "max": no limit) and queue depth 16, then a
# verify pass reading every block back; JSON report in /tmp/fio.json for
# fio_mp_wait; in the background, pid in FIO_PID.
fio_mp_start() {
	local rate
	rate=${3:-200}
	[ "$rate" = max ] && rate=
	fio --name=v --filename="/dev/$1" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 --size="$2" ${rate:+--rate_iops=,$rate} \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output-format=json --output=/tmp/fio.json >/tmp/fio.err 2>&1 &
	FIO_PID=$!
}

# fio_mp_wait PID MAX_LAT_S: the fio_mp_start job ends with status 0 and no
# error, read back and verified every block it wrote, and no request took
# longer than MAX_LAT_S seconds (not scaled: the caller decides).
fio_mp_wait() {
	local fst=0
	wait "$1" || fst=$?
	if ! python3 "$REPO/tests/lib/fio-json.py" /tmp/fio.json "$2" ||
		[ "$fst" != 0 ]; then
		cat /tmp/fio.err
		die "fio (status $fst)"
	fi
}

# mp_server [SECONDS]: the server guest of a multipath case: both links,
# the rnbd server, netem_follow; /sync/server-ready, then wait (SECONDS,
# default 1000) for /sync/client-done and unload.
mp_server() {
	setup_links server
	load_rnbd_server
	netem_follow >/tmp/netem.log 2>&1 &
	nf=$!
	touch /sync/server-ready
	wait_sync /sync/client-done "${1:-1000}"
	kill "$nf"
	cat /tmp/netem.log
	unload_rnbd
}

# no_io_errors: no block-layer IO error on an rnbd device in the kernel log.
no_io_errors() {
	if dmesg | grep -E 'I/O error.*dev rnbd|rnbd[0-9]+.*I/O error'; then
		die "IO errors on an rnbd device (above)"
	fi
}
