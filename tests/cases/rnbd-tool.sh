# SPDX-License-Identifier: GPL-2.0-only
# desc: the IONOS rnbd admin tool, built unmodified from
#       ../shared/tools/rnbd-tool, drives the client: map into a session
#       named as upstream names them (host@server, dots), a second device
#       onto that session (the tool sends the session's paths back),
#       device, session and path list and show in JSON checked field by
#       field (path byte counters included), resize down and back up and
#       past the server's size, remap of an open device and of a device a
#       re-open left closed, unmap of a device in use, unmap and unmap force;
#       the server side: /sys/class/rnbd-server/ctl/devices/ checked file
#       by file and through the tool's server device and session list and
#       show (JSON, field by field), its removal on rmmod, server device
#       close (force_close); access_mode=migration: rw beside a migration
#       writer, two migration writers, a third writer and rw beside a
#       migration writer refused (EBUSY); force_close racing an unmap
# boot: shared
# timeout: 500
S=${RNBD_TIMEOUT_SCALE:-1}
tool=$REPO/.build/rnbd-tool/rnbd
[ -x "$tool" ] || die "$tool not built (scripts/check builds it from ../shared/tools/rnbd-tool)"
kmsg "rnbd-tool: start"
mkdir -p /run/rnbd-tool
nb1=$(nullb_create nullb1 64)
nb2=$(nullb_create nullb2 32)
# device nodes inside the search path: one can be taken away and back
node() {	# node NAME /dev/X
	set -- "$1" $(stat -c '%t %T' "$2")
	rm -f "/run/rnbd-tool/$1"
	mknod "/run/rnbd-tool/$1" b $((0x$2)) $((0x$3))
}
node disk1 "$nb1"
node disk2 "$nb2"
SERVER_PARAMS="dev_search_path=/run/rnbd-tool/"
rnbd_setup

# run the tool, its output in /tmp/tool.out; fails the case if it fails
t() {
	log "rnbd $*"
	"$tool" "$@" >/tmp/tool.out 2>&1 || die "rnbd $*: $(cat /tmp/tool.out)"
}
# the tool, expected to fail
t_fails() {
	log "rnbd $* (must fail)"
	if "$tool" "$@" >/tmp/tool.out 2>&1; then
		die "rnbd $* succeeded: $(cat /tmp/tool.out)"
	fi
	log "  -> $(head -1 /tmp/tool.out)"
}
# checks of the tool's JSON: json EXPR EXPECTED, EXPR in Python over 'd'
# (the output parsed; see tests/lib/tool-json.py)
json() {
	got=$(python3 "$REPO/tests/lib/tool-json.py" "$1" </tmp/tool.out) ||
		die "bad JSON from the tool: $(cat /tmp/tool.out)"
	expect_eq "json $1" "$got" "$2"
}

sess="$(hostname)@srv.example"
t client map disk1 from "$sess" "ip:$RXE_ADDR"
dev1=$(basename "$(readlink -f "/sys/class/rnbd-client/ctl/devices/disk1@$sess")")
expect_eq "the device's session" "$(cat /sys/block/$dev1/rnbd/session)" "$sess"
# onto the existing session: the tool adds path=SRC@DST of the session
t client map disk2 from "$sess" ro
dev2=$(basename "$(readlink -f "/sys/class/rnbd-client/ctl/devices/disk2@$sess")")
expect_eq "one session" "$(ls /sys/class/rtrs-client/ | wc -l)" 1
# a path that is not the session's is refused
t_fails client map disk2 from "$sess" "ip:192.0.2.1"

t client device list json
json 'len(d["imports"])' 2
json 'sorted(x["mapping_path"] for x in d["imports"])' "['disk1', 'disk2']"
json 'sorted(set(x["sessname"] for x in d["imports"]))' "['$sess']"
json 'sorted((x["devname"], x["state"], x["access_mode"]) for x in d["imports"])' \
	"$(python3 -c "print(sorted([('$dev1', 'open', 'rw'), ('$dev2', 'open', 'ro')]))")"
t client device show "$dev1" json
json 'd[0]["devpath"]' "/dev/$dev1"
json 'd[0]["mapping_path"]' disk1

