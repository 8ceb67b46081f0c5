# SPDX-License-Identifier: GPL-2.0-only
# desc: the rnbd_clt and rnbd_srv tracepoints: a map that fails and one
#       that works (rnbd_clt_map, rnbd_srv_dev_open with the errno or the
#       device id), a direct 4k write and read, each a client
#       submit/complete pair with the same disk, tag and op and a server
#       pair on the same session, device id and slot (the client's tag); a
#       path disconnect and reconnect gives rnbd_clt_sess_state connected
#       -> reconnecting -> connected; unmap gives rnbd_clt_unmap and
#       rnbd_srv_dev_close.  (One case with the udev one: a boot of the
#       stack each costs about 40 s.)
#       tools/udev/60-rnbd.rules under systemd-udevd: rnbd/session and
#       mapping_path are read at the disk's "add" event;
#       /dev/rnbd/<session>/<path> leads to the disk; mkfs.ext4 -L gives
#       by-uuid and by-label links (through the inotify watch, no trigger);
#       a GPT partition gives <path>-part1 and by-partuuid; a disk whose
#       path ends in "-part1" does not take another disk's partition link;
#       a path of odd parts (leading "//", ".", "..x", backslash, "$", "*",
#       a Latin-1 byte) is escaped below /dev/rnbd/<session>/; a second
#       device under an existing name does not take the link; no link to
#       an rnbd device outside /dev/rnbd, /dev/disk and /dev/block; unmap
#       removes every link.  rnbd-namer itself on hostile attribute values
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
root=/run/rnbd-udev
rules=/run/udev/rules.d
namer=/lib/udev/rnbd-namer

tr=/sys/kernel/tracing

udev_stop() {
	udevadm control --exit 2>/dev/null || true
	rm -f "$rules/60-rnbd.rules" "$rules/59-rnbd-test.rules" "$namer"
}
trace_off() {
	echo 0 >"$tr/events/rnbd_clt/enable" 2>/dev/null || true
	echo 0 >"$tr/events/rnbd_srv/enable" 2>/dev/null || true
	echo >"$tr/trace"
}
trap 'udev_stop; trace_off' EXIT

# retry SECONDS WHAT CMD...: run CMD every 0.1 s until it succeeds; dies
# saying WHAT did not happen after SECONDS (scaled)
retry() {
	n=$(($1 * 10 * S))
	what=$2
	shift 2
	until "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || die "$what"
		sleep 0.1
	done
}
resolves() {
	[ "$(readlink -f "$1" 2>/dev/null)" = "$2" ]
}
# wait_link LINK DEVICE: LINK appears and resolves to DEVICE (10 s)
wait_link() {
	retry 10 "$1 does not lead to $2" resolves "$1" "$2"
}

# ---- rnbd-namer alone, on values the kernel would refuse -----------------
fake=/run/rnbd-udev-fake/block/rnbd9
mkdir -p "$fake/rnbd"
echo 252:576 >"$fake/dev"
namer_case() {	# SESSION PATH EXPECTED_LINK
	printf '%s\n' "$1" >"$fake/rnbd/session"
	printf '%s\n' "$2" >"$fake/rnbd/mapping_path"
	out=$(tools/udev/rnbd-namer rnbd9 /run/rnbd-udev-fake)
	link=$(echo "$out" | sed -n 's/^RNBD_LINK=//p')
	expect_eq "namer link of '$1' '$2'" "$link" "$3"
	case "/$link/" in
	*/../* | */./* | *//*) die "namer gave '$link'" ;;
	esac
}
namer_case .. ../../../etc/passwd 'rnbd/\x2e\x2e/\x2e\x2e/\x2e\x2e/\x2e\x2e/etc/passwd'
namer_case 'a b\x2e' "/dev//x$(printf '\t')y/./vd-part2" \
	'rnbd/a\x20b\x5cx2e/dev/\x2fx\x09y/\x2e/vd\x2dpart2'
tools/udev/rnbd-namer ../rnbd9 /run/rnbd-udev-fake >/dev/null 2>&1 &&
	die "namer accepted a kernel name that is not rnbdN"
rm -rf /run/rnbd-udev-fake

# ---- devices in the server's search path ---------------------------------
# node PATH /dev/X: a device node for X at PATH below the search path
node() {
	set -- "$1" $(stat -c '%t %T' "$2")
	mkdir -p "$(dirname "$root/$1")"
	rm -f "$root/$1"
	mknod "$root/$1" b $((0x$2)) $((0x$3))
}
odd_dir="b\\a\$d*/..x/caf$(printf '\351')"
mkdir -p "$root"
node disk "$(nullb_create nullb1 16)"
node part "$(nullb_create nullb2 16)"
node part-part1 "$(nullb_create nullb3 16)"
node "$odd_dir/nb-part1" "$(nullb_create nullb4 16)"
nb5=$(nullb_create nullb5 16)
node tdisk "$(nullb_create nullb6 16)"
SERVER_PARAMS="dev_search_path=$root/"
rnbd_setup

# ---- tracepoints, before udevd (whose probes would add requests) ----------
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

# events FIELD=VALUE...: the trace lines that have every field given
events() {
	awk -v want="$*" '
		BEGIN { n = split(want, w, " ") }
		{ for (i = 1; i <= n; i++) if (index(" " $0 " ", " " w[i] " ") == 0) next; print }
	' "$tr/trace"
}
# field NAME LINE: the value of NAME= in LINE
field() {
	v=${2#* "$1"=}
	echo "${v%% *}"
}
# one EVENT FIELDS...: exactly one such line; prints it
one() {
	l=$(events "$@")
	case $l in
	"" | *"
"*)
		cat "$tr/trace" >&2
		die "want one line with: $*; got: '$l'"
		;;
	esac
	echo "$l"
}
# some EVENT FIELDS...: at least one such line
some() {
	events "$@" | grep -q .
}

tdev=$(map_dev udev1 /tdisk)
one rnbd_clt_map: disk="$tdev" sess=udev1 path=/tdisk access_mode=rw sectors=32768 err=0 >/dev/null
open=$(one rnbd_srv_dev_open: path=/tdisk access_mode=rw err=0)
id=$(field dev_id "$open")
ssess=$(field sess "$open")
# the server names its sessions <client address>-<uuid>
case $ssess in
ip:"$RXE_ADDR"-*) ;;
*) die "server session name in '$open'" ;;
esac
r=$(sysfs_write "$MAP_CTL" "sessname=udev1 device_path=/no-such-disk")
expect_eq "map of a missing device" "$r" ENOENT
one rnbd_clt_map: disk= sess=udev1 path=/no-such-disk access_mode=rw sectors=0 err=-2 >/dev/null
one rnbd_srv_dev_open: sess="$ssess" path=/no-such-disk access_mode=rw dev_id=0 err=-2 >/dev/null

