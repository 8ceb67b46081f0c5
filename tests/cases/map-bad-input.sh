# SPDX-License-Identifier: GPL-2.0-only
# desc: malformed or hostile map_device strings (empty, missing fields,
#       unknown and duplicate keys, bad addresses, over-long and 4 KiB+
#       strings, NUL and control bytes, .. escapes, missing devices, a
#       duplicate map, a path given twice, absent servers, a second path
#       to nowhere) each fail with their specific errno
#       and leave sysfs and the session list as they were
# boot: shared
# timeout: 600
rnbd_setup
nb=$(nullb_create nullb1 16)
A=$RXE_ADDR
ok_dev=$(map_dev keep "$nb")
snapshot() {
	ls -d /sys/block/rnbd* /sys/class/rtrs-client/* 2>/dev/null
	ls /sys/class/rnbd-client/ctl/devices/ 2>/dev/null
	grep -c rnbd /proc/partitions
}
before=$(snapshot)
long() {	# long N: N characters
	head -c "$1" /dev/zero | tr '\0' x
}
n=0
try() {		# try EXPECTED STRING [alternative errnos...]
	want=$1
	str=$2
	shift 2
	n=$((n + 1))
	got=$(sysfs_write "$MAP_CTL" "$str")
	ok=0
	for w in "$want" "$@"; do
		[ "$got" = "$w" ] && ok=1
	done
	show=$(printf '%s' "$str" | cut -c1-70)
	[ $ok = 1 ] || die "case $n '$show': got $got, expected $want $*"
	now=$(snapshot)
	[ "$now" = "$before" ] || die "case $n '$show' changed sysfs: $now"
	log "case $n: $got  <- $show"
}
try EINVAL "\n"
try EINVAL "   "
try EINVAL "sessname=bad"
try EINVAL "sessname=bad path=ip:$A"
try EINVAL "path=ip:$A device_path=$nb"
try EINVAL "sessname=bad device_path=$nb" ENXIO
try EINVAL "sessname=bad path=ip:$A device_path=$nb foo=bar"
try EINVAL "sessname=bad path=ip:$A device_path=$nb garbage"
try EINVAL "sessname=bad sessname=bad2 path=ip:$A device_path=$nb"
try EINVAL "sessname=bad path=ip:$A device_path=$nb device_path=$nb"
try EINVAL "sessname= path=ip:$A device_path=$nb"
try EINVAL "sessname=bad path= device_path=$nb"
try EINVAL "sessname=bad path=ip:$A device_path="
try EINVAL "sessname=a/b path=ip:$A device_path=$nb"
try EINVAL "sessname=. path=ip:$A device_path=$nb"
try EINVAL "sessname=.. path=ip:$A device_path=$nb"
try EINVAL "sessname=.hidden path=ip:$A device_path=$nb"
try EINVAL "sessname=a\\x07b path=ip:$A device_path=$nb"
try EINVAL "sessname=$(long 300) path=ip:$A device_path=$nb"
try EINVAL "sessname=bad path=$A device_path=$nb"
try EINVAL "sessname=bad path=ip:999.1.1.1 device_path=$nb"
try EINVAL "sessname=bad path=ip:10.9.0 device_path=$nb"
try EINVAL "sessname=bad path=ip: device_path=$nb"
try EINVAL "sessname=bad path=ip:fe80::zz device_path=$nb"
try EINVAL "sessname=bad path=tcp:$A device_path=$nb"
try EINVAL "sessname=bad path=ip:$A@ device_path=$nb"
try EINVAL "sessname=bad path=@ip:$A device_path=$nb"
try EINVAL "sessname=bad path=ip:fe80::1@ip:$A device_path=$nb"
try EINVAL "sessname=bad path=ip:$A@ip:$A@ip:$A device_path=$nb"
try EINVAL "sessname=bad $(for i in 1 2 3 4 5 6 7 8 9; do printf 'path=ip:10.9.1.%s ' $i; done)device_path=$nb"
# a path given twice, or seven times, or with its source both times: EINVAL
# and a line that names it, not a session of one path
try EINVAL "sessname=bad path=ip:$A path=ip:$A device_path=$nb"
try EINVAL "sessname=bad $(for i in 1 2 3 4 5 6 7; do printf 'path=ip:%s ' "$A"; done)device_path=$nb"
try EINVAL "sessname=bad path=ip:$A@ip:10.9.0.5 path=ip:10.9.0.5 path=ip:$A,ip:10.9.0.5 device_path=$nb"
expect_eq "log lines for ip:$A given twice" \
	"$(klog | grep -c "map_device: path 'ip:$A' given twice")" 2
expect_eq "log lines for ip:$A@ip:10.9.0.5 given twice" \
	"$(klog | grep -c "map_device: path 'ip:$A@ip:10.9.0.5' given twice")" 1
# a second path nobody answers on: the new session is not made
try ETIMEDOUT "sessname=bad path=ip:$A path=ip:10.9.0.3 device_path=$nb" EHOSTUNREACH
try EINVAL "sessname=bad path=ip:$A device_path=$nb access_mode=wo"
try EINVAL "sessname=bad path=ip:$A device_path=$nb access_mode="
try EINVAL "sessname=bad path=ip:$A device_path=$nb dest_port=99999"
try EINVAL "sessname=bad path=ip:$A device_path=$nb dest_port=abc"
try EINVAL "sessname=bad path=ip:$A:99999 device_path=$nb"
try EINVAL "sessname=bad path=ip:$A:1234 device_path=$nb"
try EINVAL "sessname=bad path=ip:$A:0 device_path=$nb"
try EINVAL "sessname=bad path=ip:${A}x device_path=$nb"
try EINVAL "sessname=bad path=ip:$A device_path=/$(long 300)"
try EINVAL "sessname=bad path=ip:$A device_path=$nb $(long 3900)"
try E2BIG "sessname=bad path=ip:$A device_path=$nb $(long 5000)" EINVAL
try EINVAL "sessname=bad\\x00 path=ip:$A device_path=$nb"
try EINVAL "sessname=bad path=ip:$A device_path=/dev/null\\x00b1"
try EINVAL "sessname=bad path=ip:$A device_path=/dev/nul\\x01lb1"
try EINVAL "sessname=bad path=ip:$A device_path=/dev/../dev/nullb1" EPERM
try EINVAL "sessname=bad path=ip:$A device_path=../../dev/nullb1" EPERM
try ENOENT "sessname=bad path=ip:$A device_path=/dev/does-not-exist"
# A directory made here: neither a block device nor a regular file (which
# the server exports as a file: server-file-export).
notblk=$(mktemp -d /tmp/notblk.XXXXXX)
try ENOTBLK "sessname=bad path=ip:$A device_path=$notblk" EINVAL
try EEXIST "sessname=keep path=ip:$A device_path=$nb"
try EEXIST "sessname=keep device_path=$nb"
try EINVAL "sessname=keep path=ip:10.9.0.2 device_path=$nb"
try EINVAL "sessname=keep path=ip:10.9.0.9@ip:$A device_path=$nb"
# the session's own path, as its sysfs shows it (what tools send back)
own=$(cat /sys/class/rtrs-client/keep/paths/*/src_addr)@$(cat /sys/class/rtrs-client/keep/paths/*/dst_addr)
try EEXIST "sessname=keep path=$own device_path=$nb"
try EEXIST "sessname=keep path=${own%@*},${own#*@} path=ip:$A device_path=$nb"
try ECONNREFUSED "sessname=bad path=ip:$A device_path=$nb dest_port=4444"
try EHOSTUNREACH "sessname=bad path=ip:10.9.0.77 device_path=$nb" ETIMEDOUT ENETUNREACH EADDRNOTAVAIL
try EHOSTUNREACH "sessname=bad path=ip:192.0.2.1 device_path=$nb" ETIMEDOUT ENETUNREACH EADDRNOTAVAIL
[ $n -ge 30 ] || die "only $n bad inputs"
# The existing mapping still works.
dd if=/dev/$ok_dev of=/dev/null bs=4k count=16 iflag=direct 2>/dev/null || die "IO on the kept map"
grep -q 'rnbd_client' /proc/modules
klog | grep -q 'rnbd' || die "no rnbd lines in this case's dmesg"
unmap_dev "$ok_dev"
rmdir "$notblk"
