# SPDX-License-Identifier: GPL-2.0-only
# desc: the server's dev_search_path confines what a client may open:
#       names resolve under it, absolute device_path is joined to it, and
#       ".." escapes are refused
# boot: shared
# timeout: 200
mkdir -p /run/exports
nb=$(nullb_create nullb1 16)
# The search path acts as the root for device_path (symlinks cannot lead
# out of it), so the export is a device node inside it.
# stat prints major and minor in hex; the shell converts them (awk would
# parse "0x.." only if it is mawk)
set -- $(stat -c '%t %T' "$nb")
mknod /run/exports/disk1 b $((0x$1)) $((0x$2))
ln -s /dev/nullb1 /run/exports/escape
SERVER_PARAMS="dev_search_path=/run/exports/"
rnbd_setup
dev=$(map_dev confined disk1)
expect_eq "size" "$(cat /sys/block/$dev/size)" 32768
dev2=$(map_dev confined2 /disk1 access_mode=ro)
unmap_dev "$dev2"
expect_eq "outside the search path" \
	"$(sysfs_write "$MAP_CTL" "sessname=c3 path=ip:$RXE_ADDR device_path=$nb")" ENOENT
r=$(sysfs_write "$MAP_CTL" "sessname=c3 path=ip:$RXE_ADDR device_path=../../dev/nullb1")
case $r in EINVAL|EPERM) ;; *) die ".. escape: $r" ;; esac
r=$(sysfs_write "$MAP_CTL" "sessname=c3 path=ip:$RXE_ADDR device_path=disk1/../../../dev/nullb1")
case $r in EINVAL|EPERM) ;; *) die "inner .. escape: $r" ;; esac
expect_eq "absolute symlink out of the search path" \
	"$(sysfs_write "$MAP_CTL" "sessname=c3 path=ip:$RXE_ADDR device_path=escape")" ENOENT
unmap_dev "$dev"
