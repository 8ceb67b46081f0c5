# SPDX-License-Identifier: GPL-2.0-only
# desc: a backing device with one tag (null_blk, completions at once)
#       under 128 writes of 128 KiB in flight from two CPUs: the server's
#       requests that found no free tag are submitted in their order, none
#       is passed over again and again by newer ones (which once left one
#       waiting 17 s of the 20 s run): the longest write takes at most 4
#       times the average time of a write served in turn, and no request
#       timeout fires; verified writes follow
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
kmsg "server-tag-starvation: start"
rnbd_setup
nb=$(nullb_create nbtags 64 hw_queue_depth=1)
dev=$(map_dev starve "$nb")
# 128 requests for one tag: served in turn, each waits about 128 times
# the device's time per write (about 3 s at 40 writes/s under TCG).  One
# passed over by newer ones each time the tag frees waits as long as the
# stream lasts.
fio --name=s --filename=/dev/$dev --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=128k --iodepth=64 --numjobs=2 --cpus_allowed=0-1 \
	--cpus_allowed_policy=split --time_based --runtime=$((20 * S)) \
	--group_reporting --output-format=json >/tmp/fio-st.json 2>/tmp/fio-st.err ||
	{ cat /tmp/fio-st.err; die "fio"; }
read -r n errs max <<EOT
$(python3 -c '
import json, sys
j = json.load(open("/tmp/fio-st.json"))["jobs"][0]
w = j["write"]
print(w["total_ios"], j["error"], w["clat_ns"]["max"] // 1000000)
')
EOT
log "$n writes, the longest took $max ms"
expect_eq "fio errors" "$errs" 0
[ "$n" -gt 100 ] || die "only $n writes in 20 s"
klog | grep -Eq 'unanswered|no answer to' &&
	die "a request timed out"
# Served in turn, a write waits for the 127 others: 128 times the time
# per write (20 s / n) on average.  Four times that is a write passed over
# (7.9 s against 0.65 s on average, idle, before the FIFOs; 1.4 s after).
turn=$((128 * 20000 * S / n))
log "a write served in turn takes $turn ms on average"
[ "$max" -le $((4 * turn)) ] || die "a write took $max ms, $turn ms in turn: starved"
fio --name=v --filename=/dev/$dev --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=32 --size=2M --verify=crc32c \
	--verify_fatal=1 >/tmp/fio-v.out 2>&1 || { cat /tmp/fio-v.out; die "verified writes"; }
grep -q 'err= *0' /tmp/fio-v.out || { cat /tmp/fio-v.out; die "verified writes: no report"; }
unmap_dev "$dev"
