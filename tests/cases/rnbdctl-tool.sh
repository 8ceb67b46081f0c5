# SPDX-License-Identifier: GPL-2.0-only
# desc: rnbdctl, our admin CLI, on live mappings: map (a new session with
#       "ip:" left out, a second device onto it read-only), list and show
#       in text and --json (parsed, every field checked against sysfs and
#       what the case did: client devices, sessions, paths, byte counters;
#       server exports, a regular file's export and the server's sessions),
#       show of a device and of a session,
#       the MD column (no array here: "-", null), --loss-timeout (the
#       session's loss_timeout_sec; out of range refused), version,
#       unmap by name and by /dev path, unmap --force of an open
#       device; every error path's message and exit code: usage errors,
#       client module not loaded, unreachable server, nobody listening,
#       no such device on the server, device busy on the server, already
#       mapped, malformed request, unmap of a mounted and of an open device,
#       unknown device or session; a failed map leaves nothing behind
#       (few rnbdctl runs: python3 starts in seconds in a loaded TCG guest)
# boot: shared
# timeout: 300
. "$REPO/tests/lib/rnbdctl.sh"
A=$RXE_ADDR

# ---- before the modules ---------------------------------------------------
ctl 9 map -s s1 -p "ip:$A" /dev/nullb1
err_has "the rnbd client is not loaded (no /sys/devices/virtual/rnbd-client/ctl/map_device): modprobe rnbd_client"
ctl 1 map /dev/nullb1
err_has "the following arguments are required: -s/--session"
ctl 1 map -s s1 -p "ip:$A" "/dev/nullb1 access_mode=ro"
err_has "device path '/dev/nullb1 access_mode=ro': must be non-empty, without spaces"

# ---- map ------------------------------------------------------------------
for bad in 0 1.5; do
	ctl 1 map -s s1 -p "ip:$A" --loss-timeout "$bad" /dev/nullb1
	err_has "loss timeout '$bad': want whole seconds, 1 to 86400"
done
nb1=$(nullb_create nullb1 16)
nb2=$(nullb_create nullb2 8)
rnbd_setup
ctl 0 --json version
json 'd["version"]' 1 'd["modules"]["rnbd_client"]' True 'd["modules"]["rnbd_server"]' True
S=ctl-srv
ctl 0 map -s "$S" -p "$A" "$nb1"
dev1=$(basename "$(cat /tmp/ctl.out)")
expect_eq "map prints" "$(cat /tmp/ctl.out)" "/dev/$dev1"
expect_eq "$dev1 session" "$(cat "/sys/block/$dev1/rnbd/session")" "$S"
expect_eq "$dev1 mapping_path" "$(cat "/sys/block/$dev1/rnbd/mapping_path")" "$nb1"
ctl 0 --json map -s "$S" --ro "$nb2"
dev2=$(basename "$(readlink "/sys/class/rnbd-client/ctl/devices/$(echo "$nb2" | tr / !)@$S")")
expect_eq "$dev2 access_mode" "$(cat "/sys/block/$dev2/rnbd/access_mode")" ro
expect_eq "$dev2 ro" "$(cat "/sys/block/$dev2/ro")" 1
expect_eq "sessions" "$(ls /sys/class/rtrs-client)" "$S"
json 'd["version"]' 1 \
	'[(r["result"], r["sessname"], r["mapping_path"], r["devname"], r["error"], r["exit_code"]) for r in d["results"]]' \
	"[('mapped', '$S', '$nb2', '$dev2', None, 0)]" \
	'[(i["devname"], i["access_mode"]) for i in d["imports"]]' "[('$dev2', 'ro')]"

# a regular file, exported beside the devices: on tmpfs, which takes
# O_DIRECT since 6.6 (6.12 does, 6.1 does not), so the server serves it
# directly where a direct read of it works here
F=/run/ctl-file.img
trap 'rm -f "$F"' EXIT
truncate -s 4M "$F"
if dd if="$F" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
	fmode=direct
else
	fmode=buffered
fi
log "tmpfs: a direct read works: $fmode expected"
FXP=/sys/module/rnbd_server/parameters/file_exports
trap 'rm -f "$F"; echo 0 >"$FXP"' EXIT
echo 0 >"$FXP"
ctl 8 map -s "$S" "$F"
err_has "not supported by the server: a regular file needs file_exports=1 on the server"
echo 1 >"$FXP"
# --loss-timeout: the session's, set once the device is mapped
ctl 0 map -s "$S" --loss-timeout 30 "$F"
dev3=$(basename "$(cat /tmp/ctl.out)")
expect_eq "loss_timeout_sec after --loss-timeout 30" "$(cat "/sys/class/rtrs-client/$S/loss_timeout_sec")" 30
FX="/sys/class/rnbd-server/ctl/files/run!ctl-file.img"
expect_eq "file_path" "$(cat "$FX/file_path")" "$F"
expect_eq "io_mode" "$(cat "$FX/io_mode")" "$fmode"