# traffic for the path counters: 1 MiB written, 2 MiB read
dd if=/dev/urandom of=/tmp/tool-data bs=64k count=16 2>/dev/null
dd if=/tmp/tool-data of=/dev/$dev1 bs=64k oflag=direct 2>/dev/null || die "write $dev1"
dd if=/dev/$dev1 of=/dev/null bs=64k count=32 iflag=direct 2>/dev/null || die "read $dev1"
t client session list json
json 'len(d["outgoing sessions"])' 1
json 'd["outgoing sessions"][0]["sessname"]' "$sess"
json 'd["outgoing sessions"][0]["state"]' connected
json 'd["outgoing sessions"][0]["path_uu"]' U
json 'd["outgoing sessions"][0]["tx_bytes"] >= 1048576' True
json 'd["outgoing sessions"][0]["rx_bytes"] >= 2097152' True
t client path list json
json 'len(d["outgoing paths"])' 1
p='d["outgoing paths"][0]'
json "$p[\"hca_name\"]" rxe0
json "$p[\"hca_port\"]" 1
json "$p[\"dst_addr\"]" "ip:$RXE_ADDR"
json "$p[\"state\"]" connected
json "$p[\"tx_bytes\"] >= 1048576" True
pdir=$(ls -d /sys/class/rtrs-client/*/paths/*)
read -r nr rb nw wb inf fo <"$pdir/stats/rdma"
log "stats/rdma: $nr reads, $rb bytes; $nw writes, $wb bytes; $inf in flight; $fo moved"
[ "$wb" -ge 1048576 ] && [ "$rb" -ge 2097152 ] && [ "$nw" -ge 16 ] && [ "$nr" -ge 32 ] ||
	die "stats/rdma: $(cat "$pdir/stats/rdma")"
echo 1 >"$pdir/stats/reset_all" || die "reset_all"
expect_eq "stats/rdma after reset" "$(cat "$pdir/stats/rdma")" "0 0 0 0 0 0"
expect_eq "stats/reconnects" "$(cat "$pdir/stats/reconnects")" "0 0"

# ---- the server side (the same guest): /sys/class/rnbd-server/ ----------
# The server names a session as the transport does; its log line of the
# OPEN of disk1 says which.  The devices' directories are named as the
# block devices (nullb1), whatever path the client asked for.
SRV=/sys/class/rnbd-server/ctl/devices
b1=$(basename "$nb1")
b2=$(basename "$nb2")
ssess=$(klog | sed -n 's/.*rnbd_server: session \(.*\): opened disk1 rw as device .*/\1/p' | tail -1)
[ -n "$ssess" ] || die "no server log line for the OPEN of disk1"
log "server session: $ssess"
expect_eq "server devices" "$(ls "$SRV" | sort | xargs)" "$(printf '%s\n' "$b1" "$b2" | sort | xargs)"
for b in "$b1" "$b2"; do
	expect_eq "$b/block_dev" "$(basename "$(readlink -f "$SRV/$b/block_dev")")" "$b"
	expect_eq "$b/sessions" "$(ls "$SRV/$b/sessions")" "$ssess"
done
sd=$SRV/$b1/sessions/$ssess
expect_eq "$b1 read_only" "$(cat "$sd/read_only")" 0
expect_eq "$b1 access_mode" "$(cat "$sd/access_mode")" rw
expect_eq "$b1 mapping_path" "$(cat "$sd/mapping_path")" disk1
sd=$SRV/$b2/sessions/$ssess
expect_eq "$b2 read_only" "$(cat "$sd/read_only")" 1
expect_eq "$b2 access_mode" "$(cat "$sd/access_mode")" ro
expect_eq "$b2 mapping_path" "$(cat "$sd/mapping_path")" disk2
expect_eq "force_close usage" "$(cat "$sd/force_close")" "Usage: echo 1 > force_close"
expect_eq "force_close 0" "$(sysfs_write "$sd/force_close" 0)" EINVAL
expect_eq "force_close 2" "$(sysfs_write "$sd/force_close" '2\n')" EINVAL
[ -d "$sd" ] || die "$sd gone after a refused force_close"

# the tool's view of it
t server device list json
json 'd["imports"]' None
json 'len(d["exports"])' 2
json 'sorted((x["sessname"], x["mapping_path"], x["devname"], x["access_mode"]) for x in d["exports"])' \
	"$(python3 -c "print(sorted([('$ssess', 'disk1', '$b1', 'rw'), ('$ssess', 'disk2', '$b2', 'ro')]))")"
t server device show "$b1" json
json 'len(d)' 1
json 'd[0]["sessname"]' "$ssess"
json 'd[0]["mapping_path"]' disk1
json 'd[0]["access_mode"]' rw
json 'd[0]["devname"]' "$b1"
json 'd[0]["devpath"]' "/dev/$b1"
json 'd[0]["direction"]' export
# the block device's own counters, in sectors: 1 MiB written, 2 MiB read
json 'd[0]["tx_sect"] >= 2048' True
json 'd[0]["rx_sect"] >= 4096' True
t server device show disk2 json
json '[(x["devname"], x["access_mode"]) for x in d]' "[('$b2', 'ro')]"
# The tool lists as many server sessions as /sys/class/rtrs-server/ has
# (the transport's: without it none), and takes their paths and byte
# counters from there; it shows a session named by rnbd-server all the same.
t server session show "$ssess" json
json 'len(d)' 1
json 'd[0]["sessname"]' "$ssess"
json 'd[0]["direction"]' incoming
t server session list json
json 'd["outgoing sessions"]' None
if [ -d "/sys/class/rtrs-server/$ssess" ]; then
	json 'len(d["incoming sessions"])' 1
	json 'd["incoming sessions"][0]["sessname"]' "$ssess"
	json 'd["incoming sessions"][0]["path_cnt"]' 1
	json 'd["incoming sessions"][0]["tx_bytes"] + d["incoming sessions"][0]["rx_bytes"] >= 3145728' True
else
	json 'd["incoming sessions"]' None
	log "no /sys/class/rtrs-server/$ssess: server session list and paths not checked"
fi

# resize: the disk shows less, then the server's size again, never more
t client device resize "$dev1" 16M
expect_eq "size after resize down" "$(cat /sys/block/$dev1/size)" 32768
t client device resize "$dev1" 64M
expect_eq "size after resize back" "$(cat /sys/block/$dev1/size)" 131072
t_fails client device resize "$dev1" 128M
expect_eq "size after a resize past the server's" "$(cat /sys/block/$dev1/size)" 131072
klog | grep -q "resize: 262144 sectors: want 1..131072" || die "no log line for the refused resize"

# remap: nothing to do for an open device; a device a re-open left closed
# opens again once the server has it back
t client device remap "$dev2" verbose
grep -q "does not need to be remapped" /tmp/tool.out || die "remap of an open device: $(cat /tmp/tool.out)"
kmsg "rnbd-tool: server restart without disk2"
rmmod rnbd_server || die "rmmod rnbd_server"
[ -e /sys/class/rnbd-server ] && die "/sys/class/rnbd-server left after rmmod"
rm /run/rnbd-tool/disk2
ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
i=0
until [ "$(cat /sys/block/$dev2/rnbd/state)" = closed ]; do
	i=$((i + 1))
	[ $i -lt $((600 * S)) ] || die "$dev2 state $(cat /sys/block/$dev2/rnbd/state), not closed"
	sleep 0.1
done
expect_eq "$dev1 after the reconnect" "$(cat /sys/block/$dev1/rnbd/state)" open
dd if=/dev/$dev2 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &&
	die "read of the closed $dev2 succeeded"
t_fails client device remap "$dev2"
node disk2 "$nb2"
t client device remap "$dev2" verbose
grep -q "remapped" /tmp/tool.out || die "remap of a closed device: $(cat /tmp/tool.out)"
expect_eq "$dev2 after remap" "$(cat /sys/block/$dev2/rnbd/state)" open
dd if=/dev/$dev2 of=/dev/null bs=4k count=8 iflag=direct 2>/dev/null || die "read of $dev2 after remap"
expect_eq "data of $dev1 after the server restart" \
	"$(dd if=/dev/$dev1 bs=64k count=16 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/tool-data)"

# server device close (force_close): the server closes disk2 for the
# session, whose other device and the session itself stay; the client's IO
# to disk2 fails.  The session has the transport's name of the reconnect.
expect_eq "server devices after the restart" "$(ls "$SRV" | sort | xargs)" "$(printf '%s\n' "$b1" "$b2" | sort | xargs)"
ssess=$(ls "$SRV/$b2/sessions")
t server device close "$b2" "$ssess" verbose
[ -e "$SRV/$b2" ] && die "$SRV/$b2 still there after server device close"
expect_eq "sessions of $b1 after the close of $b2" "$(ls "$SRV/$b1/sessions")" "$ssess"
klog | grep -q "session $ssess: device [0-9]* ($b2, disk2) closed by force_close" ||
	die "no log line for the force_close"
dd if=/dev/$dev2 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &&
	die "read of $dev2 succeeded after the server closed it"
dd if=/dev/$dev1 of=/dev/null bs=4k count=8 iflag=direct 2>/dev/null ||
	die "read of $dev1 after the server closed $dev2"
t server device list json
json '[(x["sessname"], x["devname"]) for x in d["exports"]]' "[('$ssess', '$b1')]"
t_fails server device close "$b2" "$ssess"

# unmap: refused while in use, then normal, then force while in use
exec 7</dev/$dev1
t_fails client device unmap "$dev1"
exec 7<&-
t client device unmap "$dev1"
[ -e /sys/block/$dev1 ] && die "$dev1 still there after unmap"
exec 7</dev/$dev2
t client device unmap "$dev2" force
exec 7<&-
[ -e /sys/block/$dev2 ] && die "$dev2 still there after unmap force"
i=0
until [ -z "$(ls /sys/class/rtrs-client/)" ]; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "session left"; sleep 0.1
done
t client device list json
json 'd["imports"]' None
[ -z "$(ls "$SRV")" ] || die "server devices left: $(ls "$SRV")"

# ---- access_mode=migration: at most two writers, one rw at most ---------
# Each map is a session of its own (no more than two hold a server device
# at once: the tool sizes its server session array by
# /sys/class/rtrs-server/, which may not be there yet).
mdev() {	# mdev SESSNAME: the rnbd device of disk1 on that session
	basename "$(readlink -f "/sys/class/rnbd-client/ctl/devices/disk1@$1")"
}
t client map disk1 from mig1 "ip:$RXE_ADDR" rw
m1=$(mdev mig1)
t client map disk1 from mig2 "ip:$RXE_ADDR" migration
m2=$(mdev mig2)
expect_eq "$m2 access_mode" "$(cat /sys/block/$m2/rnbd/access_mode)" migration
expect_eq "$m2 ro" "$(cat /sys/block/$m2/ro)" 0
t client device show "$m2" json
json 'd[0]["access_mode"]' migration
expect_eq "writers of $b1" "$(ls "$SRV/$b1/sessions" | wc -l)" 2
for sd in "$SRV/$b1"/sessions/*; do
	expect_eq "$sd read_only" "$(cat "$sd/read_only")" 0
done
expect_eq "access modes on the server" "$(cat "$SRV/$b1"/sessions/*/access_mode | sort | xargs)" "migration rw"
# both write the one device
dd if=/dev/urandom of=/tmp/mig-data bs=64k count=4 2>/dev/null
dd if=/tmp/mig-data of=/dev/$m2 bs=64k oflag=direct 2>/dev/null || die "write $m2"
expect_eq "$m1 reads what $m2 wrote" \
	"$(dd if=/dev/$m1 bs=64k count=4 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/mig-data)"
