# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Guest side of scripts/bench/run.  One null_blk device (no memory backing,
# immediate completion) is used three ways in this one boot: locally, through
# rnbd over rxe loopback and through NVMe-oF RDMA over the same rxe device.
# Every row of the fio matrix runs on the three targets in turn, REPEAT
# times.  Then the wire cost per IO (rxe packet counters, a histogram of the
# packets' opcodes, our transport's WR counters), the raw-verbs ceiling
# (perftest) and the memory cost.  Raw results go to /job/out; the host's
# report.py turns them into the table and bench-results.json.
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
	counters "$dev" >/tmp/c0
	# run --insn-prof: the symbols the profile's addresses belong to
	[ ! -e /job/insn-prof.txt ] || [ -e "$OUT/kallsyms.$tgt" ] ||
		cat /proc/kallsyms >"$OUT/kallsyms.$tgt"
	insn_mark
	DEV=/dev/$dev fio --output-format=json --output="$out" "$job" ||
		die "fio $row on $tgt"
	insn_mark
	counters "$dev" >/tmp/c1
	[ -z "$INSN_MARK" ] ||
		echo "$((INSN_SEQ - 1)) $INSN_SEQ ${out#"$OUT"/}" >>"$OUT/insn-marks"
	# The CPU time and kernel events a row costs, whoever spends them:
	# fio, the block layer, rxe, the client and the server, kworkers.
	counters_delta /tmp/c0 /tmp/c1 >"${out%.json}.counters"
}

# ---- wire cost ------------------------------------------------------------

# wire TGT DEV KIND BS COUNT: COUNT direct IOs of BS, at queue depth 1.
wire() {
	tgt=$1 dev=$2 kind=$3 bs=$4 count=$5
	f=$OUT/wire/$tgt.$kind
	mkdir -p "$OUT/wire"
	settle
	s0=$(cat "$RXE_CNT/sent_pkts") r0=$(cat "$RXE_CNT/rcvd_pkts")
	w0=$(sess_wrs bench 2>/dev/null)
	[ -z "$RXE_OPC_EVENT" ] || rxe_opcode_hist_start
	case $kind in
	read-*)
		dd if="/dev/$dev" of=/dev/null bs="$bs" count="$count" iflag=direct \
			2>/dev/null || die "dd read $tgt" ;;
	write-*)
		dd if=/dev/zero of="/dev/$dev" bs="$bs" count="$count" oflag=direct \
			2>/dev/null || die "dd write $tgt" ;;
	esac
	[ -z "$RXE_OPC_EVENT" ] || rxe_opcode_hist_stop "$f.hist"
	s1=$(cat "$RXE_CNT/sent_pkts") r1=$(cat "$RXE_CNT/rcvd_pkts")
	w1=$(sess_wrs bench 2>/dev/null)
	echo "ios=$count sent=$((s1 - s0)) rcvd=$((r1 - r0)) wrs=$((w1 - w0))" >"$f"
	log "wire $tgt $kind: $(cat "$f")"
}

# wire_all TGT DEV: rnbd is measured before nvme connects (its keep-alive
# would add packets); nvme's counts include its keep-alives.
wire_all() {
	wire "$1" "$2" read-4k 4k 2000
	wire "$1" "$2" write-4k 4k 2000
	wire "$1" "$2" read-128k 128k 500
	wire "$1" "$2" write-128k 128k 500
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
rxe_opcode_probe || log "no opcode histogram"
wire_all rnbd "$DEV_rnbd"
{
	echo "rnbd_session_and_device_kib=$((m0 - m1))"
	echo "rnbd_extra_device_kib=$((m2 - m3))"
	dmesg | sed -n 's/.*open: .* queue depth \([0-9]*\), \([0-9]*\) bytes per chunk.*/server_chunks=\1 server_chunk_bytes=\2/p' | tail -1
} >"$OUT/mem"

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
		echo "$d: scheduler=$(cat "/sys/block/$d/queue/scheduler")" \
			"max_sectors_kb=$(cat "/sys/block/$d/queue/max_sectors_kb")" \
			"nr_requests=$(cat "/sys/block/$d/queue/nr_requests")"
	done
} >>"$OUT/env"
cat "$OUT/env" "$OUT/mem"
wire_all nvme "$DEV_nvme"
grep -H . "$RXE_CNT"/* >"$OUT/rxe-counters-after"

# The order of the targets rotates from one repeat to the next, so that
# none of them always runs first (or right after the local run).
ORDERS="local rnbd nvme:rnbd nvme local:nvme local rnbd"
for rep in $(seq "$REPEAT"); do
	order=$(echo "$ORDERS" | cut -d: -f$(( (rep - 1) % 3 + 1 )))
	for row in $ROWS; do
		for tgt in $order; do
			run_row "$row" "$tgt" "$(eval echo "\$DEV_$tgt")" "$rep"
		done
	done
done

# perftest's two ends poll: with one vCPU (--icount) they only take turns
[ "$(nproc)" -lt 2 ] || raw_all

nvme disconnect -n "$NQN" >/dev/null || die "nvme disconnect"
unmap_dev "$DEV_rnbd" || die "unmap $DEV_rnbd"
unload_rnbd
rxe_opcode_probe_remove
echo "bench: done"