# check_io OP: one client pair and one server pair for the last IO
check_io() {
	sub=$(one rnbd_clt_rq_submit: disk="$tdev" op="$1" bytes=4096)
	tag=$(field tag "$sub")
	one rnbd_clt_rq_complete: disk="$tdev" tag="$tag" op="$1" status=0 >/dev/null
	expect_eq "client submits and completes" \
		"$(events rnbd_clt_rq_submit: disk="$tdev" | grep -c .)" \
		"$(events rnbd_clt_rq_complete: disk="$tdev" | grep -c .)"
	one rnbd_srv_io_submit: sess="$ssess" dev_id="$id" slot="$tag" op="$1" len=4096 >/dev/null
	one rnbd_srv_io_complete: sess="$ssess" dev_id="$id" slot="$tag" err=0 >/dev/null
	log "$1: tag $tag"
}
head -c 4096 /dev/urandom >/tmp/trace-blk
echo >"$tr/trace"
dd if=/tmp/trace-blk of="/dev/$tdev" bs=4k count=1 oflag=direct 2>/dev/null
check_io WRITE
echo >"$tr/trace"
expect_eq "read back" \
	"$(dd if="/dev/$tdev" bs=4k count=1 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/trace-blk)"
check_io READ

# ---- udevd with our rules -------------------------------------------------
mkdir -p "$rules"
cp tools/udev/60-rnbd.rules "$rules/"
install -m 0755 tools/udev/rnbd-namer "$namer"
# records the attributes as the "add" event saw them
cat >"$rules/59-rnbd-test.rules" <<'EOF'
ACTION=="add", KERNEL=="rnbd[0-9]*", ENV{DEVTYPE}=="disk", ENV{RNBD_TEST_AT_ADD}="$attr{rnbd/session}|$attr{rnbd/mapping_path}"
EOF
/lib/systemd/systemd-udevd --daemon
udevadm settle -t $((30 * S))

# ---- a disk, its file system ---------------------------------------------
disk=$(map_dev udev1 /disk)
udevadm settle -t $((30 * S))
wait_link /dev/rnbd/udev1/disk "/dev/$disk"
expect_eq "attributes at add" \
	"$(udevadm info -q property -n "/dev/$disk" | sed -n 's/^RNBD_TEST_AT_ADD=//p')" \
	"udev1|/disk"
uuid=3f1d6e0a-5a7b-4c1e-9d2f-0b6c8e4a1d57
mkfs.ext4 -q -F -L rnbd-udev-lbl -U $uuid "/dev/$disk"
# no trigger: the watch sees mkfs close the device
wait_link /dev/disk/by-uuid/$uuid "/dev/$disk"
wait_link /dev/disk/by-label/rnbd-udev-lbl "/dev/$disk"

# ---- a partitioned disk, and a disk named like its partition --------------
part=$(map_dev udev1 /part)
udevadm settle -t $((30 * S))
wait_link /dev/rnbd/udev1/part "/dev/$part"
puuid=6a0f3c2e-1b4d-4e8a-9c7f-2d5b8e1a4c90
printf 'label: gpt\nstart=2048, size=16384, uuid=%s\n' $puuid |
	sfdisk -q "/dev/$part" >/dev/null
