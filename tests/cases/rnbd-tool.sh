# SPDX-License-Identifier: GPL-2.0-only
# desc: the IONOS rnbd admin tool, built unmodified from
#       ../shared/tools/rnbd-tool, drives the client: map into a session
#       named as upstream names them (host@server, dots), a second device
#       onto that session (the tool sends the session's paths back),
#       device, session and path list and show in JSON checked field by
#       field (path byte counters included), resize down and back up and
#       past the server's size, remap of an open device and of a device a
#       re-open left closed, unmap of a device in use, unmap and unmap force
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
tool=$REPO/.build/rnbd-tool/rnbd
[ -x "$tool" ] || die "$tool not built (scripts/check builds it from ../shared/tools/rnbd-tool)"
kmsg "rnbd-tool: start"
klog() {
	dmesg | sed -n '/rnbd-test: rnbd-tool: start/,$p'
}
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
rm -r /run/rnbd-tool
true
