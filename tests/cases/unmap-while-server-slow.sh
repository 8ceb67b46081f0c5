# SPDX-License-Identifier: GPL-2.0-only
# desc: a device unmapped while the server holds back its answer to the
#       client's re-OPEN after a reconnect (tests/hostile/rnbd-hostile-srv
#       reopen-slow) or to its INFO after a size notice (info-slow): the
#       answer, when it comes, touches no disk that is gone; the other
#       device of the session is opened again or asked about and its data
#       reads back; unmapping the last device of a session while its
#       re-OPEN waits closes the session after the answer
# boot: shared
# timeout: 600
rnbd_setup
S=${RNBD_TIMEOUT_SCALE:-1}
tool=$REPO/tests/hostile/rnbd-hostile-srv
[ -x "$tool" ] || die "$tool not built (make -C tests/hostile)"
PORT=1240
# how long the tool holds an answer back: time enough to unmap (seconds
# under TCG), and below the client's 30 s wait for an answer, unscaled
DELAY=$((8000 * S))
[ $DELAY -le 20000 ] || DELAY=20000
out=${CASE_RESULTS:-/job/results}
pid=
srvlog=

# start MODE: the hostile server, holding answers back DELAY ms
start() {
	mode=$1
	srvlog=$out/hostile-srv-$mode.log
	"$tool" --mode "$mode" --port $PORT --delay-ms $DELAY >"$srvlog" 2>&1 &
	pid=$!
	i=0
	until rdma resource show cm_id 2>/dev/null | grep "comm rnbd-hostile-sr" | grep -q LISTEN; do
		i=$((i + 1))
		[ $i -lt $((300 * S)) ] || die "$mode: the hostile server never listened"
		kill -0 $pid 2>/dev/null || die "$mode: the hostile server died: $(tail -3 "$srvlog")"
		sleep 0.1
	done
	kmsg "unmap-while-server-slow: $mode"
}

# stop: the client's sessions are gone; stop the server
stop() {
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

# srv_wait REGEX N SEC: the tool's log has N lines matching REGEX
srv_wait() {
	i=0
	until [ "$(grep -c "$1" "$srvlog")" -ge "$2" ]; do
		i=$((i + 1))
		[ $i -lt $(($3 * 10 * S)) ] || die "$mode: no line '$1' (x$2) from the tool in $3 s: $(tail -3 "$srvlog")"
		kill -0 $pid 2>/dev/null || die "$mode: the hostile server died: $(tail -3 "$srvlog")"
		sleep 0.1
	done
}

# no_oops WHAT: fail at once if the kernel reported a problem
no_oops() {
	if klog | grep -Eq 'BUG:|Oops|general protection|WARNING:'; then
		die "$mode: kernel problem $1: $(klog | grep -E -m1 'BUG:|Oops|general protection|WARNING:')"
	fi
}

# rw_check DEV: 1 MiB of random data written and read back
rw_check() {
	head -c 1048576 /dev/urandom >/tmp/us-data
	timeout $((90 * S)) dd if=/tmp/us-data of="/dev/$1" bs=1M oflag=direct 2>/tmp/us.err ||
		die "$mode: write to $1: $(cat /tmp/us.err)"
	got=$(timeout $((90 * S)) dd if="/dev/$1" bs=64k count=16 iflag=direct 2>/dev/null | sha256sum)
	expect_eq "$mode: data read back from $1" "$got" "$(sha256sum </tmp/us-data)"
}

# unmap_now DEV: a normal unmap that works (it does not wait for the server)
unmap_now() {
	t0=$(date +%s)
	r=$(sysfs_write "/sys/block/$1/rnbd/unmap_device" normal)
	expect_eq "$mode: unmap of $1" "$r" OK
	log "$mode: $1 unmapped in $(($(date +%s) - t0)) s"
}

# -- (1) a re-OPEN held back: its device is unmapped meanwhile
start reopen-slow
a=$(map_dev us-re /a dest_port=$PORT) || die "map /a"
b=$(map_dev us-re /b dest_port=$PORT) || die "map /b"
rw_check "$b"
kill -USR1 $pid		# the tool drops the session; the client reconnects
srv_wait "OPEN on slot .*: answer held back" 1 $((60 + DELAY / 1000))
unmap_now "$a"
srv_wait "OPEN on slot .* answered after" 1 $((30 + DELAY / 1000))
sleep 1
no_oops "after the re-OPEN of the unmapped $a was answered"
# the other device is opened next, its answer held back too
i=0
until klog | grep -q "$b: /b@us-re open again"; do
	i=$((i + 1))
	[ $i -lt $(((60 + DELAY / 1000) * 10 * S)) ] || die "$mode: $b was not opened again"
	sleep 0.1
done
klog | grep -q "$a: /a@us-re open again" && die "$mode: the unmapped $a was opened again"
srv_wait "CLOSE dev_id 1" 1 10	# the open the unmap made useless
rw_check "$b"
unmap_now "$b"
stop
no_oops "in reopen-slow"

# -- (2) an INFO held back: its device is unmapped meanwhile
start info-slow
a=$(map_dev us-info /a dest_port=$PORT) || die "map /a"
b=$(map_dev us-info /b dest_port=$PORT) || die "map /b"
kill -USR1 $pid		# the next heartbeat carries a notice
srv_wait "heartbeat with TRS_HB_NOTICE sent" 1 $((10 + DELAY / 1000))
srv_wait "INFO on slot .*: answer held back" 1 30
unmap_now "$a"
srv_wait "INFO on slot .* answered after" 1 $((30 + DELAY / 1000))
sleep 1
no_oops "after the INFO of the unmapped $a was answered"
# then the other device is asked about
srv_wait "INFO on slot .* answered after" 2 $((30 + 2 * DELAY / 1000))
sleep 1
no_oops "after the INFO of $b was answered"
klog | grep -q "asking the server about its size failed" &&
	die "$mode: $(klog | grep -m1 'asking the server about its size failed')"
rw_check "$b"
unmap_now "$b"
stop
no_oops "in info-slow"

# -- (3) the last device of a session unmapped while its re-OPEN waits:
# the session closes once the answer came, and sends the CLOSE first
start reopen-slow
a=$(map_dev us-last /a dest_port=$PORT) || die "map /a"
kill -USR1 $pid
srv_wait "OPEN on slot .*: answer held back" 1 $((60 + DELAY / 1000))
unmap_now "$a"
srv_wait "CLOSE dev_id 1" 1 10
stop
no_oops "closing a session whose re-OPEN was held back"
kmsg "unmap-while-server-slow: done"
