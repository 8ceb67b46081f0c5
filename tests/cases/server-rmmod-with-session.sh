# SPDX-License-Identifier: GPL-2.0-only
# desc: rmmod rnbd_server with a session open disconnects it cleanly: the
#       client path goes "reconnecting", the device stays (its IO held),
#       and a normal unmap closes the reconnecting session promptly
# boot: shared
# timeout: 200
rnbd_setup
nb=$(nullb_create nullb1 16)
dev=$(map_dev srvgone "$nb")
timeout 60 rmmod rnbd_server || die "rmmod rnbd_server"
i=0
until [ "$(cat /sys/class/rtrs-client/srvgone/paths/*/state)" = reconnecting ]; do
	i=$((i + 1)); [ $i -lt 100 ] || die "path state stays $(cat /sys/class/rtrs-client/srvgone/paths/*/state)"; sleep 0.1
done
expect_eq "device state" "$(cat /sys/block/$dev/rnbd/state)" open
t0=$(date +%s)
expect_eq "unmap" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)" OK
t1=$(date +%s)
[ $((t1 - t0)) -lt $((15 * ${RNBD_TIMEOUT_SCALE:-1})) ] || die "unmap took $((t1 - t0)) s"
[ ! -e /sys/class/rtrs-client/srvgone ] || die "session srvgone left"
rmmod rnbd_trs_server || die "rmmod rnbd_trs_server"
