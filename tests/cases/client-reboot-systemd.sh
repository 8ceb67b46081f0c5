# SPDX-License-Identifier: GPL-2.0-only
# desc: a client reboots and its rnbd mount comes back by UUID under
#       systemd: rnbd-dkms and rnbd-utils installed by dpkg -i (in an
#       overlay of the host's root, as pkg-deb-dkms does), then a client
#       guest boots systemd as PID 1 on that root with its upper layer on a
#       disk image: a storage link unit (eth0, rxe0), an rnbdtab entry,
#       rnbdmap.service, ext4 on the device, an fstab line UUID=... _netdev,
#       a file; it reboots (a second boot of the same disk) and systemd
#       alone maps and mounts it again: units active in order, the file's
#       sha256, the first boot's journal shows the unmap at shutdown.  At
#       each shutdown a unit ordered after rnbdmap.service's stop finds no
#       device and no mount left; the server guest (up across both boots)
#       saw each session closed by its client, never lost, and finds the
#       file system clean with the file in it.  Long (two systemd boots
#       under TCG): runs only with RNBD_LONG=1.
# boot: host
# long: yes
# timeout: 3600
. "$REPO/tests/lib/host.sh"

kver=${KVER:-$("$REPO/scripts/kver")}
deb=$CASE_RESULTS/deb
sync=$(mk_dir sync)
jobs=$(mk_dir jobs)
img=$CASE_RESULTS/client-root.img
p=$((20000 + RANDOM % 20000))

t=$(date +%s)
"$REPO/packaging/build-deb" --out "$deb"
ver=$(dpkg-deb -f "$deb"/rnbd-dkms_*_all.deb Version)
echo "make deb: $(($(date +%s) - t)) s, version $ver, kernel $kver"

# The server: the tree's modules (nothing of it is packaged), a memory
# backed null_blk that outlives the client's boots.  After each boot of
# the client it checks that the client closed its session (an RDMA
# disconnect, not a lost peer) and left no session; after the last, that
# the file system is clean and holds the client's file.
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.10.0.1/24
load_rnbd_server
nb=$(nullb_create nullb0 128)
echo "$nb" >/sync/server-dev
touch /sync/server-ready
seen=0
for b in 1 2; do
	wait_sync "/sync/boot$b-done" 1500
	expect_eq "sessions after client boot $b" "$(ls /sys/class/rtrs-server | wc -l)" 0
	# the kernel log of this boot of the client
	dmesg >/tmp/dmesg.all
	tail -n +$((seen + 1)) /tmp/dmesg.all >/tmp/dmesg.boot
	seen=$(wc -l </tmp/dmesg.all)
	grep -q 'rnbd_server: session .*: opened /dev/nullb0 rw ' /tmp/dmesg.boot ||
		die "client boot $b opened no device"
	# It ended with the device closed by the client (its unmap: a CLOSE
	# message), then its path closed by its disconnect; not by a lost
	# client (a heartbeat timeout: a client gone with the device still
	# mapped).  A loaded host can starve a TCG guest past the heartbeat
	# timeout during the boot; the client then reconnects, which is told
	# but is no failure.
	expect_eq "client boot $b: the last device event" \
		"$(grep -oE 'rnbd_server: session .*: (opened|closed device) ' /tmp/dmesg.boot | tail -1 | awk '{ print $(NF - 1), $NF }')" \
		"closed device"
	expect_eq "client boot $b: the last path close" \
		"$(grep -o 'rnbd_trs_server: .*: closing: .*' /tmp/dmesg.boot | tail -1 | sed 's/.*closing: //')" \
		disconnected
	n=$(grep -c 'rnbd_server: session .*: connected$' /tmp/dmesg.boot || true)
	[ "$n" = 1 ] || log "client boot $b: $n sessions (reconnects: $(grep -o 'closing: .*' /tmp/dmesg.boot | tr '\n' ';'))"
	log "after client boot $b: no session; the device closed by the client, then its disconnect"
	touch "/sync/boot$b-checked"
done
dumpe2fs -h "$nb" 2>/dev/null | grep -q '^Filesystem state: *clean$' ||
	{ dumpe2fs -h "$nb"; die "the file system is not clean"; }
