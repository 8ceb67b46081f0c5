# SPDX-License-Identifier: GPL-2.0-only
# desc: regular files exported as block devices (the server's file IO
#       mode): an image on tmpfs (buffered, or direct where tmpfs takes
#       O_DIRECT, 6.6 on; 512-byte blocks, its size
#       rounded down) and one on ext4 over a 4k-sector loop device
#       (O_DIRECT, 4096-byte blocks): geometry and cache flags, the
#       server's sysfs view, fio verify, discard punches a hole (the
#       file's allocated blocks shrink), write-zeroes keeps them, a grown
#       file grows the disk, ext4 on each, data the client fsynced survives
#       a server module reload and a remount; refused as for devices: a
#       directory, fifo, socket, character device (ENOTBLK, a log line),
#       symlinks and .. out of dev_search_path, a second rw map of a file by
#       its name or a hard link (EBUSY), a file another process writes
#       (EBUSY, ro with allow_busy_devices), rw on a read-only mount
#       (EROFS), any file while file_exports=0 (EOPNOTSUPP, a log line),
#       a file of a pseudo file system (/proc/kcore, PCI config space in
#       procfs and sysfs: ENOTBLK, a log line, no oops);
#       a read and a write each have a submit and a complete
#       tracepoint event on the server; an image on overlayfs with a tmpfs
#       upper layer (where direct IO fails though the overlay's file
#       claims it) is served buffered, with a log line
# boot: shared
# timeout: 600
E=/run/fexp
B=/run/fexp-backing
SERVER_PARAMS="dev_search_path=$E file_exports=1"
SRV=/sys/class/rnbd-server/ctl
BUSY=/sys/module/rnbd_server/parameters/allow_busy_devices
cleanup_fexp() {	# a shared boot: leave no mount or loop device behind
	exec 3>&- || true
	trace_io 0 2>/dev/null || true
	for d in /sys/block/rnbd*; do
		[ ! -e "$d/rnbd/unmap_device" ] || echo force >"$d/rnbd/unmap_device" || true
	done
	for m in /mnt/fexp "$E/ovl" "$E/ro" "$E/tmpfs" "$E/ext4" "$E/proc" "$E/sys"; do
		! mountpoint -q "$m" || umount -l "$m" || true
	done
	losetup -D || true
	rm -rf "$B" "$E" /mnt/fexp /run/fexp-outside.img /tmp/fexp.*
}
trap cleanup_fexp EXIT
mkdir -p "$E/tmpfs" "$E/ext4" "$E/ro" "$B" /mnt/fexp
mount -t tmpfs -o size=256M fexp "$E/tmpfs" || die "mount tmpfs"
modprobe loop
truncate -s 160M "$B/fs.img"
lo=$(losetup -f --show --sector-size 4096 "$B/fs.img") || die "losetup"
mkfs.ext4 -q -b 4096 "$lo" || die "mkfs.ext4 on $lo"
mount "$lo" "$E/ext4" || die "mount $lo"
# 64 MiB and 1000 bytes: not a whole number of blocks
size=$((64 * 1048576 + 1000))
truncate -s $size "$E/tmpfs/disk.img" "$E/ext4/disk.img"
truncate -s 16M "$E/tmpfs/busy.img" /run/fexp-outside.img
ln "$E/tmpfs/disk.img" "$E/tmpfs/hardlink"
mkdir "$E/dir"
mkfifo "$E/fifo"
mknod "$E/null" c 1 3
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$E/sock')"
ln -s /run/fexp-outside.img "$E/escape-abs"
ln -s ../fexp-outside.img "$E/escape-rel"
mount -t tmpfs -o size=32M fexpro "$E/ro" || die "mount tmpfs"
truncate -s 16M "$E/ro/img"
mount -o remount,ro "$E/ro" || die "remount ro"
rnbd_setup