dd if=/dev/zero of=/dev/$m1 bs=64k count=1 oflag=direct 2>/dev/null || die "write $m1"
# a third writer, in either mode, is refused
kmsg "rnbd-tool: third writer"
t_fails client map disk1 from mig3 "ip:$RXE_ADDR" migration
grep -q "Device or resource busy" /tmp/tool.out || die "third migration writer: $(cat /tmp/tool.out)"
t_fails client map disk1 from mig3 "ip:$RXE_ADDR" rw
grep -q "Device or resource busy" /tmp/tool.out || die "third rw writer: $(cat /tmp/tool.out)"
klog | sed -n '/rnbd-test: rnbd-tool: third writer/,$p' |
	grep -q "disk1 ([0-9:]*): migration open refused: 2 session(s) open it for writing" ||
	die "no log line for the refused migration open"
t client device unmap "$m1"
# rw is refused beside a migration writer; a second migration writer is not
kmsg "rnbd-tool: rw beside migration"
t_fails client map disk1 from mig1 "ip:$RXE_ADDR" rw
klog | sed -n '/rnbd-test: rnbd-tool: rw beside migration/,$p' |
	grep -q "disk1 ([0-9:]*): rw open refused: 1 session(s) open it for writing" ||
	die "no log line for the refused rw open"
