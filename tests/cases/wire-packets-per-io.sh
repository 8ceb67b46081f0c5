# SPDX-License-Identifier: GPL-2.0-only
# desc: the wire cost of an IO is what the protocol says, exactly: RDMA
#       packets per 4k/128k read/write at MTU 1024 on the rxe device, two
#       RDMA messages per IO, never an RDMA READ, and the WRs the client
#       transport posts per IO (Documentation/transport-protocol.rst); under
#       load, write replies are batched
# boot: shared
# timeout: 300
rnbd_setup
expect_eq "active RDMA MTU" "$(rxe_active_mtu)" 1024
nb=$(nullb_create nullb1 64)
dev=$(map_dev wire "$nb")
rxe_opcode_probe || die "cannot set up the packet opcode probe"

# Opcodes (BTH) that start a message: SEND_FIRST/ONLY(_IMM/_INV),
# RDMA_WRITE_FIRST/ONLY(_IMM), RDMA_READ_REQUEST.
MSG_OPS="0 4 5 6 10 11 12 23"
READ_REQ=12
ACK=17
# Heartbeats (once a second each way, whatever the IO) are zero-length
# SEND_ONLY_WITH_IMMEDIATE messages, one packet and one ACK each: the only
# SENDs once a session is up.  Subtracted as idle traffic: the packets are
# counted in the opcode histogram, whose window is the IO's; the device's
# sent-packets counter, read around it, may also hold heartbeats before or
# after the window, so it is only logged.  An ACK is told from another by
# the PSN it acknowledges (rxe_acks): the ACK of a heartbeat sent just
# before the window is then not taken for an IO's.
HB=5

# rxe_acks on a made-up histogram: a 1-packet request (PSN 100) and its
# ACK, a heartbeat (101) and its ACK, a reply (700) and its ACK on the
# other QP, and an ACK of a packet before the window (555): 2 of IO, 1 of
# a heartbeat, 1 before.  (Subtracting the heartbeats from all ACKs would
# make it 3 of IO.)
expect_eq "rxe_acks of a made-up histogram" "$(printf '%s\n' \
	'{ qp: 0xffff888003a1c000, psn:        100, op:  6 } hitcount:          1' \
	'{ qp: 0xffff888003a1c000, psn:        101, op:  5 } hitcount:          1' \
	'{ qp: 0xffff888003a1d000, psn:        100, op: 17 } hitcount:          1' \
	'{ qp: 0xffff888003a1d000, psn:        101, op: 17 } hitcount:          1' \
	'{ qp: 0xffff888003a1d000, psn:        555, op: 17 } hitcount:          2' \
	'{ qp: 0xffff888003a1d000, psn:        700, op: 11 } hitcount:          1' \
	'{ qp: 0xffff888003a1c000, psn:        700, op: 17 } hitcount:          1' \
	>/tmp/wire-made-up.hist; rxe_acks /tmp/wire-made-up.hist)" "2 1 1"

# resent WHAT BEFORE AFTER: sets $again to what rxe counted of packets
# sent again in a window (retransmit timeouts, sequence NAKs, duplicate
# and out-of-sequence requests), from the device's counters read around
# it (rxe_retrans).  A loaded host (CI's two cores, a debug kernel) can
# hold an ACK past the retransmit timeout, and rxe then sends packets
# again: the histogram counts each packet once however often it went, so
# the requests and replies are still counted exactly, but the ACKs are
# not the protocol's any more (the peer ACKs the copies, and the packets
# rxe asks an ACK for move: 2 retransmit timeouts added 3 ACKs to a 128k
# read window of the debug kernel).  A receiver-not-ready NAK is a
# protocol fault (every request and reply finds a receive posted): it
# fails at once.
resent() {
	again=0
	[ "$2" = "$3" ] && return 0
	log "$1: packets sent again in the window ($2-> $3)"
	for c in rcvd_rnr_err send_rnr_err completer_retry_err rcvd_seq_err \
		duplicate_request out_of_seq_request; do
		c0=$(echo "$2" | sed -n "s/.*$c=\([0-9]*\).*/\1/p")
		c1=$(echo "$3" | sed -n "s/.*$c=\([0-9]*\).*/\1/p")
		case $c in
		*rnr*) [ "$c0" = "$c1" ] ||
			die "$1: receiver-not-ready NAKs ($c $c0 -> $c1)" ;;
		*) again=$((again + ${c1:-0} - ${c0:-0})) ;;
		esac
	done
}

