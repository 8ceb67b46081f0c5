# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Guest side of scripts/bench/run.  One null_blk device (no memory backing,
# immediate completion) is used three ways in this one boot: locally, through
# rnbd over rxe loopback and through NVMe-oF RDMA over the same rxe device;
# a fourth target, rnbd2p, is rnbd through a second session with two paths
# (round-robin) over two addresses of the same rxe device.  The server lets
# one session at a time open a device read-write (FMODE_EXCL), so rnbd2p
# maps a twin null_blk device made with the same parameters (null_blk
# without memory keeps no data: the two are the same device but for the
# name).  Every row of the fio matrix runs on the four targets in turn,
# REPEAT times, and then on a fifth, file: an image file on a tmpfs of the
# guest, filled first, mapped through rnbd on the first session (the
# server's file IO mode: buffered, tmpfs has no O_DIRECT).
# Then the wire cost per IO (rxe packet counters, a histogram
# of the packets' opcodes, our transport's WR counters), the raw-verbs
# ceiling (perftest) and the memory cost.  Raw results go to /job/out; the
# host's report.py turns them into the table and bench-results.json.
#
# Arguments: REPEAT RUNTIME ROWS...  (RUNTIME 0: the job files' own timing)
. "$REPO/tests/lib/guest.sh"
. "$REPO/scripts/bench/targets.sh"
SERVER_PARAMS=${SERVER_PARAMS:-}
TRS_SERVER_PARAMS=${TRS_SERVER_PARAMS:-}
set -u

REPEAT=$1
RUNTIME=$2
shift 2
ROWS="$*"
OUT=/job/out
FIO_DIR=$REPO/scripts/bench/fio
rm -rf "$OUT"
mkdir -p "$OUT"

mem_kib() {
	awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo
}

settle() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
}

# ---- fio matrix -----------------------------------------------------------

# With run --insn, QEMU's insn-count plugin writes /job/insn.txt and counts
# the guest's instructions at each execution of the marker program.
INSN_MARK=
INSN_SEQ=0
[ ! -e /job/insn.txt ] || INSN_MARK=$REPO/.build/insn/mark

insn_mark() {
	[ -n "$INSN_MARK" ] || return 0
	"$INSN_MARK" || die "insn-count marker"
	INSN_SEQ=$((INSN_SEQ + 1))
}

# sess_of TGT: the rnbd session whose counters a target's runs read (the
# first session for the targets that have none, as before rnbd2p).
sess_of() {
	if [ "$1" = rnbd2p ]; then echo bench2; else echo bench; fi
}

run_row() {
	row=$1 tgt=$2 dev=$3 rep=$4
	job=$FIO_DIR/$row.fio
	out=$OUT/fio/$rep/$row.$tgt.json
	mkdir -p "$(dirname "$out")"
	if [ "$RUNTIME" != 0 ]; then
		sed -e "s/^runtime=.*/runtime=$RUNTIME/" -e 's/^ramp_time=.*/ramp_time=1/' \
			"$job" >/tmp/row.fio
		job=/tmp/row.fio
	fi
	kmsg "bench: $row on $tgt ($dev), repeat $rep"
	counters "$dev" "$(sess_of "$tgt")" >/tmp/c0
	# run --insn-prof: the symbols the profile's addresses belong to
	[ ! -e /job/insn-prof.txt ] || [ -e "$OUT/kallsyms.$tgt" ] ||
		cat /proc/kallsyms >"$OUT/kallsyms.$tgt"
	insn_mark
	DEV=/dev/$dev fio --output-format=json --output="$out" "$job" ||
		die "fio $row on $tgt"
	insn_mark
	counters "$dev" "$(sess_of "$tgt")" >/tmp/c1
	[ -z "$INSN_MARK" ] ||
		echo "$((INSN_SEQ - 1)) $INSN_SEQ ${out#"$OUT"/}" >>"$OUT/insn-marks"
	# The CPU time and kernel events a row costs, whoever spends them:
	# fio, the block layer, rxe, the client and the server, kworkers.
	counters_delta /tmp/c0 /tmp/c1 >"${out%.json}.counters"
}

# ---- wire cost ------------------------------------------------------------

