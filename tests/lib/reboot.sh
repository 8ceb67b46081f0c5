# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The client's steps of case client-reboot-systemd, in a guest booted with
# systemd as PID 1 (guest-run --init systemd) on a root whose upper layer
# is a disk (--upper), with rnbd-dkms and rnbd-utils installed by dpkg.
# reboot_setup is what an administrator does on the first boot;
# reboot_check runs on the second boot, where nothing is done by hand.
# Source tests/lib/guest.sh first.

REBOOT_SESS=client1
REBOOT_SERVER=10.10.0.1
REBOOT_ADDR=10.10.0.2/24
REBOOT_MNT=/mnt/x
REBOOT_UNIT=mnt-x.mount
# the storage link: its unit, written by reboot_setup, and what it does
REBOOT_NET=rnbd-storage-link.service

# reboot_boot_done: systemd has finished booting, with no failed unit.
reboot_boot_done() {
	expect_eq "PID 1" "$(cat /proc/1/comm)" systemd
	st=$(systemctl is-system-running --wait)
	if [ "$st" != running ]; then
		systemctl --failed --no-pager --full
		die "systemctl is-system-running: $st"
	fi
	log "systemd: $st; $(systemd-analyze time 2>/dev/null | head -1)"
}

# reboot_active UNIT...: each unit is active.
reboot_active() {
	for u in "$@"; do
		expect_eq "systemctl is-active $u" "$(systemctl is-active "$u")" active
	done
}

# reboot_witness: a unit of this boot only (in /run) whose stop runs at
# shutdown between rnbdmap.service's stop and the storage link's (at stop
# the order of start is reversed: Before=rnbdmap.service, After= the link)
# and writes to the kernel log, which the host reads on the console:
#   rnbd-test: shutdown: rnbdmap.service STATE, rnbd devices N, MNT mounts M, rxe0 yes|no
# No device left while rxe0 is still there: the device was unmounted and
# unmapped before the storage link went down.
reboot_witness() {
	cat >/run/systemd/system/rnbd-test-witness.service <<EOF
[Unit]
Description=rnbd test: what is left once rnbdmap.service has stopped
Before=rnbdmap.service
After=$REBOOT_NET

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
ExecStop=/bin/sh -c 'echo "rnbd-test: shutdown: rnbdmap.service \$(systemctl show -P ActiveState rnbdmap.service), rnbd devices \$(ls -d /sys/block/rnbd* 2>/dev/null | wc -l), $REBOOT_MNT mounts \$(grep -c " $REBOOT_MNT " /proc/mounts), rxe0 \$(rdma link show rxe0/1 >/dev/null 2>&1 && echo yes || echo no)" >/dev/kmsg'
EOF
	systemctl daemon-reload
	systemctl start rnbd-test-witness.service
	reboot_active rnbd-test-witness.service
}

# reboot_mapped: the one rnbd device of session REBOOT_SESS.
reboot_mapped() {
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/session" ] || continue
		[ "$(cat "$d/rnbd/session")" = "$REBOOT_SESS" ] || continue
		echo "${d##*/}"
		return 0
	done
	return 1
}

# reboot_wait_link LINK TARGET: udev made LINK, leading to /dev/TARGET.
reboot_wait_link() {
	i=0
	while [ "$(readlink -f "$1")" != "/dev/$2" ]; do
		i=$((i + 1))
		[ $i -lt 300 ] || die "$1 leads to '$(readlink -f "$1")', not /dev/$2"
		sleep 0.1
	done
}

