# SPDX-License-Identifier: GPL-2.0-only
# desc: a hostile client (tests/hostile/rnbd-hostile) sends the server more
#       than 300 malformed inputs (CM private data, immediates, request
#       headers, block messages) and floods (sessions, promised connections,
#       OPENs, requests whose replies cannot land), from a seed: the server
#       answers each with an error or closes only that session; afterwards
#       no session, RDMA object or chunk memory is left, and a legitimate
#       client maps and passes fio verify.  Sessions left idle (no
#       device, no heartbeat, connections never made) are closed.
#       RNBD_HOSTILE_ROUNDS=N runs N randomised rounds (default 1),
#       RNBD_HOSTILE_SEED replays a seed.
# boot: shared
# timeout: 1200
rnbd_setup
S=${RNBD_TIMEOUT_SCALE:-1}
seed=${RNBD_HOSTILE_SEED:-$(date +%s)}
rounds=${RNBD_HOSTILE_ROUNDS:-1}
tool=$REPO/tests/hostile/rnbd-hostile
[ -x "$tool" ] || die "$tool not built (make -C tests/hostile)"
nb=$(nullb_create nullb0 64)
# the tool's report: with the case's results
out=${CASE_RESULTS:-/job/results}/hostile-client-tool.log
# 16 sessions per address: the flood of 64 meets the cap
P=/sys/module/rnbd_trs_server/parameters
old_peer=$(cat $P/max_sessions_per_peer)
echo 16 >$P/max_sessions_per_peer

sync
echo 3 >/proc/sys/vm/drop_caches
base_res=$(rdma_res_counts)
base_mem=$(free_kb)
log "seed $seed, $rounds round(s); before: $base_res, $base_mem kB free"
t0=$(date +%s)
rc=0
"$tool" --server "$RXE_ADDR" --device "$nb" --seed "$seed" --cases all \
	--rounds "$rounds" >"$out" 2>&1 || rc=$?
t1=$(date +%s)
tail -4 "$out"
[ $rc = 0 ] || die "rnbd-hostile exited $rc (seed $seed): see $out"
summary=$(grep '^hostile: [0-9]* cases, [0-9]* distinct inputs' "$out")
inputs=$(echo "$summary" | sed 's/.* cases, \([0-9]*\) distinct inputs.*/\1/')
log "$summary in $((t1 - t0)) s"
[ "${inputs:-0}" -ge 300 ] || die "only ${inputs:-0} distinct inputs"
grep -q 'rejected EUSERS' "$out" ||
	die "the session flood never met max_sessions_per_peer"
# holes of the protocol before minor 4 and the caps: each input must be
# refused, not taken (expect CASE-TEXT OUTCOME)
expect() {
	grep -F -- "$1" "$out" | grep -q -- "-> $2" ||
		die "'$1': $(grep -F -- "$1" "$out" | head -1 | sed 's/.* -> //') instead of $2"
}
expect "conn_idx 1, right uuid, zero sess_key" "rejected ENOENT"
expect "conn_idx 1, right uuid, random sess_key" "rejected ENOENT"
expect "with the uuid of a half-made 2-connection session, zero key" "rejected EEXIST"
expect "conn_idx 1 twice, right uuid and key" "rejected EEXIST"
expect "magic link: path \"/proc/self/root" "answered ELOOP"
# minor 5: the reply to a request carries its slot tag (generation) whole
n=$(grep -cF "the reply echoes the tag" "$out")
ok=$(grep -F "the reply echoes the tag" "$out" | grep -c -- "-> answered ENODEV")
[ "$n" -ge 3 ] && [ "$n" = "$ok" ] ||
	die "slot tags: $ok of $n replies echoed the tag: $(grep -F "the reply echoes the tag" "$out" | grep -v -- "-> answered ENODEV" | head -1)"
expect "slot tag generation 3 above index queue_depth" "session closed"
echo "$old_peer" >$P/max_sessions_per_peer

# every session the hostile client made is gone: its RDMA objects...
i=0
until [ "$(rdma_res_counts)" = "$base_res" ]; do
	i=$((i + 1))
	[ $i -lt $((600 * S)) ] ||
		die "RDMA objects left 60 s after the hostile client: $(rdma_res_counts), before $base_res"
	sleep 0.1
done
# ...and its chunks (an RCU grace period and the per-CPU lists later).  Not
# on the debug kernel: KASAN's quarantine keeps freed objects (up to 1/32
# of the RAM), and kmemleak, scanned after the case, finds leaks there.
if [ "${KERNEL:-}" != debug ]; then
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t=$(date +%s)
	until [ $((base_mem - $(free_kb))) -lt 8192 ]; do
		[ $(($(date +%s) - t)) -lt 30 ] ||
			die "free memory $(free_kb) kB, $((base_mem - $(free_kb))) kB below the $base_mem kB before"
		sleep 1
		echo 3 >/proc/sys/vm/drop_caches
	done
fi
log "after: $(rdma_res_counts), $(free_kb) kB free"

# sessions that sit idle are closed: with no device open (idle_session_sec,
# 3 s here), without heartbeats (10 s), with connections promised and
# never made (the 30 s handshake deadline from connection 0)
old_idle=$(cat /sys/module/rnbd_server/parameters/idle_session_sec)
echo 3 >/sys/module/rnbd_server/parameters/idle_session_sec
rc=0
"$tool" --server "$RXE_ADDR" --device "$nb" --seed "$seed" --cases idle \
	--idle-wait $((45 * S)) >"$out.idle" 2>&1 || rc=$?
echo "$old_idle" >/sys/module/rnbd_server/parameters/idle_session_sec
grep '^hostile: idle:' "$out.idle"
[ $rc = 0 ] || die "rnbd-hostile --cases idle exited $rc"
closed=$(grep -c '^hostile: idle: .*: closed by the server' "$out.idle" || true)
expect_eq "idle sessions the server closed" "$closed" 4

# a legitimate client is served as before
dev=$(map_dev after "$nb")
fio --name=v --filename="/dev/$dev" --ioengine=libaio --direct=1 --rw=randwrite \
	--bs=4k --iodepth=16 --size=16M --verify=crc32c --verify_fatal=1 \
	--verify_state_save=0 >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio verify"; }
unmap_dev "$dev"