# expect_acks WHAT GOT EXPECTED AGAIN: the ACKs of a window: EXPECTED
# exactly, or at least EXPECTED if rxe sent packets again in it (AGAIN > 0)
# (every request and reply is still ACKed; the messages and packets
# around them are checked exactly either way).
expect_acks() {
	if [ "$4" -eq 0 ]; then
		expect_eq "$1" "$2" "$3"
	else
		[ "$2" -ge "$3" ] ||
			die "$1: got '$2', expected at least '$3' (packets sent again)"
		log "$1: $2, $3 and $(($2 - $3)) more with packets sent again"
	fi
}

# wire KIND BS COUNT PKTS ACKS WRS: COUNT direct IOs of BS must send
# exactly PKTS packets each (ACKS of them acknowledgements: the
# rxe device counts both ends, it loops back to itself), as two messages,
# while the client transport posts WRS work requests each (MIN-MAX: between
# MIN and MAX each, for data whose segment count depends on how dd's buffer
# lies in physical memory).
wire() {
	kind=$1 bs=$2 n=$3 pkts=$4 acks=$5 wrs=$6
	h=/tmp/wire-$kind.hist
	sync
	s0=$(rxe_sent_pkts)
	w0=$(sess_wrs wire)
	x0=$(rxe_retrans)
	rxe_opcode_hist_start
	case $kind in
	read*) dd if="/dev/$dev" of=/dev/null bs="$bs" count="$n" iflag=direct ;;
	write*) dd if=/dev/urandom of="/dev/$dev" bs="$bs" count="$n" oflag=direct ;;
	esac 2>/dev/null || die "dd $kind"
	rxe_opcode_hist_stop "$h" ||
		die "$kind: the histogram dropped packets ($(rxe_hist_totals "$h"))"
	s1=$(rxe_sent_pkts)
	w1=$(sess_wrs wire)
	resent "$kind" "$x0" "$(rxe_retrans)"
	hb=$(rxe_opcode_count "$h" $HB)
	pk=$(rxe_opcode_count "$h" $(seq 0 31))
	at=$(rxe_opcode_count "$h" $ACK)
	set -- $(rxe_acks "$h")
	ak=$1
	sent=$(rxe_opcode_sent "$h" $(seq 0 31))
	log "$kind: $pk packets, $sent sent ($hb heartbeats; device counter" \
		"$((s1 - s0))), $((w1 - w0)) WRs for $n IOs; ACKs of IO $1," \
		"of heartbeats $2, of packets before the window $3; opcodes:" \
		"$(for op in $(seq 0 31); do
			c=$(rxe_opcode_count "$h" $op)
			[ "$c" -gt 0 ] && printf '%s:%s ' $op "$c"
		done)"
	expect_eq "$kind: request and reply packets for $n IOs" \
		$((pk - at - hb)) $((n * (pkts - acks)))
	[ $((s1 - s0)) -ge $((sent - 2 * hb)) ] ||
		die "$kind: the device counted $((s1 - s0)) packets, fewer than the histogram"
	expect_eq "$kind: messages for $n IOs" \
		$(($(rxe_opcode_count "$h" $MSG_OPS) - hb)) $((n * 2))
	expect_eq "$kind: RDMA READs" "$(rxe_opcode_count "$h" $READ_REQ)" 0
	expect_acks "$kind: ACKs for $n IOs" $ak $((n * acks)) "$again"
	lo=${wrs%-*} hi=${wrs#*-}
	[ $((w1 - w0)) -ge $((n * lo)) ] && [ $((w1 - w0)) -le $((n * hi)) ] ||
		die "$kind: $((w1 - w0)) client WRs for $n IOs, expected $wrs each"
}