udevadm settle -t $((30 * S))
[ -b "/dev/${part}p1" ] || die "no /dev/${part}p1 after sfdisk"
wait_link /dev/rnbd/udev1/part-part1 "/dev/${part}p1"
wait_link /dev/disk/by-partuuid/$puuid "/dev/${part}p1"
mkfs.ext4 -q -F -L rnbd-udev-p1 "/dev/${part}p1"
wait_link /dev/disk/by-label/rnbd-udev-p1 "/dev/${part}p1"
pfs=$(blkid -s UUID -o value "/dev/${part}p1")
wait_link "/dev/disk/by-uuid/$pfs" "/dev/${part}p1"
pp=$(map_dev udev1 /part-part1)
udevadm settle -t $((30 * S))
wait_link '/dev/rnbd/udev1/part\x2dpart1' "/dev/$pp"
expect_eq "partition link kept" "$(readlink -f /dev/rnbd/udev1/part-part1)" \
	"/dev/${part}p1"

# ---- odd parts in the mapping path ----------------------------------------
odd=$(map_dev udev2 "//$odd_dir/./nb-part1")
udevadm settle -t $((30 * S))
wait_link '/dev/rnbd/udev2/b\x5ca\x24d\x2a/..x/caf\xe9/\x2e/nb\x2dpart1' "/dev/$odd"

# ---- the same name for a second device -------------------------------------
# /disk is open; "disk" names the same path: the server takes it only if
# it is another device now
node disk "$nb5"
dup=$(map_dev udev1 disk)
udevadm settle -t $((30 * S))
expect_eq "first device keeps its link" \
	"$(readlink -f /dev/rnbd/udev1/disk)" "/dev/$disk"
udevadm info -q property -n "/dev/$dup" | grep -q '^RNBD_LINK=' &&
	die "$dup got RNBD_LINK of a name in use"

# ---- no link to an rnbd device outside our directories --------------------
n=0
for l in $(find /dev -type l); do
	case "$(readlink -f "$l")" in
	/dev/rnbd[0-9]*) ;;
	*) continue ;;
	esac
	n=$((n + 1))
	case "$l" in
	/dev/rnbd/udev[12]/* | /dev/disk/by-uuid/* | /dev/disk/by-label/* | \
		/dev/disk/by-partuuid/* | /dev/block/*) ;;
	*) die "link $l to an rnbd device outside /dev/rnbd and /dev/disk" ;;
	esac
done
log "$n links to rnbd devices, all in place"
[ "$n" -ge 10 ] || die "only $n links to rnbd devices"

# ---- a session's state across a path disconnect and reconnect ------------
# (Not "reconnect" of the connected path: over rxe loopback the new connect
# can reach the server before the old disconnect, and that path of the
# server's transport leaks an rdma_cm id: an oops at the next "rdma link
# del".)
echo >"$tr/trace"
echo 1 >/sys/class/rtrs-client/udev2/paths/*/disconnect
wait_path_state udev2 disconnected 30
one_srv_sess() {
	[ "$(ls /sys/class/rtrs-server/ | wc -l)" = 1 ]
}
retry 30 "the server keeps its session after a disconnect" one_srv_sess
echo 1 >/sys/class/rtrs-client/udev2/paths/*/reconnect
wait_path_state udev2 connected 30
retry 10 "no rnbd_clt_sess_state reconnecting -> connected" \
	some rnbd_clt_sess_state: sess=udev2 old=reconnecting new=connected
some rnbd_clt_sess_state: sess=udev2 old=connected new=reconnecting ||
	die "no rnbd_clt_sess_state connected -> reconnecting"
# the device is open again, and its data there
wait_link '/dev/rnbd/udev2/b\x5ca\x24d\x2a/..x/caf\xe9/\x2e/nb\x2dpart1' "/dev/$odd"
dd if="/dev/$odd" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null

# ---- unmap removes them all -----------------------------------------------
echo >"$tr/trace"
for d in "$dup" "$odd" "$pp" "$part" "$disk" "$tdev"; do
	unmap_dev "$d"
done
one rnbd_clt_unmap: disk="$tdev" sess=udev1 path=/tdisk access_mode=rw sectors=32768 force=0 >/dev/null
one rnbd_srv_dev_close: sess="$ssess" dev_id="$id" path=/tdisk busy=0 >/dev/null
for d in "$dup" "$odd" "$pp" "$part" "$disk"; do
	one rnbd_clt_unmap: disk="$d" force=0 >/dev/null
done
trace_off
udevadm settle -t $((30 * S))
left=$(find /dev/rnbd /dev/disk -type l 2>/dev/null | while read -r l; do
	[ -e "$l" ] && case "$(readlink "$l")" in *rnbd[0-9]*) echo "$l" ;; esac
	[ -e "$l" ] || echo "$l (dangling)"
done)
[ -z "$left" ] || die "links left after unmap: $left"
[ ! -e /dev/disk/by-uuid/$uuid ] || die "by-uuid link left"
[ ! -e /dev/disk/by-partuuid/$puuid ] || die "by-partuuid link left"
udev_stop
rm -rf "$root"
