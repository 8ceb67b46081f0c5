# SPDX-License-Identifier: GPL-2.0-only
# desc: rmmod rnbd_server with a session open disconnects it cleanly: the
#       client device goes "closed" and fails IO, and unmaps afterwards
# boot: shared
# timeout: 200
rnbd_setup
nb=$(nullb_create nullb1 16)
dev=$(map_dev srvgone "$nb")
timeout 60 rmmod rnbd_server || die "rmmod rnbd_server"
i=0
until [ "$(cat /sys/block/$dev/rnbd/state)" = closed ]; do
	i=$((i + 1)); [ $i -lt 100 ] || die "state stays $(cat /sys/block/$dev/rnbd/state)"; sleep 0.1
done
if dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
	die "IO succeeded without a server"
fi
expect_eq "unmap" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)" OK
rmmod rnbd_trs_server || die "rmmod rnbd_trs_server"
