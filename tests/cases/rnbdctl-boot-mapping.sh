# SPDX-License-Identifier: GPL-2.0-only
# desc: rnbdctl map-all / unmap-all over an rnbdtab (the boot mapping of
#       rnbdmap.service): a tab with two good entries of one session, a
#       duplicate, a noauto entry, a server nobody listens for, a device
#       the server lacks and a malformed line: map-all maps the good ones,
#       prints every line's result, exits 2; a second run changes nothing
#       (same devices, same numbers, no map written); nofail; unmap-all
#       refuses a device mounted without _netdev in the (private) fstab,
#       then unmounts a _netdev ext4 and unmaps, leaving a device mapped by
#       hand alone; mapped again, the file system's data is intact;
#       unmap-all --all; loss_timeout=S (the session's loss_timeout_sec; 0
#       refused); map-all --retry: silent and 0 with nothing new, prints
#       only what it maps
# boot: shared
# timeout: 300
. "$REPO/tests/lib/rnbdctl.sh"
A=$RXE_ADDR
nb1=$(nullb_create nullb1 32)
nb2=$(nullb_create nullb2 16)
nb3=$(nullb_create nullb3 8)
rnbd_setup
kmsg "rnbdctl-boot-mapping: start"
maps_logged() {	# the kernel's "mapped" lines since the start of the case
	dmesg | sed -n '/rnbd-test: rnbdctl-boot-mapping: start/,$p' | grep -c ': mapped ' || true
}

tab=/tmp/rnbdtab
cat >"$tab" <<EOF
# SESSION   PATHS          DEVICE_PATH          MODE  OPTIONS
boot1       ip:$A          $nb1                 rw    defaults
boot1       -              $nb2                 ro    loss_timeout=45
boot1       $A             $nb1                 rw          # a duplicate

boot2       ip:$A          $nb3                 rw    noauto
bad         ip:$A          $nb3                 rw    port=4444
boot1       -              /dev/no-such-disk    ro    defaults
boot1       -              $nb3                 ro    frob
boot1       $nb3
boot1       -              $nb3                 ro    loss_timeout=0
EOF

# ---- map-all: the good ones mapped, the bad ones reported -----------------
ctl 2 map-all --tab "$tab"
cat /tmp/ctl.out /tmp/ctl.err
dev1=$(sed -n "s|^$tab:2: boot1 $nb1: mapped as \(rnbd[0-9]*\)$|\1|p" /tmp/ctl.out)
dev2=$(sed -n "s|^$tab:3: boot1 $nb2: mapped as \(rnbd[0-9]*\)$|\1|p" /tmp/ctl.out)
if [ -z "$dev1" ] || [ -z "$dev2" ]; then
	die "map-all did not report both good lines as mapped"
fi
out_has "$tab:4: boot1 $nb1: duplicate of line 2, skipped"
out_has "$tab:6: boot2 $nb3: skipped (noauto)"
err_has "$tab:7: bad $nb3: server unreachable (ip:$A): nobody listens there"
err_has "$tab:8: boot1 /dev/no-such-disk: no such device on the server"
err_has "$tab:9: boot1 $nb3: bad line: unknown option 'frob'"
err_has "$tab:10: boot1: bad line: want SESSION PATHS DEVICE_PATH"
err_has "$tab:11: boot1 $nb3: bad line: option 'loss_timeout=0': want whole seconds, 1 to 86400"
expect_eq "lines reported" "$(cat /tmp/ctl.out /tmp/ctl.err | grep -c "^\(rnbdctl: \)\?$tab:")" 9
mapped=$(rnbd_devs)
expect_eq "devices" "$mapped" "$(printf '%s\n' "$dev1 boot1 $nb1 rw" "$dev2 boot1 $nb2 ro" | sort)"
expect_eq "sessions" "$(ls /sys/class/rtrs-client)" boot1
expect_eq "$dev2 read-only" "$(cat "/sys/block/$dev2/ro")" 1
expect_eq "loss_timeout=45" "$(cat /sys/class/rtrs-client/boot1/loss_timeout_sec)" 45
expect_eq "maps in the kernel log" "$(maps_logged)" 2

# ---- a second run changes nothing -----------------------------------------
ctl 2 --json map-all --tab "$tab"
json 'd["version"]' 1 \
	'[(r["line"], r["result"], r["devname"]) for r in d["results"] if r["result"] != "failed"]' \
	"[(2, 'unchanged', '$dev1'), (3, 'unchanged', '$dev2'), (4, 'duplicate', None), (6, 'skipped', None)]" \
	'[(r["line"], r["errno"], r["exit_code"]) for r in d["results"] if r["result"] == "failed"]' \
	"[(7, 'ECONNREFUSED', 5), (8, 'ENOENT', 6), (9, None, 8), (10, None, 8), (11, None, 8)]"