# traffic: 1 MiB written to dev1, 2 MiB read from it
dd if=/dev/urandom of=/tmp/ctl-data bs=64k count=16 2>/dev/null
dd if=/tmp/ctl-data of="/dev/$dev1" bs=64k oflag=direct 2>/dev/null || die "write $dev1"
dd if="/dev/$dev1" of=/dev/null bs=64k count=32 iflag=direct 2>/dev/null || die "read $dev1"

# ---- list, show -----------------------------------------------------------
ctl 0 list
expect_eq "list, $dev1" "$(awk -v d="$dev1" '$1 == d { print $2, $3, $4, $5, $6, $7 }' /tmp/ctl.out)" \
	"$S $nb1 rw open 16.0 MiB"
# MD, last: no md array holds any of them (udev-md-rejoin: one that does)
grep -qx 'DEVICE  *SESSION  *MAPPING PATH  *ACCESS  *STATE  *SIZE  *MD' /tmp/ctl.out ||
	die "list: no header of the client devices: $(cat /tmp/ctl.out)"
expect_eq "list, MD" "$(awk -v d1="$dev1" -v d2="$dev2" -v d3="$dev3" \
	'$1 == d1 || $1 == d2 || $1 == d3 { print $1, $NF, NF }' /tmp/ctl.out)" \
	"$dev1 - 8
$dev2 - 8
$dev3 - 8"
expect_eq "list, $dev2" "$(awk -v d="$dev2" '$1 == d { print $2, $3, $4, $5, $6, $7 }' /tmp/ctl.out)" \
	"$S $nb2 ro open 8.0 MiB"
expect_eq "list, $dev3" "$(awk -v d="$dev3" '$1 == d { print $2, $3, $4, $5, $6, $7 }' /tmp/ctl.out)" \
	"$S $F rw open 4.0 MiB"
P=/sys/class/rtrs-client/$S/paths
pname=$(ls "$P")
read -r _ rb _ wb inf _ <"$P/$pname/stats/rdma"
ssess=$(ls /sys/class/rtrs-server)
sp=/sys/class/rtrs-server/$ssess/paths
spname=$(ls "$sp")
read -r _ srb _ swb _ <"$sp/$spname/stats/rdma"
# the server's side in the same list: its block devices, then its file
FXS=$FX/sessions/$ssess
expect_eq "file: session's mapping_path, access_mode, read_only" \
	"$(cat "$FXS/mapping_path") $(cat "$FXS/access_mode") $(cat "$FXS/read_only")" "$F rw 0"
# the host the client gave (its node name here) in the HOST column
shost=$(cat /sys/class/rtrs-server/$ssess/hostname)
[ -n "$shost" ] || die "the server session has no host name"
expect_eq "list, exports" "$(awk '$1 ~ /^nullb/ { print $1, $2, $3, $4, $5, NF }' /tmp/ctl.out)" \
	"nullb1 $ssess $shost $nb1 rw 5
nullb2 $ssess $shost $nb2 ro 5"
expect_eq "list, file exports" "$(awk -v f="$F" '$1 == f { print $2, $3, $4, $5, $6, NF }' /tmp/ctl.out)" \
	"$ssess $shost $F rw $fmode 6"
grep -qx 'FILE  *SESSION  *HOST  *MAPPING PATH  *ACCESS  *IO MODE' /tmp/ctl.out ||
	die "list: no header of the file exports: $(cat /tmp/ctl.out)"
ctl 0 list --json
json '(d["version"], sorted(i["devname"] for i in d["imports"]))' "(1, ['$dev1', '$dev2', '$dev3'])" \
	"sorted((e['devname'], e['sessname'], e['mapping_path'], e['access_mode'], e['ro']) for e in d['exports'])" \
	"[('nullb1', '$ssess', '$nb1', 'rw', False), ('nullb2', '$ssess', '$nb2', 'ro', True)]" \
	"[[e[k] for k in ('name', 'file_path', 'io_mode', 'sessname', 'mapping_path', 'access_mode', 'ro', 'direction')] for e in d['file exports']]" \
	"[['run!ctl-file.img', '$F', '$fmode', '$ssess', '$F', 'rw', False, 'export']]" \
	'sorted(d)' "['exports', 'file exports', 'imports', 'version']"