blocks() {	# allocated 512-byte blocks of an image
	stat -c %b "$1"
}
zero_sha() {
	head -c "$1" /dev/zero | sha256sum | cut -d' ' -f1
}
# range_sha FILE OFFSET_MIB MIB [iflag=direct]: checksum of a range
range_sha() {
	dd if="$1" bs=1M skip="$2" count="$3" ${4:+"$4"} 2>/dev/null |
		sha256sum | cut -d' ' -f1
}
flushes() {	# completed flush requests of a block device (stat field 16)
	awk '{ print $16 }' "/sys/block/$1/stat"
}
# map_errs SESS "PATH [OPTIONS]"...: map each on session SESS in one python
# process (python starts slowly under TCG); prints OK or the errno of each
map_errs() {
	python3 - "$MAP_CTL" "$RXE_ADDR" "$@" <<'PY'
import errno
import os
import sys

ctl, addr, sess = sys.argv[1:4]
res = []
for arg in sys.argv[4:]:
    fd = os.open(ctl, os.O_WRONLY)
    try:
        os.write(fd, f"sessname={sess} path=ip:{addr} device_path={arg}".encode())
        res.append("OK")
    except OSError as e:
        res.append(errno.errorcode.get(e.errno, str(e.errno)))
    finally:
        os.close(fd)
print(" ".join(res))
PY
}