expect_eq "devices after the second run" "$(rnbd_devs)" "$mapped"
expect_eq "sessions after the second run" "$(ls /sys/class/rtrs-client)" boot1
expect_eq "maps in the kernel log after the second run" "$(maps_logged)" 2
# --retry (rnbdmap-retry.timer): nothing new, so nothing said, and 0
# although lines 7 to 11 fail
ctl 0 map-all --retry --tab "$tab"
expect_eq "map-all --retry, nothing to map" "$(cat /tmp/ctl.out /tmp/ctl.err)" ""
expect_eq "maps in the kernel log after --retry" "$(maps_logged)" 2

# nofail: a failure is printed but does not fail map-all
printf 'boot1 - %s rw\nboot1 - /dev/no-such-disk rw nofail\n' "$nb1" >/tmp/rnbdtab.nofail
ctl 0 map-all --tab /tmp/rnbdtab.nofail
out_has "/tmp/rnbdtab.nofail:1: boot1 $nb1: already mapped as $dev1"
err_has "/tmp/rnbdtab.nofail:2: boot1 /dev/no-such-disk: no such device on the server: /dev/no-such-disk"
err_has "(nofail)"

# ---- unmap-all and a mounted file system -----------------------------------
# a device mapped by hand, not in the tab: unmap-all leaves it
ctl 0 map -s hand -p "ip:$A" "$nb3"
dev3=$(basename "$(cat /tmp/ctl.out)")
mkfs.ext4 -q -F -L bootfs "/dev/$dev1" || die "mkfs.ext4"
mkdir -p /mnt/boot1
mount "/dev/$dev1" /mnt/boot1 || die "mount"
head -c 3000000 /dev/urandom >/mnt/boot1/data
sum=$(sha256sum </mnt/boot1/data)
uuid=$(blkid -s UUID -o value "/dev/$dev1")
[ -n "$uuid" ] || die "no UUID on /dev/$dev1"
printf '# a private fstab\nUUID=%s /mnt/boot1 ext4 defaults 0 2\n' "$uuid" >/tmp/fstab.plain
printf 'UUID=%s /mnt/boot1 ext4 _netdev,nofail 0 2\n' "$uuid" >/tmp/fstab.netdev
ctl 2 unmap-all --tab "$tab" --fstab /tmp/fstab.plain
err_has "$tab:2: boot1 $nb1: $dev1 is mounted on /mnt/boot1 and its line in /tmp/fstab.plain has no _netdev: not unmounting it; unmount it first"
out_has "$tab:3: boot1 $nb2: unmapped $dev2"
grep -q ' /mnt/boot1 ' /proc/mounts || die "/mnt/boot1 unmounted without _netdev"
expect_eq "devices after the refusal" "$(rnbd_devs)" \
	"$(printf '%s\n' "$dev1 boot1 $nb1 rw" "$dev3 hand $nb3 rw" | sort)"
ctl 0 --json unmap-all --tab "$tab" --fstab /tmp/fstab.netdev
err_has "$dev1: unmounted /mnt/boot1 (_netdev)"
json '[(r["line"], r["result"], r["devname"]) for r in d["results"]]' \
	"[(8, 'not mapped', None), (7, 'not mapped', None), (6, 'not mapped', None), (3, 'not mapped', None), (2, 'unmapped', '$dev1')]"
! grep -q ' /mnt/boot1 ' /proc/mounts || die "/mnt/boot1 still mounted"
expect_eq "devices after unmap-all" "$(rnbd_devs)" "$dev3 hand $nb3 rw"
expect_eq "sessions after unmap-all" "$(ls /sys/class/rtrs-client)" hand

# mapped again (device numbers may differ) by --retry, which says only
# that: the data is intact, the new session has its loss timeout
ctl 0 map-all --retry --tab "$tab"
dev1=$(sed -n "s|^$tab:2: boot1 $nb1: mapped as \(rnbd[0-9]*\)$|\1|p" /tmp/ctl.out)
[ -n "$dev1" ] || die "$nb1 not mapped again"
expect_eq "map-all --retry: lines" "$(sed "s/rnbd[0-9]*$/rnbdN/" /tmp/ctl.out; cat /tmp/ctl.err)" \
	"$tab:2: boot1 $nb1: mapped as rnbdN
$tab:3: boot1 $nb2: mapped as rnbdN"
expect_eq "loss_timeout=45 again" "$(cat /sys/class/rtrs-client/boot1/loss_timeout_sec)" 45
mount "/dev/$dev1" /mnt/boot1 || die "mount again"
expect_eq "data after unmap-all and map-all" "$(sha256sum </mnt/boot1/data)" "$sum"
umount /mnt/boot1

# --all: every rnbd device, the one mapped by hand too
all=$(rnbd_devs | awk '{ print $1 }' | sort | xargs)
expect_eq "devices before unmap-all --all" "$(echo "$all" | wc -w)" 3
ctl 0 --json unmap-all --all
json '" ".join(sorted(r["devname"] for r in d["results"] if r["result"] == "unmapped"))' "$all"
expect_eq "devices after unmap-all --all" "$(rnbd_devs)" ""