ctl 0 show --json
# the client's devices, field by field, against sysfs and what was mapped
checks=('d["version"]' 1 "sorted(i['devname'] for i in d['imports']) == sorted(['$dev1', '$dev2', '$dev3'])" True)
for dev in "$dev1" "$dev2"; do
	b=/sys/block/$dev
	read -r _ _ rs _ _ _ ws _ <"$b/stat"
	case $dev in
	"$dev1") want="'$nb1', 'rw', False, 16777216" ;;
	*) want="'$nb2', 'ro', True, 8388608" ;;
	esac
	x="[i for i in d['imports'] if i['devname'] == '$dev'][0]"
	checks+=(
		"[${x}[k] for k in ('devpath', 'sessname', 'mapping_path', 'access_mode', 'ro', 'size_bytes')]"
		"['/dev/$dev', '$S', $want]"
		"[${x}[k] for k in ('mapping_path', 'access_mode', 'state', 'size_bytes', 'direction')]"
		"['$(cat "$b/rnbd/mapping_path")', '$(cat "$b/rnbd/access_mode")', '$(cat "$b/rnbd/state")', $(($(cat "$b/size") * 512)), 'import']"
		"(${x}['rx_sect'], ${x}['tx_sect'])" "($rs, $ws)"
		"(${x}['md'], ${x}['md_state'])" "(None, None)")
done
checks+=("[i['rx_sect'] >= 4096 and i['tx_sect'] >= 2048 for i in d['imports'] if i['devname'] == '$dev1']" "[True]")
# its session and path
x="d['outgoing sessions'][0]"
checks+=('len(d["outgoing sessions"])' 1
	"[${x}[k] for k in ('sessname', 'direction', 'state', 'path_cnt', 'act_path_cnt', 'path_uu', 'mp', 'mp_short')]"
	"['$S', 'outgoing', 'connected', 1, 1, 'U', 'round-robin', 'RR']"
	"[${x}[k] for k in ('rx_bytes', 'tx_bytes', 'inflights', 'reconnects')]" "[$rb, $wb, $inf, 0]"
	"${x}['rx_bytes'] >= 2097152 and ${x}['tx_bytes'] >= 1048576" True)
x="d['outgoing sessions'][0]['paths'][0]"
checks+=("[${x}[k] for k in ('pathname', 'src_addr', 'dst_addr', 'hca_name', 'hca_port', 'state', 'direction')]"
	"['$pname', '$(cat "$P/$pname/src_addr")', 'ip:$A', '$(cat "$P/$pname/hca_name")', $(cat "$P/$pname/hca_port"), '$(cat "$P/$pname/state")', 'outgoing']"
	"[${x}[k] for k in ('hca_name', 'hca_port', 'rx_bytes', 'tx_bytes', 'reconnects')]" "['$RXE_DEV', 1, $rb, $wb, 0]")
# the server side of the same guest
checks+=("sorted([e[k] for k in ('devname', 'devpath', 'sessname', 'mapping_path', 'access_mode', 'ro', 'direction')] for e in d['exports'])"
	"[['nullb1', '/dev/nullb1', '$ssess', '$nb1', 'rw', False, 'export'], ['nullb2', '/dev/nullb2', '$ssess', '$nb2', 'ro', True, 'export']]")
for b in nullb1 nullb2; do
	sd=/sys/class/rnbd-server/ctl/devices/$b/sessions/$ssess
	ro=False
	[ "$(cat "$sd/read_only")" = 1 ] && ro=True
	checks+=("[(e['mapping_path'], e['access_mode'], e['ro']) for e in d['exports'] if e['devname'] == '$b']"
		"[('$(cat "$sd/mapping_path")', '$(cat "$sd/access_mode")', $ro)]")
done
checks+=("[[e[k] for k in ('name', 'file_path', 'io_mode', 'sessname', 'mapping_path', 'access_mode', 'ro', 'direction')] for e in d['file exports']]"
	"[['run!ctl-file.img', '$(cat "$FX/file_path")', '$(cat "$FX/io_mode")', '$ssess', '$(cat "$FXS/mapping_path")', '$(cat "$FXS/access_mode")', False, 'export']]")
x="d['incoming sessions'][0]"
checks+=('len(d["incoming sessions"])' 1
	"[${x}[k] for k in ('sessname', 'direction', 'state', 'path_cnt', 'act_path_cnt', 'tx_bytes', 'rx_bytes')]"
	"['$ssess', 'incoming', 'connected', 1, 1, $srb, $swb]"
	"[${x}['paths'][0][k] for k in ('pathname', 'src_addr', 'dst_addr', 'state')]"
	"['$spname', '$(cat "$P/$pname/src_addr")', 'ip:$A', 'connected']"
	"${x}['tx_bytes'] >= 2097152 and ${x}['rx_bytes'] >= 1048576" True)
