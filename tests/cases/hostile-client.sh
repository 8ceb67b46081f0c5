# SPDX-License-Identifier: GPL-2.0-only
# desc: a hostile client (tests/hostile/rnbd-hostile) sends the server more
#       than 300 malformed inputs (CM private data, immediates, request
#       headers, block messages) and floods (sessions, promised connections,
#       connections past max_conns_per_peer, paths past the 8 of a session,
#       OPENs, requests whose replies cannot land), from a seed: the server
#       answers each with an error or closes only that session; afterwards
#       no session, RDMA object, counted connection or chunk memory is
#       left, and a legitimate client maps and passes fio verify.  Every
#       input's outcome is judged against tests/hostile/expect-client (an
#       error, a closed session or acceptance, as the protocol says; never
#       another).  A
#       bystander session maps another device and does verified IO through
#       the whole round.  Sessions left idle (no device, no heartbeat,
#       connections never made) are closed.
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
nb2=$(nullb_create nullb1 64)
judge=$REPO/tests/hostile/judge
expect=$REPO/tests/hostile/expect-client
# the tool's report: with the case's results
out=${CASE_RESULTS:-/job/results}/hostile-client-tool.log
# 16 sessions per address: the flood of 64 meets the cap
P=/sys/module/rnbd_trs_server/parameters
old_peer=$(cat $P/max_sessions_per_peer)
echo 16 >$P/max_sessions_per_peer
# connections per address: room for the bystander and the flood's session
# that announces 1024, not for the 12 that announce 128 each
N=/sys/module/rnbd_trs_server/nr_conns
conn_cap=1088
old_peer_conns=$(cat $P/max_conns_per_peer)
echo $conn_cap >$P/max_conns_per_peer

# the bystander: a legitimate session of the kernel client, mapped before
# the round and doing verified IO (each job with a fresh seed, so a lost
# write cannot read back an earlier job's data) until the round has ended
bys=$(map_dev bystander "$nb2")
bystander() {
	local n=0 rs
	while [ ! -e /tmp/bys.stop ]; do
		rs=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
		fio --name=b --filename="/dev/$bys" --ioengine=libaio --direct=1 \
			--rw=randwrite --bs=4k --iodepth=8 --size=8M --randseed="$rs" \
			--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
			>/tmp/bys.out 2>&1 ||
			{ echo "job $((n + 1)) (randseed $rs) failed" >/tmp/bys.fail
			  cat /tmp/bys.out >>/tmp/bys.fail; return 1; }
		n=$((n + 1))
		echo $n >/tmp/bys.jobs
	done
}
rm -f /tmp/bys.stop /tmp/bys.fail /tmp/bys.jobs
# the bystander's 8 MiB written once before the memory baseline: null_blk
# allocates its pages on the first write
head -c 8388608 /dev/urandom | dd of="/dev/$bys" bs=1M oflag=direct 2>/dev/null ||
	die "bystander: first write"

sync
echo 3 >/proc/sys/vm/drop_caches
base_res=$(rdma_res_counts)
base_mem=$(free_kb)
# the bystander's connections, all the server counts now
base_conns=$(cat $N)
[ "$base_conns" -ge 1 ] || die "the server counts $base_conns connections with the bystander's session mapped"
log "seed $seed, $rounds round(s); before: $base_res, $base_conns connections, $base_mem kB free"
bystander &
bys_pid=$!
t0=$(date +%s)
rc=0
"$tool" --server "$RXE_ADDR" --device "$nb" --seed "$seed" --cases all \
	--rounds "$rounds" >"$out" 2>&1 || rc=$?
t1=$(date +%s)
# the job under way when the round ended finishes, verified
touch /tmp/bys.stop
bst=0
wait $bys_pid || bst=$?
tail -4 "$out"
[ $rc = 0 ] || die "rnbd-hostile exited $rc (seed $seed): see $out"
[ $bst = 0 ] && [ ! -e /tmp/bys.fail ] ||
	die "the bystander's verified IO failed during the round: $(cat /tmp/bys.fail 2>/dev/null)"
