# SPDX-License-Identifier: GPL-2.0-only
# desc: what the server will not export or do for a client: a read-write
#       open of a read-only device (EROFS), a device in use by the server
#       itself (mounted, swap, a dm or md member: EBUSY, unless
#       allow_busy_devices, and then read-only only), a /proc magic link out of dev_search_path (ELOOP);
#       real-time IO priority from the wire is served as best-effort unless
#       allow_rt_prio
# boot: shared
# timeout: 300
rnbd_setup
P=/sys/module/rnbd_server/parameters
nb=$(nullb_create nullb1 64)
nb2=$(nullb_create nullb2 64)
map() {		# map SESS PATH [options]: OK or the errno name
	sysfs_write "$MAP_CTL" "sessname=$1 path=ip:$RXE_ADDR device_path=$2 $3"
}
unmap_all() {
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/unmap_device" ] && echo normal >"$d/rnbd/unmap_device"
	done
	true
}

# -- a read-only device: rw refused, ro served; writes after a later setro fail
blockdev --setro "$nb"
expect_eq "rw map of a read-only device" "$(map ro1 "$nb")" EROFS
klog | grep -q "nullb1 is read-only: read-write open refused" ||
	die "no log line for the read-only device"
expect_eq "ro map of a read-only device" "$(map ro2 "$nb" access_mode=ro)" OK
unmap_all
blockdev --setrw "$nb"
head -c 65536 /dev/urandom >/tmp/ss-data
dd if=/tmp/ss-data of="$nb" bs=64k count=1 oflag=direct 2>/dev/null
dev=$(map_dev rw1 "$nb")
blockdev --setro "$nb"
if dd if=/dev/zero of="/dev/$dev" bs=4k count=1 oflag=direct 2>/dev/null; then
	die "a write reached a device set read-only after the open"
fi
expect_eq "data after the refused write" \
	"$(dd if="$nb" bs=64k count=1 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/ss-data)"
blockdev --setrw "$nb"
dd if=/dev/zero of="/dev/$dev" bs=4k count=1 oflag=direct 2>/dev/null ||
	die "write after setrw"
unmap_all

# -- a device the server has mounted: not exported, not even read-only
mkfs.ext4 -q -F "$nb" || die "mkfs"
mkdir -p /mnt/ss
mount "$nb" /mnt/ss || die "mount"
expect_eq "ro map of a mounted device" "$(map m1 "$nb" access_mode=ro)" EBUSY
expect_eq "rw map of a mounted device" "$(map m2 "$nb")" EBUSY
klog | grep -q "nullb1 is in use .*refused" || die "no log line for the busy device"
echo 1 >"$P/allow_busy_devices"
expect_eq "ro map of a mounted device, allowed" "$(map m3 "$nb" access_mode=ro)" OK
expect_eq "rw map of a mounted device, allowed" "$(map m4 "$nb")" EBUSY
echo 0 >"$P/allow_busy_devices"
unmap_all
umount /mnt/ss
# an rnbd session's rw open does not make the device busy for ro maps
dev=$(map_dev own "$nb")
expect_eq "ro map beside an rnbd rw map" "$(map own2 "$nb" access_mode=ro)" OK
unmap_all

# -- a swap device and a device-mapper member are in use as well; free
# again once swapoff and dmsetup remove let them go
nb3=$(nullb_create nullb3 32)
mkswap "$nb3" >/dev/null 2>&1 || die "mkswap"
swapon "$nb3" || die "swapon"
expect_eq "rw map of a swap device" "$(map sw1 "$nb3")" EBUSY
expect_eq "ro map of a swap device" "$(map sw2 "$nb3" access_mode=ro)" EBUSY
swapoff "$nb3" || die "swapoff"
modprobe dm-mod || die "modprobe dm-mod"
echo "0 $(blockdev --getsz "$nb3") linear $nb3 0" | dmsetup create rnbd-ss-lin ||
	die "dmsetup create"
