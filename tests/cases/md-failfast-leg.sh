# SPDX-License-Identifier: GPL-2.0-only
# desc: an md raid1 leg (mdadm --failfast) whose session has no path left
#       (its one path disconnected while idle, loss_timeout_sec 120): md's
#       new writes fail on that leg at once (REQ_FAILFAST_TRANSPORT is not
#       held for the reconnect), md takes the leg out and the mirror's
#       writes go on through the other leg within 10 s, without an error
#       and long before the loss timeout; once the path is back the device
#       sends a change uevent with RNBD_EVENT=reconnected, rnbd-md re-adds
#       the leg and the bitmap brings it in sync: both legs hold what was
#       written, the part written while the leg was out included
# boot: shared
# timeout: 300
. "$REPO/tests/lib/rnbdctl.sh"
MD=md101
S=${RNBD_TIMEOUT_SCALE:-1}
mon=
trap 'mdadm --stop /dev/$MD >/dev/null 2>&1 || true; [ -z "$mon" ] || kill $mon 2>/dev/null || true' EXIT
md_mirror "$MD" ff-a ff-b 120
member() {	# DEV: its md member state
	cat "/sys/block/$MD/md/dev-$1/state"
}
# leg DEV: sha256 of the 8 MiB of DEV past its md superblock
leg() {
	dd if="/dev/$1" bs=1M skip="$(($(cat "/sys/block/$MD/md/dev-$1/offset") * 512))" \
		count=8M iflag=direct,skip_bytes,count_bytes 2>/dev/null | sha256sum
}
dd if=/dev/urandom of=/tmp/ff-data bs=1M count=8 2>/dev/null
dd if=/tmp/ff-data of="/dev/$MD" bs=1M count=4 oflag=direct 2>/dev/null || die "write $MD"

# ---- the leg's only path goes down: md's writes to it fail at once --------
# the kernel's uevents of block devices from here on (no udevd here)
udevadm monitor --kernel --property --subsystem-match=block \
	</dev/null >/tmp/ff-uevents 2>&1 &
mon=$!
p=$(echo /sys/class/rtrs-client/ff-a/paths/*)
echo 1 >"$p/disconnect" || die "disconnect ff-a's path"
expect_eq "ff-a's path" "$(path_state ff-a)" disconnected
t0=$(date +%s%N)
timeout $((60 * S)) dd if=/tmp/ff-data of="/dev/$MD" bs=1M skip=4 seek=4 count=4 \
	oflag=direct 2>/tmp/ff-dd.err || die "write with a leg gone: $(cat /tmp/ff-dd.err)"
ms=$((($(date +%s%N) - t0) / 1000000))
log "a 4 MiB write with ff-a's path down: $ms ms; $d1: $(member "$d1")"
[ "$ms" -le $((10000 * S)) ] || die "the write took $ms ms with a failfast leg gone"
case ",$(member "$d1")," in *,faulty,*) ;; *) die "$d1 not faulty: $(member "$d1")" ;; esac
case ",$(member "$d2")," in *,in_sync,*) ;; *) die "$d2 not in sync: $(member "$d2")" ;; esac
expect_eq "the mirror reads back" \
	"$(dd if="/dev/$MD" bs=1M count=8 iflag=direct 2>/dev/null | sha256sum)" \
	"$(sha256sum </tmp/ff-data)"

# ---- the path back: the uevent, then rnbd-md takes the leg back ------------
echo 1 >"$p/reconnect" || die "reconnect ff-a's path"
wait_path_state ff-a connected 30
i=0
until grep -q "^RNBD_EVENT=reconnected" /tmp/ff-uevents; do
	i=$((i + 1))
	[ $i -lt $((100 * S)) ] || die "no reconnected uevent: $(cat /tmp/ff-uevents)"
	sleep 0.1
done
sleep 0.5
kill $mon
wait $mon 2>/dev/null || true
mon=
# the event is the leg's own, and only the leg's
awk -v d="DEVNAME=/dev/$d1" -v n="DEVNAME=$d1" '
	/^$/ { if (ev) { if (dn) ok++; else bad++ } ev = dn = 0 }
	/^RNBD_EVENT=reconnected$/ { ev = 1 } $0 == d || $0 == n { dn = 1 }
	END { if (ev) { if (dn) ok++; else bad++ } exit !(ok == 1 && !bad) }' /tmp/ff-uevents ||
	die "not one reconnected uevent of $d1: $(cat /tmp/ff-uevents)"
"$REPO/tools/udev/rnbd-md" re-add "$d1" || die "rnbd-md re-add $d1: exit $?"
log "rnbd-md: $(cat /tmp/md-journal 2>/dev/null)"
grep -q "^-t rnbd-md -- $d1 (session ff-a, $nb1): was faulty in $MD (faulty[a-z_,]*): removed and re-added$" \
	/tmp/md-journal || die "journal: $(cat /tmp/md-journal 2>/dev/null)"
i=0
until case ",$(member "$d1")," in *,in_sync,*) true ;; *) false ;; esac &&
	[ "$(cat "/sys/block/$MD/md/sync_action")" = idle ]; do
	i=$((i + 1))
	[ $i -lt $((600 * S)) ] || die "$d1 not in sync: $(member "$d1"), $(cat /proc/mdstat)"
	sleep 0.1
done
want=$(sha256sum </tmp/ff-data)
expect_eq "leg $d2" "$(leg "$d2")" "$want"
expect_eq "leg $d1, re-added" "$(leg "$d1")" "$want"

mdadm --stop "/dev/$MD" >/dev/null 2>&1 || die "mdadm --stop"
trap - EXIT
unmap_dev "$d1"
unmap_dev "$d2"
