# SPDX-License-Identifier: GPL-2.0-only
# desc: a hostile server (tests/hostile/rnbd-hostile-srv) lies to the client
#       in every way a server can: short and empty reads, replies for idle
#       slots, twice, on the wrong connection, of unknown types, batches not
#       granted, kernel-internal errnos (in replies and in rejects), accept
#       data and chunk tables that lie, heartbeats that stop (noticed after
#       a heartbeat_timeout_sec of 4 s), OPEN answers that lie or never
#       come, a re-OPEN refused, and (TRS_CAP_AUTH) a proof of another key,
#       none, or no exchange at all to a client that has a key:
#       each map fails with the right errno, or each IO with EIO,
#       or the session reconnects and the IO completes with the right data;
#       nothing hangs, unmap and unload work
# boot: shared
# timeout: 1500
rnbd_setup
S=${RNBD_TIMEOUT_SCALE:-1}
tool=$REPO/tests/hostile/rnbd-hostile-srv
[ -x "$tool" ] || die "$tool not built (make -C tests/hostile)"
PORT=1240
# the tool's reports: with the case's results
out=${CASE_RESULTS:-/job/results}
pid=
# a failed check leaves no tool holding the rxe device (its removal after
# the case would wait for it for ever)
trap '[ -z "$pid" ] || kill "$pid" 2>/dev/null' EXIT

# start MODE [tool options]: the hostile server for one mode
start() {
	mode=$1
	shift
	"$tool" --mode "$mode" --port $PORT --seed 7 "$@" \
		>"$out/hostile-srv-$mode.log" 2>&1 &
	pid=$!
	i=0
	until rdma resource show cm_id 2>/dev/null | grep "comm rnbd-hostile-sr" | grep -q LISTEN; do
		i=$((i + 1))
		[ $i -lt $((300 * S)) ] || die "$mode: the hostile server never listened"
		kill -0 $pid 2>/dev/null || die "$mode: the hostile server died: $(tail -3 "$out/hostile-srv-$mode.log")"
		sleep 0.1
	done
	kmsg "hostile server: $mode"
}

# stop: unmap what is mapped, check the session is gone, stop the server
stop() {
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/unmap_device" ] || continue
		r=$(sysfs_write "$d/rnbd/unmap_device" force)
		[ "$r" = OK ] || die "$mode: force unmap of $(basename "$d"): $r"
	done
	i=0
	while ls /sys/class/rtrs-client/ 2>/dev/null | grep -q .; do
		i=$((i + 1))
		[ $i -lt $((300 * S)) ] || die "$mode: a client session is left: $(ls /sys/class/rtrs-client/)"
		sleep 0.1
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	pid=
}

map() {		# map SESS: OK or the errno name
	sysfs_write "$MAP_CTL" "sessname=$1 path=ip:$RXE_ADDR dest_port=$PORT device_path=/hostile"
}

dev_of() {	# the rnbd device of session $1
	for d in /sys/block/rnbd*; do
		[ "$(cat "$d/rnbd/session" 2>/dev/null)" = "$1" ] && { basename "$d"; return; }
	done
	die "$mode: no device for session $1"
}

# rw_check DEV: 1 MiB of random data written and read back, within 90 s
rw_check() {
	head -c 1048576 /dev/urandom >/tmp/hs-data
	timeout $((90 * S)) dd if=/tmp/hs-data of="/dev/$1" bs=1M oflag=direct 2>/tmp/hs.err ||
		die "$mode: write: $(cat /tmp/hs.err)"
	got=$(timeout $((90 * S)) dd if="/dev/$1" bs=64k count=16 iflag=direct 2>/dev/null | sha256sum)
	expect_eq "$mode: data read back" "$got" "$(sha256sum </tmp/hs-data)"
}

# read_fails DEV BS: a direct read of BS bytes fails with EIO (not a hang)
read_fails() {
	if timeout $((60 * S)) dd if="/dev/$1" of=/dev/null bs="$2" count=1 \
		iflag=direct 2>/tmp/hs.err; then
		die "$mode: a $2-byte read succeeded"
	fi
	grep -q 'Input/output error' /tmp/hs.err ||
		die "$mode: the $2-byte read failed otherwise: $(cat /tmp/hs.err)"
}