# A request header is 48 bytes (transport 24 + block 24).
# 4k write: request 4144 B = 5 packets, reply 1, an ACK each.
wire write-4k 4k 200 8 2 2
# 4k read: request 1 packet, reply with the data 4 packets, an ACK each.
# WRs: WRITE_WITH_IMM and the receive re-posted (the data lands in the
# slot's bounce buffer, registered once per session: no REG_MR, no
# LOCAL_INV).
wire read-4k 4k 200 7 2 2
# 128k write: request 129 packets (the responder also ACKs after 128 of
# them, rxe's limit of unacknowledged packets), reply 1.  With 32 separate
# pages the data needs more SGEs than the device takes and goes through
# the slot's MR (the LOCAL_INV fencing the REG_MR, REG_MR, WRITE_WITH_IMM,
# LOCAL_INV, receive); with fewer segments it goes as SGEs
# (WRITE_WITH_IMM, receive).  Same packets.
wire write-128k 128k 50 133 3 2-5
# 128k read: request 1, reply 128 packets (again 2 ACKs), ACK.  Too big
# for the bounce buffer: fencing LOCAL_INV, REG_MR, WRITE_WITH_IMM,
# LOCAL_INV, receive.
wire read-128k 128k 50 132 3 5

# Under load write replies can share one message (TRS_IMM_RSP_BATCH).
# A 4k write's request is still 5 packets and an ACK; each reply message
# is 1 packet and an ACK, and answers 1 to 17 writes.  500 writes, some
# 3300 packets: on the debug kernel a window of 1000 overflowed the
# histogram's 8192 entries (the heartbeats of a slow window add up).
h=/tmp/wire-batch.hist
sync
s0=$(rxe_sent_pkts)
q0=$(sess_sum wire requests)
x0=$(rxe_retrans)
rxe_opcode_hist_start
fio --name=batch --filename="/dev/$dev" --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=32 --number_ios=500 --size=60M \
	--norandommap --randrepeat=0 >/tmp/fio-batch.out 2>&1 ||
	{ cat /tmp/fio-batch.out; die "fio QD32 writes"; }
rxe_opcode_hist_stop "$h" ||
	die "QD32 writes: the histogram dropped packets ($(rxe_hist_totals "$h"))"
s1=$(rxe_sent_pkts)
q1=$(sess_sum wire requests)
resent "QD32 writes" "$x0" "$(rxe_retrans)"
n=$((q1 - q0))
r=$(rxe_opcode_count "$h" 11)
hb=$(rxe_opcode_count "$h" $HB)
pk=$(rxe_opcode_count "$h" $(seq 0 31))
at=$(rxe_opcode_count "$h" $ACK)
set -- $(rxe_acks "$h")
ak=$1
log "QD32 4k writes: $n requests, $r reply messages, $pk packets" \
	"($hb heartbeats; device counter $((s1 - s0))); ACKs of IO $1," \
	"of heartbeats $2, of packets before the window $3"
[ "$n" -ge 500 ] || die "QD32 writes: only $n requests"
expect_eq "QD32 writes: request messages" \
	"$(rxe_opcode_count "$h" 6)" "$n"
expect_eq "QD32 writes: request and reply packets" $((pk - at - hb)) \
	$((5 * n + r))
expect_acks "QD32 writes: ACKs" $ak $((n + r)) "$again"
[ "$r" -lt "$n" ] || die "QD32 writes: no reply was batched ($r replies, $n writes)"
[ $((17 * r)) -ge "$n" ] || die "QD32 writes: $r replies cannot answer $n writes"
rxe_opcode_probe_remove
unmap_dev "$dev"