TR=/sys/kernel/tracing
trace_io() {	# trace_io 0|1: the server's per-request events off or on
	echo "$1" >"$TR/events/rnbd_srv/rnbd_srv_io_submit/enable"
	echo "$1" >"$TR/events/rnbd_srv/rnbd_srv_io_complete/enable"
}
# trace_rw KIND DEV: a 4 KiB read and a 4 KiB write each have one submit
# and one complete event on the server, with the same slot
trace_rw() {
	echo >"$TR/trace"
	trace_io 1
	dd if="/dev/$2" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null ||
		die "$1: traced read"
	dd if=/dev/zero of="/dev/$2" bs=4k count=1 seek=1 oflag=direct 2>/dev/null ||
		die "$1: traced write"
	trace_io 0
	for op in READ WRITE; do
		sub=$(grep "rnbd_srv_io_submit: .* op=$op .* len=4096\$" "$TR/trace")
		[ "$(echo "$sub" | grep -c .)" = 1 ] ||
			{ cat "$TR/trace"; die "$1: $op: submit events: '$sub'"; }
		slot=${sub#* slot=}
		slot=${slot%% *}
		len=0
		[ $op = WRITE ] || len=4096
		grep -q "rnbd_srv_io_complete: .* slot=$slot err=0 len=$len\$" "$TR/trace" ||
			{ cat "$TR/trace"; die "$1: $op: no complete event of slot $slot"; }
	done
	echo >"$TR/trace"
}

# check_export KIND DEV IMAGE LBS SECTORS IO_MODE MIN_BS [PBS]
check_export() {
	kind=$1 dev=$2 img=$3 lbs=$4 sectors=$5 mode=$6 minbs=$7 pbs=${8:-4096}
	q=/sys/block/$dev/queue
	expect_eq "$kind: size" "$(cat "/sys/block/$dev/size")" "$sectors"
	expect_eq "$kind: logical block size" "$(cat "$q"/logical_block_size)" "$lbs"
	expect_eq "$kind: physical block size" "$(cat "$q"/physical_block_size)" "$pbs"
	expect_eq "$kind: write cache" "$(cat "$q"/write_cache)" "write back"
	expect_eq "$kind: fua" "$(cat "$q"/fua)" 1
	expect_eq "$kind: rotational" "$(cat "$q"/rotational)" 0
	[ "$(cat "$q"/discard_max_bytes)" -gt 0 ] || die "$kind: no discard"
	[ "$(cat "$q"/write_zeroes_max_bytes)" -gt 0 ] || die "$kind: no write-zeroes"
	expect_eq "$kind: discard granularity" "$(cat "$q"/discard_granularity)" "$pbs"
	# the server's view: files/, not devices/ (the rnbd tool reads that)
	name=$(echo "${img#/}" | tr / '!')
	f=$SRV/files/$name
	[ -d "$f" ] || die "$kind: no $f: $(ls $SRV/files)"
	[ ! -e "$SRV/devices/$name" ] || die "$kind: a file under devices/"
	expect_eq "$kind: file_path" "$(cat "$f/file_path")" "$img"
	expect_eq "$kind: io_mode" "$(cat "$f/io_mode")" "$mode"
	expect_eq "$kind: access_mode" "$(cat "$f"/sessions/*/access_mode)" rw
	expect_eq "$kind: mapping_path" "$(cat "$f"/sessions/*/mapping_path)" "${img#"$E"}"

	trace_rw "$kind" "$dev"

	fio --name=v --filename="/dev/$dev" --ioengine=libaio --direct=1 \
		--rw=randwrite --bsrange="$minbs"-64k --iodepth=16 --size=4M \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fexp.fio 2>&1 || { cat /tmp/fexp.fio; die "$kind: fio verify"; }
	grep -q 'err= *0' /tmp/fexp.fio || { cat /tmp/fexp.fio; die "$kind: no fio report"; }

	# discard: 8 MiB at 16 MiB, written first, is a hole afterwards
	head -c 8388608 /dev/urandom >/tmp/fexp.rand
	dd if=/tmp/fexp.rand of="/dev/$dev" bs=1M seek=16 oflag=direct 2>/dev/null ||
		die "$kind: write"
	b0=$(blocks "$img")
	blkdiscard -o $((16 * 1048576)) -l 8388608 "/dev/$dev" || die "$kind: blkdiscard"
	b1=$(blocks "$img")
	log "$kind: allocated blocks $b0 -> $b1 after an 8 MiB discard"
	[ $((b0 - b1)) -ge 16384 ] || die "$kind: discard freed $((b0 - b1)) blocks, not 16384"
	expect_eq "$kind: discarded range" \
		"$(range_sha "/dev/$dev" 16 8 iflag=direct)" "$(zero_sha 8388608)"
	expect_eq "$kind: discarded range in the file" "$(range_sha "$img" 16 8)" \
		"$(zero_sha 8388608)"

	# write-zeroes (BLKZEROOUT: no unmap): zeroes, the blocks stay
	dd if=/tmp/fexp.rand of="/dev/$dev" bs=1M seek=32 count=4 oflag=direct 2>/dev/null ||
		die "$kind: write"
	b0=$(blocks "$img")
	blkdiscard -z -o $((32 * 1048576)) -l 4194304 "/dev/$dev" || die "$kind: blkdiscard -z"
	b1=$(blocks "$img")
	log "$kind: allocated blocks $b0 -> $b1 after a 4 MiB write-zeroes"
	[ "$b1" -ge $((b0 - 64)) ] || die "$kind: write-zeroes unmapped $((b0 - b1)) blocks"
	expect_eq "$kind: zeroed range" "$(range_sha "/dev/$dev" 32 4 iflag=direct)" \
		"$(zero_sha 4194304)"
	expect_eq "$kind: zeroed range in the file" "$(range_sha "$img" 32 4)" \
		"$(zero_sha 4194304)"
}

# ext4_roundtrip KIND DEV: mkfs, files, fsck, remount, checksums
ext4_roundtrip() {
	mkfs.ext4 -q -F "/dev/$2" || die "$1: mkfs.ext4"
	mount "/dev/$2" /mnt/fexp || die "$1: mount"
	for i in $(seq 1 12); do
		head -c $(( (i * 7919) % 200000 + 1 )) /dev/urandom >"/mnt/fexp/f$i"
	done
	head -c 2097152 /tmp/fexp.rand >/mnt/fexp/big
	(cd /mnt/fexp && sha256sum f* big) >/tmp/fexp.sums
	umount /mnt/fexp || die "$1: umount"
	fsck.ext4 -n -f "/dev/$2" >/dev/null || die "$1: fsck found problems"
	mount "/dev/$2" /mnt/fexp || die "$1: remount"
	(cd /mnt/fexp && sha256sum -c --quiet /tmp/fexp.sums) ||
		die "$1: checksums differ after remount"
	umount /mnt/fexp
}

# ---- the image on tmpfs ----------------------------------------------------
dev=$(map_dev fexp /tmpfs/disk.img)
# 512-byte blocks: the size rounded down to 131073 sectors.  tmpfs takes
# O_DIRECT since 6.6 (6.12 does, 6.1 does not): the server serves it
# directly where a direct read of it works here
if dd if="$E/tmpfs/disk.img" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null; then
	tmpfs_mode=direct
else
	tmpfs_mode=buffered
fi
log "tmpfs: a direct read works: $tmpfs_mode expected"
check_export tmpfs "$dev" "$E/tmpfs/disk.img" 512 131073 "$tmpfs_mode" 512

# refused, on this session: neither a block device nor a regular file,
# out of the search path (resolved inside it, where they name nothing),
# the same file again by a hard link
r=$(map_errs fexp /dir /fifo /null /sock /escape-abs /escape-rel \
	/dir/../../fexp-outside.img /tmpfs/hardlink)
case $r in
"ENOTBLK ENOTBLK ENOTBLK ENOTBLK ENOENT ENOENT "E[IP][NE][VR]*" EEXIST") ;;
*) die "refused maps: $r" ;;
esac
for t in dir:directory fifo:fifo null:"character device" sock:socket; do
	dmesg | grep -q "/${t%%:*} is a ${t#*:}, not a block device or regular file: refused" ||
		die "no log line for the ${t#*:}"