# reboot_setup DEVICE_PATH: the first boot.  The storage link unit
# (eth0's address and its rxe device, before network-online.target), an
# rnbdtab entry for DEVICE_PATH of the server, rnbdmap.service enabled
# and restarted, ext4 made on the udev name of the device, an fstab line
# by UUID with _netdev, the mount, a file; UUID and the file's sha256 go
# to /sync for the second boot and the server.  Then /job/shutdown asks
# for a reboot.
reboot_setup() {
	reboot_boot_done
	# the postinst enabled it; it ran at this boot with an empty table
	expect_eq "rnbdmap.service enabled by the postinst" \
		"$(systemctl is-enabled rnbdmap.service)" enabled
	reboot_active rnbdmap.service
	[ -z "$(reboot_mapped)" ] || die "a device is mapped before the table has an entry"

	kmsg "reboot_setup: the storage link"
	cat >"/etc/systemd/system/$REBOOT_NET" <<EOF
[Unit]
Description=rnbd storage link: eth0 $REBOOT_ADDR and soft-RoCE rxe0 on it
BindsTo=sys-subsystem-net-devices-eth0.device
After=sys-subsystem-net-devices-eth0.device
Before=network-online.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=ip link set eth0 up
ExecStart=ip addr replace $REBOOT_ADDR dev eth0
ExecStart=rdma link add rxe0 type rxe netdev eth0
ExecStart=sh -c 'i=0; until rdma link show rxe0/1 | grep -q "state ACTIVE"; do i=\$((i + 1)); [ \$i -lt 100 ] || exit 1; sleep 0.1; done'
ExecStop=rdma link delete rxe0

[Install]
WantedBy=network-online.target
EOF
	# The test bed's guests are slow: at the next boot, udev's coldplug
	# (drm, ata, floppy...) may take more than systemd's 90 s before it
	# gets to eth0 (a 6.12 client, beside its server on two host cores,
	# timed out waiting for it and failed the link and rnbdmap.service)
	mkdir -p /etc/systemd/system/sys-subsystem-net-devices-eth0.device.d
	printf '[Unit]\nJobRunningTimeoutSec=%s\n' $((300 * ${RNBD_TIMEOUT_SCALE:-1})) \
		>/etc/systemd/system/sys-subsystem-net-devices-eth0.device.d/rnbd-test.conf
	systemctl enable "$REBOOT_NET" || die "systemctl enable $REBOOT_NET"
	systemctl start "$REBOOT_NET" || die "systemctl start $REBOOT_NET"
	reboot_active "$REBOOT_NET"

	kmsg "reboot_setup: rnbdtab and rnbdmap.service"
	# rnbdmap-retry.timer (every 30 s) maps a new entry too: it would race
	# the restart below (on 6.12 it mapped first, and rnbdmap.service said
	# "already mapped"); it is started again once the service has mapped
	systemctl stop rnbdmap-retry.timer rnbdmap-retry.service ||
		die "systemctl stop rnbdmap-retry.timer"
	echo "$REBOOT_SESS  ip:$REBOOT_SERVER  $1  rw  defaults" >>/etc/rnbd/rnbdtab
	systemctl enable rnbdmap.service || die "systemctl enable rnbdmap.service"
	systemctl restart rnbdmap.service ||
		{ journalctl -b -u rnbdmap.service --no-pager; die "systemctl restart rnbdmap.service"; }
	reboot_active rnbdmap.service
	dev=$(reboot_mapped) || die "rnbdmap.service mapped nothing"
	journalctl -b -u rnbdmap.service --no-pager | grep -q ": $REBOOT_SESS $1: mapped as $dev\$" ||
		{ journalctl -b -u rnbdmap.service --no-pager; die "rnbdmap.service's journal has no 'mapped as $dev'"; }
	systemctl start rnbdmap-retry.timer || die "systemctl start rnbdmap-retry.timer"
	# the udev name of 60-rnbd.rules
	link=/dev/rnbd/$REBOOT_SESS/${1#/}
	reboot_wait_link "$link" "$dev"

	kmsg "reboot_setup: ext4 on $link"
	mkfs.ext4 -q -F "$link" || die "mkfs.ext4 $link"
	uuid=$(blkid -p -s UUID -o value "$link")
	[ -n "$uuid" ] || die "no UUID on $link"
	# udev's watch probes the device again when mkfs closes it
	reboot_wait_link "/dev/disk/by-uuid/$uuid" "$dev"
	mkdir -p "$REBOOT_MNT"
	echo "UUID=$uuid $REBOOT_MNT ext4 _netdev 0 0" >>/etc/fstab
	systemctl daemon-reload
	mount "$REBOOT_MNT" || die "mount $REBOOT_MNT"
	reboot_active "$REBOOT_UNIT"
	expect_eq "$REBOOT_MNT source" "$(findmnt -n -o SOURCE "$REBOOT_MNT")" "/dev/$dev"
	head -c $((8 * 1048576)) /dev/urandom >"$REBOOT_MNT/data"
	sync
	sum=$(sha256sum "$REBOOT_MNT/data" | cut -d' ' -f1)
	echo "$uuid" >/sync/uuid
	echo "$sum" >/sync/data.sha256
	log "$link: $dev, UUID $uuid, $REBOOT_MNT/data sha256 $sum"
	reboot_witness
	echo reboot >/job/shutdown
}

# reboot_check DEVICE_PATH UUID SHA256: the second boot.  The link unit,
# rnbdmap.service (which mapped DEVICE_PATH at boot) and the mount by
# UUID are active, in that order; the file has its sha256; the journal
# of the first boot says that its shutdown unmapped the device.
reboot_check() {
	reboot_boot_done
	reboot_active "$REBOOT_NET" rnbdmap.service network-online.target \
		remote-fs.target "$REBOOT_UNIT"
	dev=$(reboot_mapped) || die "no device of $REBOOT_SESS mapped at boot"
	expect_eq "$dev mapping_path" "$(cat "/sys/block/$dev/rnbd/mapping_path")" "$1"
	journalctl -b -u rnbdmap.service --no-pager | grep -q ": $REBOOT_SESS $1: mapped as $dev\$" ||
		{ journalctl -b -u rnbdmap.service --no-pager; die "rnbdmap.service did not map $dev at this boot"; }
	expect_eq "$REBOOT_MNT source" "$(findmnt -n -o SOURCE "$REBOOT_MNT")" "/dev/$dev"
	expect_eq "$REBOOT_MNT type" "$(findmnt -n -o FSTYPE "$REBOOT_MNT")" ext4
	expect_eq "UUID of /dev/$dev" "$(blkid -p -s UUID -o value "/dev/$dev")" "$2"
	# the mount is fstab's line by UUID (systemd-fstab-generator's unit)
	expect_eq "$REBOOT_UNIT made from" "$(systemctl show -P SourcePath "$REBOOT_UNIT")" /etc/fstab
	expect_eq "fstab's source of $REBOOT_MNT" "$(findmnt --fstab -n -o SOURCE "$REBOOT_MNT")" "UUID=$2"
	reboot_wait_link "/dev/disk/by-uuid/$2" "$dev"
	expect_eq "$REBOOT_MNT/data sha256" "$(sha256sum "$REBOOT_MNT/data" | cut -d' ' -f1)" "$3"
	# started in this order: link, map, mount
	t_net=$(systemctl show -P ActiveEnterTimestampMonotonic "$REBOOT_NET")
	t_map=$(systemctl show -P ActiveEnterTimestampMonotonic rnbdmap.service)
	t_mnt=$(systemctl show -P ActiveEnterTimestampMonotonic "$REBOOT_UNIT")
	log "active at (us): $REBOOT_NET $t_net, rnbdmap.service $t_map, $REBOOT_UNIT $t_mnt"
	if [ "$t_net" = 0 ] || [ "$t_net" -ge "$t_map" ] || [ "$t_map" -ge "$t_mnt" ]; then
		die "not started in order link < rnbdmap < mount: $t_net $t_map $t_mnt"
	fi
	# the first boot's shutdown: the mount went, then rnbdmap.service's
	# stop unmapped the device
	prev=$(journalctl -b -1 -u rnbdmap.service --no-pager)
	echo "$prev" | grep -q ": $REBOOT_SESS $1: unmapped rnbd[0-9]*\$" ||
		{ echo "$prev"; die "the first boot's journal: rnbdmap.service's stop did not unmap"; }
	journalctl -b -1 --no-pager | grep -q "Unmounted .*$REBOOT_MNT" ||
		die "the first boot's journal: no 'Unmounted $REBOOT_MNT'"
	reboot_witness
}