# wait_log TEXT SEC: until the kernel log has TEXT, SEC seconds at most
wait_log() {
	i=0
	until klog | grep -q "$1"; do
		i=$((i + 1))
		[ $i -lt $(($2 * 10 * S)) ] || die "$mode: no '$1' in $2 s"
		sleep 0.1
	done
}

# -- the baseline and a harmless difference
for m in honest version-minor; do
	start $m
	expect_eq "$m: map" "$(map hs-$m)" OK
	rw_check "$(dev_of hs-$m)"
	stop
done

# -- lies about read data and status: the IO fails, the session stays
for m in short-read empty-read huge-status; do
	start $m
	expect_eq "$m: map" "$(map hs-$m)" OK
	dev=$(dev_of hs-$m)
	read_fails "$dev" 4096
	read_fails "$dev" 65536
	# the session stays: its path is connected and never reconnected
	expect_eq "$mode: path state" "$(path_state hs-$m)" connected
	klog | grep -q "hs-$m: .*connection lost" &&
		die "$mode: the session reconnected: $(klog | grep "hs-$m: .*connection lost" | head -1)"
	stop
done
klog | grep -q "answered with .* bytes: I/O error" || die "no log line for a short read"

# -- replies that break the protocol: the session reconnects (the next
# server is honest) and the IO completes with the right data
for m in idle-slot dup-reply wrong-conn slot-out-of-range bad-type \
	batch-unasked read-overflow; do
	start $m --honest-after 1
	expect_eq "$m: map" "$(map hs-$m)" OK
	rw_check "$(dev_of hs-$m)"
	# the data alone would pass with no lie told: the lie was sent, the
	# client ended that session, and it reconnected to the honest one
	grep -q "mode $m: .* -> session ended" "$out/hostile-srv-$m.log" ||
		die "$m: no lie ended a session: $(grep -m1 -- ' -> ' "$out/hostile-srv-$m.log")"
	klog | grep -q "hs-$m: .*connection lost: .*; reconnecting" ||
		die "$m: the client never reconnected"
	klog | grep -q "hs-$m: .*reconnected after" || die "$m: no reconnect line"
	stop
done
klog | grep -q "bad reply" || die "no 'bad reply' line"
# late-reply answers a request with the reply to its slot's previous one:
# only the slot tag's generation (TRS_CAP_SLOT_GEN) tells them apart.  A
# slot comes back after about queue-depth requests: 4 KiB ones, 256 reads
# from each CPU (each has slots of its own)
m=late-reply
start $m --honest-after 1
expect_eq "$m: map" "$(map hs-late)" OK
dev=$(dev_of hs-late)
head -c 1048576 /dev/urandom >/tmp/hs-data
timeout $((90 * S)) dd if=/tmp/hs-data of="/dev/$dev" bs=4k oflag=direct 2>/tmp/hs.err ||
	die "$m: write: $(cat /tmp/hs.err)"
for c in 0 1; do
	got=$(timeout $((90 * S)) taskset -c $c dd if="/dev/$dev" bs=4k count=256 iflag=direct 2>/dev/null | sha256sum)
	expect_eq "$m: data read back on CPU $c" "$got" "$(sha256sum </tmp/hs-data)"
done
stop
grep -q "carries a new request: sent the reply of its previous request.*-> session ended" \
	"$out/hostile-srv-$m.log" ||
	die "$m: the late reply was not refused: $(grep -m1 'carries a new request' "$out/hostile-srv-$m.log")"

# -- the server stops its heartbeats: the client notices and reconnects,
# after its heartbeat_timeout_sec (4 s here, not the default 10)
HB=/sys/module/rnbd_trs_client/parameters/heartbeat_timeout_sec
old_hb=$(cat $HB)
echo 4 >$HB
start hb-silent --honest-after 1
t0=$EPOCHREALTIME
expect_eq "hb-silent: map" "$(map hs-hb)" OK
wait_log "hs-hb: no heartbeat from the server for 4 s" 30
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
echo "$old_hb" >$HB
log "hb-silent: noticed $ms ms after the map began (heartbeat_timeout_sec 4)"
# the check runs once a second: a 4 s timeout is noticed after 3 to 5 s
[ "$ms" -ge 3000 ] || die "hb-silent: noticed after $ms ms, well before the 4 s timeout"
[ "$ms" -le $((12000 * S)) ] || die "hb-silent: noticed only after $ms ms with a 4 s timeout"
rw_check "$(dev_of hs-hb)"
stop

