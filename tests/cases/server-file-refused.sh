# SPDX-License-Identifier: GPL-2.0-only
# desc: what the server's file IO mode refuses, as for block devices: a
#       directory, fifo, socket and character device (ENOTBLK and a log
#       line each), symlinks out of dev_search_path (ENOENT), a second rw
#       map of a file by its name or a hard link (EBUSY, the device rule;
#       ro beside it works, migration as for devices), a file another
#       process writes (EBUSY; ro only with allow_busy_devices), a rw map
#       of a file on a read-only mount (EROFS)
# boot: shared
# timeout: 200
E=/run/fref
SERVER_PARAMS="dev_search_path=$E"
BUSY=/sys/module/rnbd_server/parameters/allow_busy_devices
cleanup_fref() {	# a shared boot: leave no mount behind
	exec 3>&- || true
	for d in /sys/block/rnbd*; do
		[ ! -e "$d/rnbd/unmap_device" ] || echo force >"$d/rnbd/unmap_device" || true
	done
	for m in "$E/ro" "$E"; do
		! mountpoint -q "$m" || umount -l "$m" || true
	done
	rm -rf "$E" /run/fref-outside.img
}
trap cleanup_fref EXIT
mkdir -p "$E"
mount -t tmpfs -o size=64M fref "$E" || die "mount tmpfs"
mkdir "$E/dir" "$E/ro"
mkfifo "$E/fifo"
mknod "$E/null" c 1 3
python3 -c "import socket; socket.socket(socket.AF_UNIX).bind('$E/sock')"
truncate -s 16M "$E/img"
ln "$E/img" "$E/hardlink"
truncate -s 16M /run/fref-outside.img
ln -s /run/fref-outside.img "$E/escape-abs"
ln -s ../fref-outside.img "$E/escape-rel"
mount -t tmpfs -o size=32M frefro "$E/ro" || die "mount tmpfs"
truncate -s 16M "$E/ro/img"
mount -o remount,ro "$E/ro" || die "remount ro"
rnbd_setup

# map_err SESS PATH [options]: the errno of a map (OK if it worked)
map_err() {
	sysfs_write "$MAP_CTL" "sessname=$1 path=ip:$RXE_ADDR device_path=$2 ${3:-}"
}
for t in dir:directory fifo:fifo null:"character device" sock:socket; do
	expect_eq "${t%%:*}" "$(map_err bad "/${t%%:*}")" ENOTBLK
	dmesg | grep -q "/${t%%:*} is a ${t#*:}, not a block device or regular file: refused" ||
		die "no log line for the ${t#*:}"
done
# resolved inside the search path, where they name nothing
expect_eq "absolute symlink out" "$(map_err bad /escape-abs)" ENOENT
expect_eq "relative symlink out" "$(map_err bad /escape-rel)" ENOENT
r=$(map_err bad /dir/../../fref-outside.img)
case $r in EINVAL|EPERM) ;; *) die ".. out: $r" ;; esac
[ ! -e /sys/class/rtrs-client/bad ] || die "a refused map left its session"

# One writer per file, whatever names it: the device rule and its errno
dev=$(map_dev w1 /img)
expect_eq "second rw" "$(map_err w2 /img access_mode=rw)" EBUSY
expect_eq "second rw by a hard link" "$(map_err w2 /hardlink access_mode=rw)" EBUSY
dmesg | grep -q "session .*: /hardlink (file, inode [0-9]*): rw open refused: 1 session(s) open it for writing" ||
	die "no log line for the second writer"
expect_eq "same session, other name" "$(map_err w1 /hardlink)" EEXIST
dev_ro=$(map_dev r2 /hardlink access_mode=ro)
dev_mig=$(map_dev m3 /img access_mode=migration)
expect_eq "third writer" "$(map_err m4 /img access_mode=migration)" EBUSY
# the ro map reads what the rw map wrote
head -c 1048576 /dev/urandom >/tmp/fref.rand
dd if=/tmp/fref.rand of="/dev/$dev" bs=1M oflag=direct 2>/dev/null || die "write"
expect_eq "read through the ro map" "$(sha_dev "/dev/$dev_ro" 1048576)" \
	"$(sha256sum </tmp/fref.rand | cut -d' ' -f1)"
if dd if=/dev/zero of="/dev/$dev_ro" bs=4k count=1 oflag=direct 2>/dev/null; then
	die "a write through the ro map worked"
fi
unmap_dev "$dev_mig"
unmap_dev "$dev_ro"
unmap_dev "$dev"
dev=$(map_dev w2 /hardlink access_mode=rw)
unmap_dev "$dev"

# A file another process has open for writing is busy
exec 3<>"$E/img"
expect_eq "rw of a file written elsewhere" "$(map_err w1 /img)" EBUSY
expect_eq "ro of a file written elsewhere" "$(map_err w1 /img access_mode=ro)" EBUSY
dmesg | grep -q "file /img is in use" || die "no log line for the busy file"
echo 1 >"$BUSY"
dev=$(map_dev w1 /img access_mode=ro)
expect_eq "rw with allow_busy_devices" "$(map_err w5 /img)" EBUSY
unmap_dev "$dev"
echo 0 >"$BUSY"
exec 3>&-
dev=$(map_dev w1 /img)
unmap_dev "$dev"

# A read-only mount: ro only
expect_eq "rw on a read-only mount" "$(map_err w1 /ro/img)" EROFS
dev=$(map_dev w1 /ro/img access_mode=ro)
expect_eq "size" "$(cat "/sys/block/$dev/size")" 32768
unmap_dev "$dev"
rm -f /tmp/fref.rand