! dumpe2fs -h "$nb" 2>/dev/null | grep -q 'needs_recovery' || die "the journal needs recovery"
# not /tmp: the guest's root shows the host's files below its own (a
# host's /tmp/x, a file, once failed the mkdir)
e2fsck -fn "$nb" >/run/crs-fsck.out 2>&1 || { cat /run/crs-fsck.out; die "e2fsck -fn $nb"; }
expect_eq "UUID" "$(blkid -p -s UUID -o value "$nb")" "$(cat /sync/uuid)"
mkdir -p /run/crs-mnt
mount -o ro "$nb" /run/crs-mnt || die "mount $nb"
expect_eq "data sha256 on the server" "$(sha256sum /run/crs-mnt/data | cut -d' ' -f1)" "$(cat /sync/data.sha256)"
umount /run/crs-mnt
log "$nb: ext4 clean, UUID $(cat /sync/uuid), data sha256 $(cat /sync/data.sha256)"
unload_rnbd
nullb_destroy_all
G

# The client's two boots.
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
. "$REPO/tests/lib/reboot.sh"
case "$1" in
setup) reboot_setup "$2" ;;
check) reboot_check "$2" "$3" "$4" ;;
*) die "client.sh: $1?" ;;
esac
G

# In the overlay: dpkg -i, then both boots on that root; the upper layer
# of the guest's own root overlay is the disk image, the same for both.
cat >"$sync/../overlay.sh" <<'O'
. "$REPO/tests/lib/guest.sh"
. "$REPO/tests/lib/pkg.sh"
deb=$1 ver=$2 kver=$3 net=$4 sync=$5 jobs=$6 img=$7
if [ "${KERNEL:-}" = debug ]; then
	# the debug kernel's modules, where the postinst finds every kernel
	ln -s "$(KVER=$kver "$REPO/scripts/debug-kernel" dir)/root/lib/modules/$kver" "/lib/modules/$kver"
fi
pkg_absent "$kver"
pkg_install "$deb"
pkg_installed "$ver" "$kver"
wait_sync "$sync/server-ready" 600
dev=$(cat "$sync/server-dev")

# boot BOOT ARGS...: one boot of the client; its log, and the line of the
# witness unit at its shutdown: rnbdmap.service stopped, nothing left.
boot() {
	b=$1
	shift
	t=$(date +%s)
	rc=0
	"$REPO/scripts/guest-run" --quiet --timeout 1200 --init systemd --upper "$img" \
		--share "$sync" --net "$net" --job "$jobs/boot$b" "$sync/../client.sh" "$@" || rc=$?
	echo "--- client boot $b ($(($(date +%s) - t)) s)"
	cat "$jobs/boot$b/test.log"
	[ "$rc" = 0 ] || die "client boot $b: guest status $rc"
	w=$(tr -d '\r' <"$jobs/boot$b/console.log" | grep -a 'rnbd-test: shutdown: ' |
		sed 's/.*rnbd-test: //')
	log "boot $b: $w"
	expect_eq "boot $b: at shutdown, after rnbdmap.service's stop" "$w" \
		"shutdown: rnbdmap.service inactive, rnbd devices 0, /mnt/x mounts 0, rxe0 yes"
	touch "$sync/boot$b-done"
	wait_sync "$sync/boot$b-checked" 300
}
boot 1 setup "$dev"
boot 2 check "$dev" "$(cat "$sync/uuid")" "$(cat "$sync/data.sha256")"
O

truncate -s 2G "$img"
mkfs.ext4 -q -F "$img"
start_guest server --timeout 3000 --share "$sync" --net "$(pair_net $p server)" "$sync/../server.sh"
rc=0
"$REPO/tests/lib/overlay-root" "$CASE_RESULTS/overlay" --bind "$CASE_RESULTS" -- \
	/bin/sh "$sync/../overlay.sh" "$deb" "$ver" "$kver" "$(pair_net $p client)" \
	"$sync" "$jobs" "$img" || rc=$?
if [ "$rc" != 0 ]; then
	kill_guest server
	guest_log server
	die "client side failed (status $rc)"
fi
src=0
wait_guest server || src=$?
guest_log server
[ "$src" = 0 ] || die "server guest status $src"
rm -f "$img"
echo "total: $(($(date +%s) - t)) s"