# -- accept data and chunk tables that lie: the map fails with EPROTO
for m in qd-zero qd-huge io-size-bad segs-zero caps-unknown reserved-nonzero \
	version-major key-mismatch table-short table-count table-magic \
	table-chunk-size table-wrap open-rsp-lie; do
	start $m
	expect_eq "$m: map" "$(map hs-$m)" EPROTO
	stop
done
# -- other handshake failures: the map fails, whatever the errno, in time
for m in table-rkey-bogus table-twice disconnect-handshake reject-garbage; do
	start $m
	r=$(timeout $((60 * S)) python3 "$REPO/tests/lib/sysfs-write.py" "$MAP_CTL" \
		"sessname=hs-$m path=ip:$RXE_ADDR dest_port=$PORT device_path=/hostile")
	case $r in
	OK|"") die "$m: map: '$r'" ;;
	esac
	log "$m: map failed with $r"
	stop
done
start table-never
expect_eq "table-never: map" "$(map hs-tn)" ETIMEDOUT
stop

# -- conn 0 rejected with a kernel-internal errno (or 4095): never passed
# on to the map writer, unlike an errno a server can mean
for e in 512 4095 13; do
	want=ECONNREFUSED
	[ $e -ge 512 ] || want=EACCES
	start reject-errno --errno $e
	expect_eq "reject-errno $e: map" "$(map hs-rj$e)" $want
	stop
done
for e in 512 4095; do
	klog | grep -q "connection 0 rejected by the server with status $e, not an errno a server can mean: ECONNREFUSED" ||
		die "reject-errno $e: no client line"
done

# -- OPEN answered with kernel-internal or reserved errnos: never passed on
for e in 512 513 4095 103; do
	start open-errno --errno $e
	expect_eq "open-errno $e: map" "$(map hs-oe$e)" EIO
	stop
done

# -- a re-OPEN after a reconnect refused with a transport-like errno: the
# device fails its IO (it is not held for ever)
start reopen-errno --errno 104
expect_eq "reopen-errno: map" "$(map hs-re)" OK
dev=$(dev_of hs-re)
wait_log "opening /hostile@hs-re again failed" 60
read_fails "$dev" 4096
stop

# -- a server that cannot prove it knows this host's key (TRS_CAP_AUTH):
# a client with a key maps nothing from it, and says why
CCTL=/sys/class/rnbd-client/ctl
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' | sed 's/^/rnbd:/' >/tmp/hs-key
cp /tmp/hs-key $CCTL/host_key || die "client host_key"
start auth-wrong-key
expect_eq "auth-wrong-key: map" "$(map hs-awk)" EKEYREJECTED
wait_log "hs-awk: the server's proof for host .* does not verify: refused" 10
stop
start auth-keyless
expect_eq "auth-keyless: map with a key" "$(map hs-akl)" EKEYREJECTED
wait_log "hs-akl: the server does not authenticate host .*, which has a key: refused" 10
stop
# one that does not even speak TRS_CAP_AUTH
start honest
expect_eq "honest: map with a key" "$(map hs-hk)" EKEYREJECTED
wait_log "hs-hk: the server does not authenticate, and host .* has a key: refused" 10
stop
# without a key, a server that has none for the host serves it
echo none >$CCTL/host_key
start auth-keyless
expect_eq "auth-keyless: map without a key" "$(map hs-ak0)" OK
# the tool prints a session's lies when the session ends
r=$(sysfs_write "/sys/block/$(dev_of hs-ak0)/rnbd/unmap_device" normal)
[ "$r" = OK ] || die "auth-keyless: unmap: $r"
i=0
until grep -q "HELLO of host .*: CHALLENGE without a proof" "$out/hostile-srv-auth-keyless.log"; do
	i=$((i + 1))
	[ $i -lt $((100 * S)) ] || die "auth-keyless: no HELLO: $(tail -3 "$out/hostile-srv-auth-keyless.log")"
	sleep 0.1
done
stop