done
# pseudo file systems: regular files, but no disk images (kcore is the
# kernel's memory, a proc file may have no read_iter, sysfs's config reads
# and writes a device's registers)
mkdir "$E/proc" "$E/sys"
mount -t proc fexpproc "$E/proc" || die "mount proc"
mount -t sysfs fexpsys "$E/sys" || die "mount sysfs"
pcidev=$(ls /sys/bus/pci/devices | head -n 1)
bus=${pcidev#*:}
pciproc=/proc/bus/pci/${bus%%:*}/${bus#*:}
pcisys=/sys/bus/pci/devices/$pcidev/config
[ -f "$E$pciproc" ] && [ -f "$E$pcisys" ] || die "no PCI config files: $pciproc $pcisys"
expect_eq "pseudo file systems' files, ro" \
	"$(map_errs pseudo "$pcisys access_mode=ro" "$pciproc access_mode=ro" \
		"/proc/kcore access_mode=ro")" "ENOTBLK ENOTBLK ENOTBLK"
expect_eq "PCI config space in sysfs, rw" "$(map_errs pseudo "$pcisys")" ENOTBLK
for f in "$pcisys:sysfs" "$pciproc:proc" "/proc/kcore:proc"; do
	klog | grep -q "session [^ ]*: ${f%:*} is on ${f##*:}, a pseudo file system, not a disk image: refused" ||
		die "no log line for ${f%:*}"
done
[ ! -e /sys/class/rtrs-client/pseudo ] || die "a refused map left its session"
umount "$E/proc" "$E/sys"
# file exports off (the default): a file is refused, a device is not
FXP=/sys/module/rnbd_server/parameters/file_exports
echo 0 >"$FXP"
expect_eq "a file with file_exports=0" "$(map_errs off /tmpfs/busy.img)" ENOTSUP
echo 1 >"$FXP"
dmesg | grep -q "session .*: /tmpfs/busy.img is a regular file and file exports are off (file_exports=0): refused" ||
	die "no log line for a file refused with file_exports=0"
[ ! -e /sys/class/rtrs-client/off ] || die "a refused map left its session"
# one writer per file, whatever names it: the device rule and its errno
expect_eq "second rw, by name and by a hard link" \
	"$(map_errs w2 /tmpfs/disk.img /tmpfs/hardlink)" "EBUSY EBUSY"
dmesg | grep -q "session .*: /tmpfs/hardlink (file, inode [0-9]*): rw open refused: 1 session(s) open it for writing" ||
	die "no log line for the second writer"
[ ! -e /sys/class/rtrs-client/w2 ] || die "a refused map left its session"
dev_ro=$(map_dev r2 /tmpfs/hardlink access_mode=ro)
dev_mig=$(map_dev m3 /tmpfs/disk.img access_mode=migration)
expect_eq "third writer" "$(map_errs fexp2 "/tmpfs/disk.img access_mode=migration")" EBUSY
head -c 1048576 /dev/urandom >/tmp/fexp.1m
dd if=/tmp/fexp.1m of="/dev/$dev" bs=1M oflag=direct 2>/dev/null || die "write"
expect_eq "read through the ro map" "$(sha_dev "/dev/$dev_ro" 1048576)" \
	"$(sha256sum </tmp/fexp.1m | cut -d' ' -f1)"
if dd if=/dev/zero of="/dev/$dev_ro" bs=4k count=1 oflag=direct 2>/dev/null; then
	die "a write through the ro map worked"
fi
unmap_dev "$dev_mig"
unmap_dev "$dev_ro"
# a file another process writes is busy; a read-only mount only ro
exec 3<>"$E/tmpfs/busy.img"
expect_eq "file written elsewhere, rw and ro; rw on a read-only mount" \
	"$(map_errs fexp /tmpfs/busy.img "/tmpfs/busy.img access_mode=ro" /ro/img)" \
	"EBUSY EBUSY EROFS"
dmesg | grep -q "file /tmpfs/busy.img is in use" || die "no log line for the busy file"
echo 1 >"$BUSY"
expect_eq "allow_busy_devices: rw, ro; ro on a read-only mount" \
	"$(map_errs fexp /tmpfs/busy.img "/tmpfs/busy.img access_mode=ro" \
		"/ro/img access_mode=ro")" "EBUSY OK OK"
echo 0 >"$BUSY"
exec 3>&-
for d in /sys/block/rnbd*; do
	case $(cat "$d/rnbd/mapping_path") in
	/tmpfs/busy.img|/ro/img) unmap_dev "$(basename "$d")" ;;
	esac
done

# a file that grows: the disk follows (rnbd-srv-size.c)
truncate -s 80M "$E/tmpfs/disk.img"
i=0
until [ "$(cat "/sys/block/$dev/size")" = 163840 ]; do
	i=$((i + 1))
	[ $i -lt $((100 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
		die "grown file: size $(cat "/sys/block/$dev/size"), not 163840"
	sleep 0.1
done
ext4_roundtrip tmpfs "$dev"
unmap_dev "$dev"

# ---- the image on ext4 -----------------------------------------------------
dev=$(map_dev fexp /ext4/disk.img)
# O_DIRECT: the 4k sectors of the loop device; the size a whole number of them
check_export ext4 "$dev" "$E/ext4/disk.img" 4096 131072 direct 4k
ext4_roundtrip ext4 "$dev"

# fsync on the client, then a server module reload and a remount of the
# file system the image is on: the data is on the loop device
head -c 4194304 /dev/urandom >/tmp/fexp.rand
f0=$(flushes "$(basename "$lo")")
dd if=/tmp/fexp.rand of="/dev/$dev" bs=1M seek=40 conv=fsync 2>/dev/null ||
	die "write and fsync"
f1=$(flushes "$(basename "$lo")")
log "flushes of $lo: $f0 -> $f1"
[ "$f1" -gt "$f0" ] || die "the client's fsync did not flush the server's file system"
unmap_dev "$dev"
kmsg "fexp: server module reload"
rmmod rnbd_server || die "rmmod rnbd_server"
[ ! -d "$SRV" ] || die "$SRV stays after rmmod"
umount "$E/ext4" || die "umount the image's file system (still open?)"
echo 3 >/proc/sys/vm/drop_caches
mount "$lo" "$E/ext4" || die "mount $lo again"
ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
dev=$(map_dev fexp /ext4/disk.img)
expect_eq "data after the reload" "$(range_sha "/dev/$dev" 40 4 iflag=direct)" \
	"$(sha256sum </tmp/fexp.rand | cut -d' ' -f1)"
unmap_dev "$dev"

# ---- an image on overlayfs -------------------------------------------------
# The lower layer on ext4, the upper on tmpfs, as a container's (and this
# guest's root): opened for writing, the image is copied up to tmpfs.
# Where tmpfs has no O_DIRECT (before 6.6), though the overlay's own file
# says it has, the server finds out at OPEN that direct IO fails and serves
# the file buffered; where it has (6.12), the file is served directly.  An
# overlay inode has no block size of its own: 512-byte physical blocks.
mkdir -p "$E/ext4/lower" "$E/tmpfs/upper" "$E/tmpfs/work" "$E/ovl"
head -c 1048576 /dev/urandom >/tmp/fexp.1m
cp /tmp/fexp.1m "$E/ext4/lower/img"
truncate -s 64M "$E/ext4/lower/img"
mount -t overlay fexpovl -o "lowerdir=$E/ext4/lower,upperdir=$E/tmpfs/upper,workdir=$E/tmpfs/work" \
	"$E/ovl" || die "mount overlay"
expect_eq "the image's file system" "$(stat -f -c %T "$E/ovl/img")" overlayfs
dev=$(map_dev fexp /ovl/img)
if [ "$tmpfs_mode" = buffered ]; then
	klog | grep -q "session [^ ]*: /ovl/img: direct IO fails on this file (-22): buffered IO" ||
		die "overlay: no log line for the buffered IO"
else
	! klog | grep "session [^ ]*: /ovl/img: direct IO fails" ||
		die "overlay: direct IO said to fail where tmpfs takes it"
fi
[ -f "$E/tmpfs/upper/img" ] || die "overlay: the image was not copied up"
expect_eq "overlay: the lower layer's data" "$(sha_dev "/dev/$dev" 1048576)" \
	"$(sha256sum </tmp/fexp.1m | cut -d' ' -f1)"
check_export overlayfs "$dev" "$E/ovl/img" 512 131072 "$tmpfs_mode" 512 512
ext4_roundtrip overlayfs "$dev"
unmap_dev "$dev"
umount "$E/ovl" || die "umount the overlay"