log "bystander: $(cat /tmp/bys.jobs 2>/dev/null || echo 0) verified 8 MiB jobs during the round"
[ "$(cat /tmp/bys.jobs 2>/dev/null || echo 0)" -ge 1 ] ||
	die "the bystander finished no job during the round"
# every input's outcome, judged
python3 "$judge" "$expect" "$out" || die "outcomes not as expected (seed $seed): see $out"
# the cap: the bystander's session counts against the same peer
acc=$(grep -c '^case flood-sessions: .* -> accepted$' "$out" || true)
[ "$acc" -le 15 ] || die "$acc flood sessions accepted beside the bystander's, cap 16"
summary=$(grep '^hostile: [0-9]* cases, [0-9]* distinct inputs' "$out")
inputs=$(echo "$summary" | sed 's/.* cases, \([0-9]*\) distinct inputs.*/\1/')
log "$summary in $((t1 - t0)) s"
[ "${inputs:-0}" -ge 300 ] || die "only ${inputs:-0} distinct inputs"
grep -q 'rejected EUSERS' "$out" ||
	die "the session flood never met max_sessions_per_peer"
# the connection flood: refused at max_conns_per_peer, never past it (the
# bystander's connections count against the same address)
fc=$(grep '^hostile: flood-conns:' "$out" | tail -1)
log "$fc"
grep -q '^case flood-conns: .* -> rejected EMFILE$' "$out" ||
	die "the connection flood never met max_conns_per_peer ($conn_cap): $fc"
fcn=$(echo "$fc" | sed -n 's/.* accepted (\([0-9]*\) connections).*/\1/p')
[ -n "$fcn" ] && [ $((fcn + base_conns)) -le $conn_cap ] ||
	die "the flood held ${fcn:-?} connections beside the bystander's $base_conns, max_conns_per_peer $conn_cap"
log "$(grep '^hostile: flood-paths:' "$out" | tail -1)"
# the holes of the protocol before minor 4 (joins without the key,
# connection 0 twice, /proc's magic links) are rules of expect-client
# minor 5: the reply to a request carries its slot tag (generation) whole
n=$(grep -cF "the reply echoes the tag" "$out")
ok=$(grep -F "the reply echoes the tag" "$out" | grep -c -- "-> answered ENODEV")
[ "$n" -ge 3 ] && [ "$n" = "$ok" ] ||
	die "slot tags: $ok of $n replies echoed the tag: $(grep -F "the reply echoes the tag" "$out" | grep -v -- "-> answered ENODEV" | head -1)"
echo "$old_peer" >$P/max_sessions_per_peer
echo "$old_peer_conns" >$P/max_conns_per_peer

# every session the hostile client made is gone: its RDMA objects...
i=0
until [ "$(rdma_res_counts)" = "$base_res" ]; do
	i=$((i + 1))
	[ $i -lt $((600 * S)) ] ||
		die "RDMA objects left 60 s after the hostile client: $(rdma_res_counts), before $base_res"
	sleep 0.1
done
# ...its connections (a count that leaked would refuse the address for ever)...
i=0
until [ "$(cat $N)" = "$base_conns" ]; do
	i=$((i + 1))
	[ $i -lt $((300 * S)) ] ||
		die "the server counts $(cat $N) connections 30 s after the hostile client, $base_conns before"
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
python3 "$judge" "$expect" "$out.idle" || die "idle outcomes not as expected: see $out.idle"
closed=$(grep -c '^hostile: idle: .*: closed by the server' "$out.idle" || true)
expect_eq "idle sessions the server closed" "$closed" 4

# a legitimate client is served as before
dev=$(map_dev after "$nb")
fio --name=v --filename="/dev/$dev" --ioengine=libaio --direct=1 --rw=randwrite \
	--bs=4k --iodepth=16 --size=16M --verify=crc32c --verify_fatal=1 \
	--randseed="$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')" \
	--verify_state_save=0 >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio verify"; }
unmap_dev "$dev"
unmap_dev "$bys"
# no session left: no connection counted
i=0
until [ "$(cat $N)" = 0 ]; do
	i=$((i + 1))
	[ $i -lt $((300 * S)) ] ||
		die "the server counts $(cat $N) connections 30 s after the last unmap"
	sleep 0.1
done
