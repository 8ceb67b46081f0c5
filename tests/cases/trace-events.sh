# SPDX-License-Identifier: GPL-2.0-only
# desc: the rnbd_clt and rnbd_srv tracepoints: a map that fails and one that
#       works (rnbd_clt_map, rnbd_srv_dev_open with the errno or the
#       device id), one direct 4k write and one read, each a client
#       submit/complete pair with the same disk, tag and op and a server
#       submit/complete pair on the same slot (the client's tag) and device
#       id; a path reconnect gives rnbd_clt_sess_state connected ->
#       reconnecting -> connected; unmap gives rnbd_clt_unmap and
#       rnbd_srv_dev_close
# boot: shared
# timeout: 200
S=${RNBD_TIMEOUT_SCALE:-1}
tr=/sys/kernel/tracing
rnbd_setup
nb=$(nullb_create nullb1 16)

trace_off() {
	echo 0 >"$tr/events/rnbd_clt/enable" 2>/dev/null || true
	echo 0 >"$tr/events/rnbd_srv/enable" 2>/dev/null || true
	echo >"$tr/trace"
}
trap trace_off EXIT

for s in rnbd_clt rnbd_srv; do
	[ -d "$tr/events/$s" ] || die "no $tr/events/$s"
done
for e in rnbd_clt/rnbd_clt_map rnbd_clt/rnbd_clt_unmap \
	rnbd_clt/rnbd_clt_sess_state rnbd_clt/rnbd_clt_rq_submit \
	rnbd_clt/rnbd_clt_rq_complete rnbd_srv/rnbd_srv_dev_open \
	rnbd_srv/rnbd_srv_dev_close rnbd_srv/rnbd_srv_io_submit \
	rnbd_srv/rnbd_srv_io_complete; do
	[ -e "$tr/events/$e/format" ] || die "no event $e"
done
echo >"$tr/trace"
echo 1 >"$tr/events/rnbd_clt/enable"
echo 1 >"$tr/events/rnbd_srv/enable"

# events ATTR=VALUE...: the trace lines that have every field given
events() {
	awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		{ for (i = 1; i <= n; i++) if (index(" " $0 " ", " " w[i] " ") == 0) next; print }
	' "$tr/trace"
}
# field NAME LINE: the value of NAME= in LINE
field() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1
}
# one EVENT FIELDS...: exactly one such line; prints it
one() {
	l=$(events "$@")
	[ "$(echo "$l" | grep -c .)" = 1 ] || {
		cat "$tr/trace"
		die "want one line with: $*; got: '$l'"
	}
	echo "$l"
}

r=$(sysfs_write "$MAP_CTL" "sessname=trace path=ip:$RXE_ADDR device_path=/dev/no-such-disk")
expect_eq "map of a missing device" "$r" ENOENT
one rnbd_clt_map: disk= sess=trace path=/dev/no-such-disk access_mode=rw sectors=0 err=-2 >/dev/null
one rnbd_srv_dev_open: sess=trace path=/dev/no-such-disk access_mode=rw dev_id=0 err=-2 >/dev/null

dev=$(map_dev trace "$nb")
one rnbd_clt_map: disk=$dev sess=trace path=$nb access_mode=rw sectors=32768 err=0 >/dev/null
open=$(one rnbd_srv_dev_open: sess=trace path=$nb access_mode=rw err=0)
id=$(field dev_id "$open")
log "server device id $id"

# check_io OP: one client pair and one server pair for the last IO
check_io() {
	sub=$(one rnbd_clt_rq_submit: disk=$dev op=$1 bytes=4096)
	tag=$(field tag "$sub")
	one rnbd_clt_rq_complete: disk=$dev tag=$tag op=$1 status=0 >/dev/null
	[ "$(events rnbd_clt_rq_submit: disk=$dev | grep -c .)" = \
		"$(events rnbd_clt_rq_complete: disk=$dev | grep -c .)" ] ||
		die "client submits and completes differ in number"
	one rnbd_srv_io_submit: sess=trace dev_id=$id slot=$tag op=$1 len=4096 >/dev/null
	one rnbd_srv_io_complete: sess=trace dev_id=$id slot=$tag err=0 >/dev/null
	log "$1: tag $tag"
}

head -c 4096 /dev/urandom >/tmp/trace-blk
echo >"$tr/trace"
dd if=/tmp/trace-blk of="/dev/$dev" bs=4k count=1 oflag=direct 2>/dev/null
check_io WRITE
echo >"$tr/trace"
expect_eq "read back" \
	"$(dd if="/dev/$dev" bs=4k count=1 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/trace-blk)"
check_io READ

# a path reconnect: the session's state goes and comes back
echo >"$tr/trace"
echo 1 >/sys/class/rtrs-client/trace/paths/*/reconnect
wait_path_state trace connected 30
i=0
until events rnbd_clt_sess_state: sess=trace old=reconnecting new=connected | grep -q .; do
	i=$((i + 1))
	[ $i -lt $((100 * S)) ] || { cat "$tr/trace"; die "no reconnecting -> connected"; }
	sleep 0.1
done
events rnbd_clt_sess_state: sess=trace old=connected new=reconnecting | grep -q . ||
	{ cat "$tr/trace"; die "no connected -> reconnecting"; }
expect_eq "read after the reconnect" \
	"$(dd if="/dev/$dev" bs=4k count=1 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/trace-blk)"

echo >"$tr/trace"
unmap_dev "$dev"
one rnbd_clt_unmap: disk=$dev sess=trace path=$nb access_mode=rw sectors=32768 force=0 >/dev/null
# (the server may close the device of its session of before the
# reconnect only now)
events rnbd_srv_dev_close: sess=trace path=$nb busy=0 | grep -q . ||
	{ cat "$tr/trace"; die "no rnbd_srv_dev_close"; }
trace_off