# retrans_sum: the rxe device's counters of packets sent again or refused
# (tests/lib/guest-rdma.sh rxe_retrans), summed.
retrans_sum() {
	rxe_retrans | tr ' ' '\n' | awk -F= 'NF == 2 { s += $2 } END { print s + 0 }'
}

# wire TGT DEV KIND BS COUNT: COUNT direct IOs of BS, at queue depth 1.  A
# loaded host can hold an ACK past rxe's retransmit timeout, and the
# packets sent again are the host's cost, not the protocol's: a window
# with any is measured again, up to three times (the case
# wire-packets-per-io counts each packet once instead, by QP and PSN: its
# windows are small enough); retrans= says what the last one had.
wire() {
	tgt=$1 dev=$2 kind=$3 bs=$4 count=$5
	f=$OUT/wire/$tgt.$kind
	mkdir -p "$OUT/wire"
	sess=$(sess_of "$tgt")
	for try in 1 2 3; do
		settle
		x0=$(retrans_sum)
		s0=$(cat "$RXE_CNT/sent_pkts") r0=$(cat "$RXE_CNT/rcvd_pkts")
		w0=$(sess_wrs "$sess" 2>/dev/null)
		p0=$(path_reqs "$sess")
		[ -z "$RXE_OPC_EVENT" ] || rxe_opcode_hist_start
		case $kind in
		read-*)
			dd if="/dev/$dev" of=/dev/null bs="$bs" count="$count" \
				iflag=direct 2>/dev/null || die "dd read $tgt" ;;
		write-*)
			dd if=/dev/zero of="/dev/$dev" bs="$bs" count="$count" \
				oflag=direct 2>/dev/null || die "dd write $tgt" ;;
		esac
		[ -z "$RXE_OPC_EVENT" ] || rxe_opcode_hist_stop "$f.hist"
		s1=$(cat "$RXE_CNT/sent_pkts") r1=$(cat "$RXE_CNT/rcvd_pkts")
		w1=$(sess_wrs "$sess" 2>/dev/null)
		p1=$(path_reqs "$sess")
		x1=$(retrans_sum)
		[ "$x1" != "$x0" ] || break
		log "wire $tgt $kind: $((x1 - x0)) packets sent again or refused, try $try"
	done
	echo "ios=$count sent=$((s1 - s0)) rcvd=$((r1 - r0)) wrs=$((w1 - w0))$(
		paths_delta "$p0" "$p1") retrans=$((x1 - x0)) tries=$try" >"$f"
	log "wire $tgt $kind: $(cat "$f")"
}

# path_reqs SESS: the requests (reads + writes, stats/rdma) of each path of
# a session with more than one path, in the order of their names.
path_reqs() {
	set -- /sys/class/rtrs-client/"$1"/paths/*/stats/rdma
	[ $# -gt 1 ] || return 0
	cat "$@" | awk '{ printf "%s ", $1 + $3 }'
}

# paths_delta "A1 A2..." "B1 B2...": " path1=B1-A1 path2=B2-A2..." (nothing
# for a session with one path).
paths_delta() {
	[ -n "$1" ] || return 0
	echo "$1" "$2" | awk '{ n = NF / 2; for (i = 1; i <= n; i++)
		printf " path%d=%d", i, $(n + i) - $i }'
}

# wire_all TGT DEV: rnbd and rnbd2p are measured before nvme connects (its
# keep-alive would add packets), rnbd2p with the first session up beside it
# (its heartbeats add packets, as rnbd2p's two paths' do); nvme's counts
# include its keep-alives.
wire_all() {
	wire "$1" "$2" read-4k 4k 2000
	wire "$1" "$2" write-4k 4k 2000
	wire "$1" "$2" read-128k 128k 500
	wire "$1" "$2" write-128k 128k 500
}

# ---- rnbd2p: a second session with two paths ------------------------------

RXE_ADDR2=10.9.1.1
SESS2P=/sys/class/rtrs-client/bench2

# map_2p NULLB: map NULLB on session bench2 over two paths, RXE_ADDR and
# RXE_ADDR2 (both on the rxe netdev: the two loop back through the one rxe
# device, as in tests/cases/multipath-loopback.sh), round-robin; prints the
# device's name.
map_2p() {
	MAP_ADDR=$RXE_ADDR map_dev bench2 "$1" "path=ip:$RXE_ADDR2@ip:$RXE_ADDR2" ||
		die "map $1 on two paths"
	[ "$(ls "$SESS2P/paths" | wc -l)" = 2 ] || die "bench2: $(ls "$SESS2P/paths")"
	for s in "$SESS2P"/paths/*/state; do
		[ "$(cat "$s")" = connected ] || die "bench2: $s: $(cat "$s")"
	done
	echo round-robin >"$SESS2P/mpath_policy" || die "bench2: mpath_policy"
}

