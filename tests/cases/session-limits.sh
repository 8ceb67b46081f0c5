# SPDX-License-Identifier: GPL-2.0-only
# desc: the documented limits and knobs do what the ABI says: the server's
#       global max_sessions refuses one session more with EUSERS and a log
#       line, max_chunk_mem_mb refuses a session whose chunks would pass it
#       with ENOSPC and a log line; max_conns_per_peer and max_conns count
#       each session's connections (nr_conns) and refuse one connection
#       more with EMFILE and ENFILE and a log line, not one less, and the
#       count falls back on unmap and to 0 when rnbd_server is unloaded; a non-default max_io_size (64 KiB)
#       reaches the client's queue limits and larger IO is split and
#       verified; a session whose server is gone tries again every
#       reconnect_delay_sec (never sooner) and gives up after
#       max_reconnect_attempts failures (path "closed", IO fails with EIO),
#       and its loss timeout passing later reports nothing more
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
TRS_SERVER_PARAMS="max_io_size=65536"
rnbd_setup
P=/sys/module/rnbd_trs_server/parameters
nb1=$(nullb_create nullb1 16)
nb2=$(nullb_create nullb2 16)
nb3=$(nullb_create nullb3 16)

# -- max_io_size=65536: a chunk is 64 KiB, and so is the client's largest IO
expect_eq "server max_io_size" "$(cat $P/max_io_size)" 65536
d1=$(map_dev lim1 "$nb1")
expect_eq "max_hw_sectors_kb of a 64 KiB-chunk session" \
	"$(cat /sys/block/$d1/queue/max_hw_sectors_kb)" 64
fio --name=big --filename="/dev/$d1" --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=256k --iodepth=4 --size=8M \
	--randseed="$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')" \
	--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
	>/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio verify of 256 KiB IO over 64 KiB chunks"; }

# -- connections: a path counts the connections its client opens (one per
# possible CPU), against max_conns_per_peer (EMFILE) and max_conns (ENFILE);
# a path that fits exactly is taken, one more connection is refused
N=/sys/module/rnbd_trs_server/nr_conns
c=$(cat $N)
cpus=$(($(sed 's/.*-//' /sys/devices/system/cpu/possible) + 1))
expect_eq "connections counted with one session mapped" "$c" "$cpus"
old_pc=$(cat $P/max_conns_per_peer)
old_tc=$(cat $P/max_conns)
echo $((2 * c - 1)) >$P/max_conns_per_peer
r=$(sysfs_write "$MAP_CTL" "sessname=lim2 path=ip:$RXE_ADDR device_path=$nb2")
echo "$old_pc" >$P/max_conns_per_peer
expect_eq "a session over max_conns_per_peer=$((2 * c - 1))" "$r" EMFILE
klog | grep -q "its $c connections would pass max_conns_per_peer ($((2 * c - 1))), it holds $c" ||
	die "no server log line for max_conns_per_peer: $(klog | grep rnbd_trs_server | tail -3)"
[ ! -e /sys/class/rtrs-client/lim2 ] || die "the refused session left a directory"
echo $((2 * c - 1)) >$P/max_conns
r=$(sysfs_write "$MAP_CTL" "sessname=lim2 path=ip:$RXE_ADDR device_path=$nb2")
echo "$old_tc" >$P/max_conns
expect_eq "a session over max_conns=$((2 * c - 1))" "$r" ENFILE
klog | grep -q "its $c connections would pass max_conns ($((2 * c - 1))), the server holds $c" ||
	die "no server log line for max_conns: $(klog | grep rnbd_trs_server | tail -3)"
expect_eq "connections counted after two refusals" "$(cat $N)" "$c"
# exactly at both caps: taken; then the next is refused
echo $((2 * c)) >$P/max_conns_per_peer
echo $((2 * c)) >$P/max_conns
d2=$(map_dev lim2 "$nb2")
expect_eq "connections counted with two sessions mapped" "$(cat $N)" $((2 * c))
r=$(sysfs_write "$MAP_CTL" "sessname=lim3 path=ip:$RXE_ADDR device_path=$nb3")
expect_eq "a third session at max_conns_per_peer=$((2 * c))" "$r" EMFILE
echo "$old_pc" >$P/max_conns_per_peer
echo "$old_tc" >$P/max_conns
unmap_dev "$d2"
# the server closes the session once the client is gone: uncounted, once
i=0
until [ "$(cat $N)" = "$c" ]; do
	i=$((i + 1))
	[ $i -lt $((100 * S)) ] || die "$(cat $N) connections counted 10 s after an unmap, $c expected"
	sleep 0.1
