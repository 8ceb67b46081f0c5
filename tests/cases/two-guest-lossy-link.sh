# SPDX-License-Identifier: GPL-2.0-only
# desc: two guests, the client's link drops 1% of its packets (netem): rxe
#       retransmits, and writes and reads that go through the slot MRs
#       (more segments than send SGEs, reads above the bounce size) still
#       pass fio verify; no REG_MR runs again on a valid MR ("not free");
#       neither side takes the other for lost (requests and replies count
#       as heartbeats).  Then the server's link drops 1% too: small writes straight from
#       their pages pass fio verify, and replies that beat a lost ACK leave
#       the pages held until the WRITE completed (write_ack_waits)
# boot: host
# timeout: 700
. "$REPO/tests/lib/host.sh"
pair_bed 256M
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_server
# phase 2, server to client too: ACKs of the client's WRITEs, replies
wait_sync /sync/phase2 500
tc qdisc add dev eth0 root netem loss 1% || die "netem"
touch /sync/phase2-ready
wait_sync /sync/client-done 500
dmesg | grep 'no heartbeat from the client' && die "took a client that sent IO for lost"
unload_rnbd
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.2/24
tc qdisc add dev eth0 root netem loss 1% || die "netem"
load_rnbd_client
wait_sync /sync/server-ready 300
dev=$(MAP_ADDR=10.10.0.1 map_dev remote /dev/vda)
# A request unanswered 30 s reconnects its path (allowed here: fio
# verifies the data); the transport logs what such a request waited for
r0=$(cat "$RXE_CNT/completer_retry_err")
fio --name=v --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=randwrite \
	--bsrange=64k-128k --iodepth=32 --size=8M --verify=crc32c --verify_fatal=1 \
	--verify_state_save=0 --numjobs=2 --offset_increment=64M \
	--cpus_allowed=0,1 --cpus_allowed_policy=split >/tmp/fio.out 2>&1 ||
	{ cat /tmp/fio.out; die "fio verify"; }
r1=$(cat "$RXE_CNT/completer_retry_err")
log "rxe retransmissions during fio: $((r1 - r0))"
[ $((r1 - r0)) -gt 0 ] || die "no retransmission: the loss was not exercised"
# Writes whose data fits the send SGEs go from the block layer's pages: a
# lost ACK must keep them until the WRITE completes, even once the reply
# came.  One at a time, so the reply, not a later write's ACK, comes next.
# A round (some 230 writes) loses an ACK before its reply by chance: 6,
# 3 and 0 times in three runs on the debug kernel.  Up to three rounds,
# each verified, until one has.
touch /sync/phase2
wait_sync /sync/phase2-ready 300
w0=$(sess_sum remote write_ack_waits)
for round in 1 2 3; do
	fio --name=s --filename=/dev/$dev --ioengine=libaio --direct=1 \
		--rw=randwrite --bsrange=4k-32k --iodepth=1 --size=2M \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--numjobs=2 --offset_increment=64M --cpus_allowed=0,1 \
		--cpus_allowed_policy=split >/tmp/fio.out 2>&1 ||
		{ cat /tmp/fio.out; die "fio verify (small writes, round $round)"; }
	w1=$(sess_sum remote write_ack_waits)
	log "small-write replies that came before their WRITE completed" \
		"after round $round: $((w1 - w0))"
	[ $((w1 - w0)) -eq 0 ] || break
done
[ $((w1 - w0)) -gt 0 ] || die "no reply beat a lost ACK in 3 rounds: the hold was not exercised"
dmesg | grep 'not free' && die "a REG_MR ran again on a valid MR"
# IO flowed all along: no side may take the other for lost (a heartbeat
# held behind writes sent again is made up for by the IO itself)
dmesg | grep 'no heartbeat from the server' && die "took a server that answered IO for lost"
unmap_dev "$dev"
unload_rnbd
touch /sync/client-done
G
pair_run 500