expect_eq "rw map of a dm member" "$(map dm1 "$nb3")" EBUSY
expect_eq "ro map of a dm member" "$(map dm2 "$nb3" access_mode=ro)" EBUSY
dmsetup remove rnbd-ss-lin || die "dmsetup remove"
# an md member: raid1 of two devices, without a bitmap or a resync
nb4=$(nullb_create nullb4 32)
modprobe raid1 || die "modprobe raid1"
mdadm --create /dev/md/rnbd-ss --run --quiet --level=1 --raid-devices=2 \
	--metadata=1.2 --bitmap=none --assume-clean "$nb3" "$nb4" >/dev/null 2>&1 ||
	die "mdadm --create"
expect_eq "rw map of an md member" "$(map md1 "$nb3")" EBUSY
expect_eq "ro map of an md member" "$(map md2 "$nb4" access_mode=ro)" EBUSY
mdadm --stop /dev/md/rnbd-ss >/dev/null 2>&1 || die "mdadm --stop"
mdadm --zero-superblock "$nb3" "$nb4" || die "mdadm --zero-superblock"
expect_eq "rw map once none holds it" "$(map free1 "$nb3")" OK
unmap_all

# -- magic links lead out of the lookup's root: refused
expect_eq "/proc/self/root link" "$(map ml1 /proc/self/root/dev/nullb2 access_mode=ro)" ELOOP
expect_eq "/proc/1/root link" "$(map ml2 /proc/1/root$nb2 access_mode=ro)" ELOOP
exec 7<"$nb2"
expect_eq "/proc/PID/fd link" "$(map ml3 /proc/$$/fd/7 access_mode=ro)" ELOOP
exec 7<&-
expect_eq "plain path still works" "$(map ml4 "$nb2" access_mode=ro)" OK
unmap_all

# -- IO priority: the server's bios to nullb2, by class, from a kprobe on
# submit_bio() (the client's own bios go to the rnbd device, not counted)
tr=/sys/kernel/tracing
grep -q " $tr " /proc/mounts || mount -t tracefs nodev "$tr"
o_prio=$(btf_offset /sys/kernel/btf/vmlinux bio bi_ioprio)
o_bdev=$(btf_offset /sys/kernel/btf/vmlinux bio bi_bdev)
o_dev=$(btf_offset /sys/kernel/btf/vmlinux block_device bd_dev)
[ -n "$o_prio" ] && [ -n "$o_bdev" ] && [ -n "$o_dev" ] || die "no BTF offsets"
devno=$(( ($(stat -c %t "$nb2" | sed 's/^/0x/') << 20) | $(stat -c %T "$nb2" | sed 's/^/0x/') ))
echo "p:rnbdss/sb submit_bio prio=+$o_prio(%di):x16 dev=+$o_dev(+$o_bdev(%di)):u32" \
	>>"$tr/kprobe_events" || die "kprobe"
ev=$tr/events/rnbdss/sb
echo "dev == $devno" >"$ev/filter"
dev=$(map_dev prio "$nb2")
# classes seen: RT is 1 << 13, BE 2 << 13
classes() {
	echo 1 >"$ev/enable"
	ionice -c1 -n3 dd if="/dev/$dev" of=/dev/null bs=4k count=64 iflag=direct 2>/dev/null ||
		die "read with RT priority"
	echo 0 >"$ev/enable"
	grep -o 'prio=0x[0-9a-f]*' "$tr/trace" | sort | uniq -c | tr '\n' ' '
	echo >"$tr/trace"
}
echo >"$tr/trace"
seen=$(classes)
log "server bios by prio, allow_rt_prio=0: $seen"
echo "$seen" | grep -q 'prio=0x4003' || die "no best-effort level-3 bio: $seen"
echo "$seen" | grep -q 'prio=0x2' && die "a real-time bio reached the disk: $seen"
klog | grep -q "real-time IO priority served as best-effort" || die "no log line for the RT cap"
echo 1 >"$P/allow_rt_prio"
seen=$(classes)
echo 0 >"$P/allow_rt_prio"
log "server bios by prio, allow_rt_prio=1: $seen"
echo "$seen" | grep -q 'prio=0x2003' || die "allow_rt_prio=1 did not pass RT: $seen"
echo '-:rnbdss/sb' >>"$tr/kprobe_events"
unmap_all