done

# -- the global session cap: two sessions held, a third refused
old_max=$(cat $P/max_sessions)
echo 2 >$P/max_sessions
d2=$(map_dev lim2 "$nb2")
r=$(sysfs_write "$MAP_CTL" "sessname=lim3 path=ip:$RXE_ADDR device_path=$nb3")
echo "$old_max" >$P/max_sessions
expect_eq "a session over max_sessions=2" "$r" EUSERS
klog | grep -q "refused: the server holds max_sessions (2) sessions" ||
	die "no server log line for max_sessions: $(klog | grep rnbd_trs_server | tail -3)"
[ ! -e /sys/class/rtrs-client/lim3 ] || die "the refused session left a directory"
unmap_dev "$d2"

# -- the chunk memory cap: a session pins queue_depth x max_io_size; with
# room for one session only, the second is refused
qd=$(cat $P/sess_queue_depth)
per=$((qd * 65536))
old_mem=$(cat $P/max_chunk_mem_mb)
echo $(((per + per / 2) >> 20)) >$P/max_chunk_mem_mb
r=$(sysfs_write "$MAP_CTL" "sessname=lim3 path=ip:$RXE_ADDR device_path=$nb3")
echo "$old_mem" >$P/max_chunk_mem_mb
expect_eq "a session over max_chunk_mem_mb=$(((per + per / 2) >> 20)) ($qd chunks of 64 KiB each)" "$r" ENOSPC
klog | grep -q "chunks would pass max_chunk_mem_mb" ||
	die "no server log line for max_chunk_mem_mb: $(klog | grep rnbd_trs_server | tail -3)"
r=$(sysfs_write "$MAP_CTL" "sessname=lim3 path=ip:$RXE_ADDR device_path=$nb3")
expect_eq "the same session once the cap is lifted" "$r" OK

# -- reconnect_delay_sec and max_reconnect_attempts: the server goes away
# for good; the session tries twice, 2 s (plus up to 1 s of jitter) apart,
# then gives up, before its loss timeout, which then says nothing more
sdir=/sys/class/rtrs-client/lim1
echo 2 >$sdir/reconnect_delay_sec
echo 2 >$sdir/max_reconnect_attempts
loss=$((12 * S))
echo $loss >$sdir/loss_timeout_sec
kmsg "session-limits: rmmod rnbd_server"
t0=$EPOCHREALTIME
timeout 60 rmmod rnbd_server || die "rmmod rnbd_server"
# the unload closed every session: no connection is counted any more
expect_eq "connections counted once rnbd_server is unloaded" "$(cat $N)" 0
wait_path_state lim1 closed $((30 * S))
t1=$EPOCHREALTIME
ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1000 }')
log "loss to closed after 2 attempts 2 s apart: $ms ms"
# the first attempt waits one delay after the loss, the second one more
[ "$ms" -ge 4000 ] || die "gave up after $ms ms: reconnect_delay_sec 2 not honoured"
[ "$ms" -le $(((3 * 3000 + 5000) * S)) ] || die "gave up only after $ms ms"
if timeout $((30 * S)) dd if="/dev/$d1" of=/dev/null bs=4k count=1 iflag=direct 2>/tmp/dd.err; then
	die "a read of a closed session's device succeeded"
fi
grep -q 'Input/output error' /tmp/dd.err || die "read of a closed session: $(cat /tmp/dd.err)"
# it stays closed when the server is back: it gave up
ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
sleep $((4 * S))
expect_eq "path state once the server is back" "$(path_state lim1)" closed
# the loss timeout passed after it gave up: a session that gave up is not
# reported lost as well (it was, once)
while [ "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')" -le $((loss + 3 * S)) ]; do
	sleep 0.5
done
klog | grep -q "session lim1: disconnected for good" || die "no line for the session that gave up"
klog | grep -E "lim1: (still not connected|no connection for)" &&
	die "the session that gave up was reported lost after that"
expect_eq "path state after the loss timeout" "$(path_state lim1)" closed
unmap_dev "$d1" force