# unmap_2p DEV: unmap it, and wait until the session is gone on both ends.
unmap_2p() {
	unmap_dev "$1" || die "unmap $1"
	for _ in $(seq 100); do
		[ -e "$SESS2P" ] || [ "$(ls /sys/class/rtrs-server | wc -l)" -gt 1 ] ||
			return 0
		sleep 0.1
	done
	die "bench2's session stays after its unmap"
}

# ---- raw verbs ceiling ----------------------------------------------------

perftest() {
	name=$1
	shift
	timeout 300 "$@" -d "$RXE_DEV" -F -R >"$OUT/raw/$name.server.txt" 2>&1 &
	srv=$!
	wait_listen "$1"
	timeout 300 "$@" -d "$RXE_DEV" -F -R "$RXE_ADDR" >"$OUT/raw/$name.txt" 2>&1 ||
		log "perftest $name failed: $(tail -3 "$OUT/raw/$name.txt")"
	wait "$srv"
}

raw_all() {
	mkdir -p "$OUT/raw"
	for s in 4096 131072; do
		perftest "write_bw-$s" ib_write_bw -s "$s" -n 20000
		perftest "write_lat-$s" ib_write_lat -s "$s" -n 2000
		perftest "send_lat-$s" ib_send_lat -s "$s" -n 2000
	done
}

# ---- main -----------------------------------------------------------------

# queue_env DEV: the queue settings of a target's device, for env
queue_env() {
	echo "$1: scheduler=$(cat "/sys/block/$1/queue/scheduler")" \
		"max_sectors_kb=$(cat "/sys/block/$1/queue/max_sectors_kb")" \
		"nr_requests=$(cat "/sys/block/$1/queue/nr_requests")"
}

{
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "fio=$(fio --version)"
	echo "icount=$(grep -c 'rnbd.icount' /proc/cmdline)"
} >"$OUT/env"

setup_rxe
echo "mtu=$(rxe_active_mtu)" >>"$OUT/env"
NB=$(nullb_create nullb0 4096 memory_backed=0 irqmode=0 \
	submit_queues="$(nproc)")
settle
m0=$(mem_kib)
load_rnbd
DEV_rnbd=$(map_dev bench "$NB") || die "map $NB"
settle
m1=$(mem_kib)
NB2=$(nullb_create nullb1 64 memory_backed=0 irqmode=0)
settle
m2=$(mem_kib)
DEV2=$(map_dev bench "$NB2") || die "map $NB2"
settle
m3=$(mem_kib)
unmap_dev "$DEV2" || die "unmap $DEV2"
# The bench's windows (up to 66500 packets: 500 128k writes) are too big
# for the case's histogram of one entry a packet (keys qp,psn,op, 8192
# entries): they are counted by opcode, and a window in which rxe sent
# packets again is measured again (wire()).
RXE_OPC_HIST='hist:keys=op:vals=hitcount:sort=op'
rxe_opcode_probe || log "no opcode histogram"
wire_all rnbd "$DEV_rnbd"
{
	echo "rnbd_session_and_device_kib=$((m0 - m1))"
	echo "rnbd_extra_device_kib=$((m2 - m3))"
	dmesg | sed -n 's/.*open: .* queue depth \([0-9]*\), \([0-9]*\) bytes per chunk.*/server_chunks=\1 server_chunk_bytes=\2/p' | tail -1
} >"$OUT/mem"

# rnbd2p: its memory and wire cost with the first session up (and idle),
# before nvme connects; then it goes until nvme's are measured too, so
# that these are as they were before rnbd2p, and comes back for the matrix.
ip addr add "$RXE_ADDR2/24" dev "$RXE_NETDEV" || die "second address"
NB2P=$(nullb_create nullb2 4096 memory_backed=0 irqmode=0 \
	submit_queues="$(nproc)")