t client map disk1 from mig1 "ip:$RXE_ADDR" MIGRATION
m1=$(mdev mig1)
expect_eq "access modes on the server" "$(cat "$SRV/$b1"/sessions/*/access_mode | xargs)" "migration migration"
t client device list json
json 'sorted((x["sessname"], x["access_mode"]) for x in d["imports"])' "[('mig1', 'migration'), ('mig2', 'migration')]"
t client device unmap "$m1"
t client device unmap "$m2"

# force_close racing the client's CLOSE and the session's end (the last
# device's unmap closes the session), started first or second: whichever
# wins, no splat, nothing left
for i in 0 1 2 3 4 5 6 7; do
	r=$(map_dev race$i disk1) || die "map race$i"
	fc=$(echo "$SRV/$b1"/sessions/*/force_close)
	[ -f "$fc" ] || die "no force_close for race$i"
	if [ $((i % 2)) = 0 ]; then
		(echo 1 >"$fc") 2>/dev/null &
		unmap_dev "$r" force || die "unmap $r"
		wait
	else
		unmap_dev "$r" force &
		sleep "0.0$i"
		(echo 1 >"$fc") 2>/dev/null || true
		wait $! || die "unmap $r"
	fi
done
i=0
until [ -z "$(ls /sys/class/rtrs-client/)" ] && [ -z "$(ls "$SRV")" ]; do
	i=$((i + 1)); [ $i -lt $((100 * S)) ] || die "sessions or server devices left"; sleep 0.1
done
rm -r /run/rnbd-tool
true
