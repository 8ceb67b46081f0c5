# SPDX-License-Identifier: GPL-2.0-only
# desc: a backing device with one tag whose requests take 4 s each (null_blk,
#       timer completion) under one device of a session, with two of its
#       requests in flight from each CPU, so the server cannot submit the
#       second one of each connection without waiting for a tag: the
#       session's other device keeps doing IO on every connection without
#       a stall of 3 s, no heartbeat is missed, the slow requests all
#       complete without error, and verified writes follow
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
kmsg "hung-disk-few-tags: start"
rnbd_setup
nbA=$(nullb_create nbfast 64)
nbS=$(nullb_create nbslow 16 memory_backed=0 hw_queue_depth=1 irqmode=2 \
	completion_nsec=4000000000)
devA=$(map_dev tags "$nbA")
devS=$(map_dev tags "$nbS")
# 16 slow requests, 4 s each (null_blk times its own out at 5 s), wait
# up to 64 s in all (still some in flight after the 16 s window on the
# slower debug kernel): no request timeout of ours may act
echo 600000 >/sys/block/$devS/queue/io_timeout

# IO to the other device from both CPUs, i.e. on both connections.
fio --name=a --filename=/dev/$devA --ioengine=libaio --direct=1 \
	--rw=randread --bs=4k --iodepth=4 --numjobs=2 --cpus_allowed=0-1 \
	--cpus_allowed_policy=split --time_based --runtime=$((40 * S)) \
	>/tmp/fio-a.out 2>&1 &
apid=$!
sleep 2
# From the slow device's first request to the window's end, no fork (the
# debug kernel may take seconds per fork, and the 16 slow requests are
# done in 64 s): bash builtins read sysfs and the clock, and a pause is a
# read that times out on a FIFO nobody writes.  A sampler of date, awk
# and sleep once took one sample in the whole window and saw no stall.
rm -f /tmp/hd.tick
mkfifo /tmp/hd.tick
exec 7<>/tmp/hd.tick
inflight() {	# inflight DEV: requests of DEV in flight, into $nr
	local r w
	read -r r w <"/sys/block/$1/inflight"
	nr=$((r + w))
}
kmsg "slow requests from each CPU, two at a time"
fio --name=s --filename=/dev/$devS --ioengine=libaio --direct=1 \
	--rw=randread --bs=4k --iodepth=2 --io_size=32k --numjobs=2 \
	--cpus_allowed=0-1 --cpus_allowed_policy=split >/tmp/fio-s.out 2>&1 &
spid=$!
i=0
inflight "$devS"
until [ "$nr" -ge 4 ]; do
	i=$((i + 1)); [ $i -lt $((300 * S)) ] || die "4 requests not in flight on $devS"
	read -rt 0.1 -u 7 _ || true
	inflight "$devS"
done
# Completed requests of the other device, sampled for 16 s and at least 40
# times: the longest time without one.
t_end=$((${EPOCHREALTIME%.*} + 16))
n=0
while :; do
	read -r reads _ _ _ writes _ </sys/block/$devA/stat
	echo "$EPOCHREALTIME $((reads + writes))"
	n=$((n + 1))
	[ $n -lt 40 ] || [ "${EPOCHREALTIME%.*}" -lt $t_end ] || break
	read -rt 0.2 -u 7 _ || true
done >/tmp/samples
# the window was one of contention: slow requests still queued at its end
inflight "$devS"
slow_left=$nr
exec 7>&-
rm -f /tmp/hd.tick
gap=$(awk 'NR == 1 || $2 != n { if (NR > 1 && $1 - t > g) g = $1 - t; t = $1; n = $2 }
	END { if ($1 - t > g) g = $1 - t; printf "%.1f", g }' /tmp/samples)
log "longest stall of the other device with slow requests queued: $gap s"
awk -v g="$gap" -v m=$((3 * S)) 'BEGIN { exit !(g < m) }' ||
	die "the other device stalled $gap s behind the slow device's tags"
[ "$slow_left" -ge 1 ] || die "no slow request left in flight at the window's end"
expect_eq "session state" "$(path_state tags)" connected
klog | grep -q 'no heartbeat' && die "a heartbeat was missed"
klog | grep -q 'session tags: lost its connection' && die "the session reconnected"

wait $spid || { cat /tmp/fio-s.out; die "slow requests failed"; }
grep -q 'err= *0' /tmp/fio-s.out || { cat /tmp/fio-s.out; die "fio on the slow device"; }
wait $apid || { cat /tmp/fio-a.out; die "IO to the other device"; }
fio --name=v --filename=/dev/$devA --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=4M --verify=crc32c \
	--verify_fatal=1 >/tmp/fio-v.out 2>&1 || { cat /tmp/fio-v.out; die "verified writes"; }
for d in $devA $devS; do
	expect_eq "unmap $d" "$(sysfs_write /sys/block/$d/rnbd/unmap_device normal)" OK
done