settle
m6=$(mem_kib)
kmsg "bench: rnbd2p map"
DEV_rnbd2p=$(map_2p "$NB2P") || die "map $NB2P on two paths"
settle
m7=$(mem_kib)
wire_all rnbd2p "$DEV_rnbd2p"
{
	echo "rnbd2p_session_and_device_kib=$((m6 - m7))"
	echo "rnbd2p_paths=$(ls "$SESS2P/paths" | wc -l)"
	echo "rnbd2p_server_opens=$(dmesg | sed -n '/rnbd-test: bench: rnbd2p map/,$p' |
		grep -c 'open: .* queue depth')"
} >>"$OUT/mem"
unmap_2p "$DEV_rnbd2p"

settle
m4=$(mem_kib)
nvme_target_setup "$NB"
DEV_nvme=$(nvme_connect)
settle
m5=$(mem_kib)
echo "nvme_connection_and_device_kib=$((m4 - m5))" >>"$OUT/mem"
DEV_local=$(basename "$NB")
sched_none
{
	echo "dev_local=$DEV_local dev_rnbd=$DEV_rnbd dev_nvme=$DEV_nvme"
	for d in "$DEV_local" "$DEV_rnbd" "$DEV_nvme"; do
		queue_env "$d"
	done
} >>"$OUT/env"
wire_all nvme "$DEV_nvme"
grep -H . "$RXE_CNT"/* >"$OUT/rxe-counters-after"
DEV_rnbd2p=$(map_2p "$NB2P") || die "map $NB2P on two paths"
{
	echo "dev_rnbd2p=$DEV_rnbd2p ($NB2P on session bench2:" \
		"$(ls "$SESS2P/paths" | tr '\n' ' ')$(cat "$SESS2P/mpath_policy"))"
	queue_env "$DEV_rnbd2p"
} >>"$OUT/env"
sched_none
# file: after the memory and wire counts of the other targets, which it
# leaves as they were; idle while they run
FILE_DIR=/run/rnbd-bench-file
mkdir -p "$FILE_DIR"
mount -t tmpfs -o size=600M rnbd-bench-file "$FILE_DIR" || die "tmpfs for file"
# written, not a hole: reads copy pages, writes do not allocate
dd if=/dev/zero of="$FILE_DIR/disk.img" bs=1M count=512 2>/dev/null ||
	die "image file"
echo 1 >/sys/module/rnbd_server/parameters/file_exports
DEV_file=$(map_dev bench "$FILE_DIR/disk.img") || die "map the image file"
{
	echo "dev_file=$DEV_file ($FILE_DIR/disk.img on tmpfs, session bench," \
		"io_mode $(cat /sys/class/rnbd-server/ctl/files/*disk.img/io_mode))"
	queue_env "$DEV_file"
} >>"$OUT/env"
sched_none
cat "$OUT/env" "$OUT/mem"

# The order of the targets rotates from one repeat to the next, so that
# none of them always runs first (or right after the local run): in four
# repeats each of the four runs once in each position.  Leave rnbd2p out
# and the first four repeats' orders are those of the three targets before
# it (local rnbd nvme, rnbd nvme local, nvme local rnbd, local rnbd nvme);
# rnbd2p runs right after nvme.  file runs last, after the four (their
# orders are as they were before it).
ORDERS="local rnbd nvme rnbd2p file:rnbd nvme rnbd2p local file:nvme rnbd2p local rnbd file:rnbd2p local rnbd nvme file"
for rep in $(seq "$REPEAT"); do
	order=$(echo "$ORDERS" | cut -d: -f$(( (rep - 1) % 4 + 1 )))
	for row in $ROWS; do
		for tgt in $order; do
			run_row "$row" "$tgt" "$(eval echo "\$DEV_$tgt")" "$rep"
		done
	done
done

# perftest's two ends poll: with one vCPU (--icount) they only take turns
[ "$(nproc)" -lt 2 ] || raw_all

nvme disconnect -n "$NQN" >/dev/null || die "nvme disconnect"
unmap_dev "$DEV_rnbd2p" || die "unmap $DEV_rnbd2p"
unmap_dev "$DEV_file" || die "unmap $DEV_file"
unmap_dev "$DEV_rnbd" || die "unmap $DEV_rnbd"
unload_rnbd
umount "$FILE_DIR" || die "umount $FILE_DIR"
rxe_opcode_probe_remove
echo "bench: done"