json "${checks[@]}"
ctl 0 show
out_has "session $S (outgoing): connected, 1/1 paths connected policy round-robin"
out_has "  path $pname: connected, $RXE_DEV port 1"
out_has "session $ssess (incoming): connected, 1/1 paths connected, host $shost"
expect_eq "show, file exports" "$(sed -n '/^server file exports:$/,/^server sessions:$/p' /tmp/ctl.out |
	awk -v f="$F" '$1 == f { print $2, $3, $4, $5, $6, NF }')" "$ssess $shost $F rw $fmode 6"
ctl 0 show "/dev/$dev2" --json
json '[(i["devname"], i["mapping_path"]) for i in d["imports"]]' "[('$dev2', '$nb2')]" \
	'"outgoing sessions" in d' False
ctl 0 show "$S" --json
json '[s["sessname"] for s in d["outgoing sessions"]]' "['$S']" \
	"sorted(i['devname'] for i in d['imports']) == sorted(['$dev1', '$dev2', '$dev3'])" True \
	'"exports" in d or "file exports" in d' False
ctl 0 show "$ssess" --json
json '([s["sessname"] for s in d["incoming sessions"]], len(d["exports"]), "imports" in d)' "(['$ssess'], 2, False)" \
	'[(e["name"], e["sessname"]) for e in d["file exports"]]' "[('run!ctl-file.img', '$ssess')]"
ctl 3 show no-such-session
err_has "no-such-session: no such rnbd device or session"

# ---- map errors: message, exit code, nothing left behind ------------------
before=$(rnbd_devs; ls /sys/class/rtrs-client)
ctl 7 map -s "$S" "$nb1"
err_has "$nb1 is already mapped in session $S (as $dev1)"
ctl 6 --json map -s "$S" /dev/does-not-exist
err_has "no such device on the server: /dev/does-not-exist"
json '[(r["result"], r["errno"], r["exit_code"], r["devname"]) for r in d["results"]]' \
	"[('failed', 'ENOENT', 6, None)]" \
	'd["results"][0]["error"].startswith("no such device on the server")' True
ctl 4 map -s ctl-other -p "ip:$A" "$nb1"
err_has "$nb1 is busy on the server"
ctl 5 map -s ctl-bad -p "ip:$A" --port 4444 "$nb1"
err_has "server unreachable (ip:$A): nobody listens there"
ctl 8 map -s ctl-bad -p "ip:$A" -a wo "$nb1"
err_has "the kernel refused the request as malformed"
ctl 8 map -s "$S" -p ip:10.9.0.9 "$nb2"
err_has "a session that exists takes only its own paths"
after=$(rnbd_devs; ls /sys/class/rtrs-client)
expect_eq "devices and sessions after the failed maps" "$after" "$before"

# ---- unmap ----------------------------------------------------------------
mkfs.ext4 -q -F "/dev/$dev1" || die "mkfs.ext4"
mkdir -p /mnt/ctl
mount "/dev/$dev1" /mnt/ctl || die "mount"
ctl 4 unmap "$dev1"
err_has "$dev1 is in use: mounted on /mnt/ctl"
umount /mnt/ctl
exec 3<"/dev/$dev2"
ctl 4 unmap "$dev2"
err_has "$dev2 is in use: the device is mounted or open"
ctl 3 --json unmap rnbd99
err_has "rnbd99: no such mapped rnbd device"
json '(d["version"], d["error"]["exit_code"])' "(1, 3)"
ctl 3 unmap ../../block/nullb1
expect_eq "devices after the refused unmaps" "$(rnbd_devs; ls /sys/class/rtrs-client)" "$before"
ctl 0 unmap --force "$dev2"
exec 3<&-
[ ! -e "/sys/block/$dev2" ] || die "$dev2 still there after unmap --force"
ctl 0 --json unmap "/dev/$dev1"
json '[(r["result"], r["devname"], r["sessname"], r["mapping_path"]) for r in d["results"]]' \
	"[('unmapped', '$dev1', '$S', '$nb1')]"
# wait_while WHAT CMD...: wait (5 s at most) while CMD succeeds; then WHAT
wait_while() {
	local what=$1 i=0
	shift
	while "$@"; do
		i=$((i + 1))
		[ $i -lt 50 ] || die "$what 5 s later"
		sleep 0.1
	done
}
unmap_dev "$dev3"
wait_while "$FX still there after the unmap of $dev3" test -e "$FX"
expect_eq "devices left" "$(rnbd_devs)" ""
# the session ends with its last device
sessions_left() {
	[ -n "$(ls /sys/class/rtrs-client)" ]
}
wait_while "a client session left after the last unmap" sessions_left
