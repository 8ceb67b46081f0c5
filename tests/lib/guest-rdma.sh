# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest helpers, RDMA (sourced by tests/lib/guest.sh): soft-RoCE set up
# and torn down (setup_rxe, teardown_rxe), RDMA resources and rdma_cm
# listeners (rdma_res_counts, wait_listen), the rxe device's packet
# counters and a kprobe histogram of the opcodes it sends
# (rxe_opcode_*), and the two links between two guests: setup_links,
# rxe_pkts, netem on both ends of a link (link_netem, netem_follow).

# setup_rxe [NETDEV ADDR/PREFIX [RXEDEV]]: an rxe device (RXE_DEV, rxe0,
# unless named) on a netdev with an IPv4 address.  Without arguments a
# dummy netdev (rxe loops back in itself).
setup_rxe() {
	nd=${1:-$RXE_NETDEV}
	addr=${2:-$RXE_ADDR/24}
	rd=${3:-$RXE_DEV}
	mod_loaded rdma_rxe || modprobe rdma_rxe || die "modprobe rdma_rxe"
	mod_loaded rdma_ucm || modprobe rdma_ucm || die "modprobe rdma_ucm"
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
rdma_res_counts() {
	for r in pd cq qp mr cm_id; do
		printf '%s=%s ' "$r" "$(rdma resource show "$r" 2>/dev/null | grep -c . || true)"
	done
	echo
}

# rdma_res_left: the RDMA objects (pd, cq, qp, mr, cm_id) of any device,
# one line each, but ib_core's own (the GSI QP of each port, its PD and
# CQ, live as long as the device): after a case, anything listed is a
# leak.  Empty when nothing is left.
rdma_res_left() {
	for r in pd cq qp mr cm_id; do
		rdma resource show "$r" 2>/dev/null
	done | grep -v 'comm \[ib_core\]' || true
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

# rxe_opcode_probe: a kprobe on rxe_xmit_packet() that records the QP,
# PSN and BTH opcode of every packet the rxe device sends (with rxe
# loopback it also receives each of them).  The offsets in rxe_pkt_info
# are read from the module's BTF.  Fails if that cannot be done.
rxe_opcode_probe() {
	tr=/sys/kernel/tracing
	grep -q " $tr " /proc/mounts || mount -t tracefs nodev "$tr" || return 1
	b=/sys/kernel/btf/rdma_rxe
	off=$(btf_offset $b rxe_pkt_info opcode)
	poff=$(btf_offset $b rxe_pkt_info psn)
	[ -n "$off" ] && [ -n "$poff" ] ||
		{ echo "no BTF offset of rxe_pkt_info.opcode or .psn" >&2; return 1; }
	# rxe_xmit_packet(qp, pkt, skb): qp and pkt are the first two arguments
	grep -q '^p:rnbdpkt/xmit ' "$tr/kprobe_events" ||
		echo "p:rnbdpkt/xmit rdma_rxe:rxe_xmit_packet qp=%di:x64" \
			"psn=+$poff(%si):u32 op=+$off(%si):u8" \
			>>"$tr/kprobe_events" || return 1
	RXE_OPC_EVENT=$tr/events/rnbdpkt/xmit
}

# A histogram entry is one packet of one QP: a packet the rxe device sends
# again (its retransmit timer, a sequence NAK) adds to the entry's hitcount,
# not an entry.  8192 entries hold a window of wire-packets-per-io (at most
# 6700 packets); the debug kernel takes some 0.4 ms to free one, and 65536
# held its CPU for 26 s (a soft lockup).  A caller whose windows are bigger
# sets its own keys after sourcing this (the bench: keys=op, one entry an
# opcode).
RXE_OPC_HIST='hist:keys=qp,psn,op:vals=hitcount:sort=op:size=8192'

rxe_opcode_hist_start() {
	echo "$RXE_OPC_HIST" >"$RXE_OPC_EVENT/trigger"
}

# rxe_opcode_hist_stop FILE: save the histogram ("{ qp: Q, psn: P, op: N }
# hitcount: M"); fails if it dropped an entry.
rxe_opcode_hist_stop() {
	cat "$RXE_OPC_EVENT/hist" >"$1"
	echo "!$RXE_OPC_HIST" >"$RXE_OPC_EVENT/trigger"
	grep -q '^ *Dropped: *0$' "$1"
}

# rxe_hist_totals FILE: a saved histogram's totals ("Hits: H Entries: E
# Dropped: D"), for a failure's message.
rxe_hist_totals() {
	grep -E '^ *(Hits|Entries|Dropped):' "$1" | tr -s ' \n' ' '
}

# rxe_opcode_probe_remove: undo rxe_opcode_probe (before rdma_rxe goes).
rxe_opcode_probe_remove() {
	RXE_OPC_EVENT=
	grep -qs '^p:rnbdpkt/xmit ' /sys/kernel/tracing/kprobe_events || return 0
	echo '-:rnbdpkt/xmit' >>/sys/kernel/tracing/kprobe_events
}

# rxe_opcode_count FILE OPCODE...: packets of these opcodes in a histogram,
# each counted once however often it was sent.
rxe_opcode_count() {
	f=$1
	shift
	for op in "$@"; do
		grep -c "op: *$op } hitcount:" "$f"
	done | awk '{ s += $1 } END { print s + 0 }'
}

# rxe_acks FILE: "IO HEARTBEAT OTHER", the ACKs of a histogram by what
# they acknowledge.  rxe's ACK carries the PSN of the packet it
# acknowledges: IO counts the ACKs of a request or reply packet in the
# window, HEARTBEAT those of a heartbeat (opcode 5) in it, OTHER those of
# packets sent before the window (a heartbeat sent just before it began).
# A PSN is per QP and an ACK is on the peer's QP, so an OTHER ACK could
# match a packet of another QP by chance: one in 2^24 per packet of the
# window.  The window's last ACK is in it: rxe's responder sends an ACK
# in the run that completed the receive (on 6.1 before the CQ's tasklet
# can hand the completion to rnbd), and the IO waiting for that reply
# ends after rnbd has it.
rxe_acks() {
	awk '
	/hitcount:/ {
		psn = $0; sub(/.*psn: */, "", psn); sub(/[^0-9].*/, "", psn)
		op = $0; sub(/.*op: */, "", op); sub(/[^0-9].*/, "", op)
		if (op == 17) ack[++na] = psn
		else if (op == 5) hb[psn] = 1
		else io[psn] = 1
	}
	END {
		for (i = 1; i <= na; i++)
			if (ack[i] in io) n_io++
			else if (ack[i] in hb) n_hb++
			else n_other++
		print n_io + 0, n_hb + 0, n_other + 0
	}' "$1"
}

# rxe_opcode_sent FILE OPCODE...: packets of these opcodes sent, counting
# every time a packet was sent again.
rxe_opcode_sent() {
	f=$1
	shift
	for op in "$@"; do
		sed -n "s/.*op: *$op } hitcount: *\([0-9]*\).*/\1/p" "$f"
	done | awk '{ s += $1 } END { print s + 0 }'
}

# ---- two links between two guests, multipath -----------------------------
#
# A case that gives both guests two links (tests/lib/host.sh, pair_net
# PORT ROLE 1) has link 1 on eth0, 10.10.0.0/24, and link 2 on eth1,
# 10.11.0.0/24: server .1, client .2, an rxe device on each (rxe0, rxe1).
# rdma_cm takes each subnet to its own device: the route to the peer's
# address names the netdev, and the netdev its rxe device.

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
