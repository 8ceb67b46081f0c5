# SPDX-License-Identifier: GPL-2.0-only
# desc: rnbd-md (65-rnbd-md.rules' helper) with the real md and mdadm: a
#       raid1 with an internal bitmap over two rnbd devices (--failfast);
#       a leg failed, written past, then rnbd-md re-add: removed and
#       re-added, the bitmap resyncs it, both legs hold the same data;
#       a leg failed and removed: re-added by the UUID of its superblock;
#       an in-sync leg: nothing; rnbdctl list and show --json give the
#       MD column and fields (md0:in_sync...).  No udevd in the guest:
#       the helper is run as the rule runs it
#       (RNBD_LONG=1 only: mirror-two-servers puts legs back with real md,
#       udev and servers, udev-md-helper runs every branch of the helper)
# boot: shared
# long: yes
# timeout: 300
. "$REPO/tests/lib/rnbdctl.sh"
MD=md100
trap 'mdadm --stop /dev/$MD >/dev/null 2>&1 || true' EXIT
md_mirror "$MD" md-a md-b 5

member() {	# DEV: its md member state
	cat "/sys/block/$MD/md/dev-$1/state"
}
journal() {	# the helper's journal lines ("" for none)
	if [ -e /tmp/md-journal ]; then cat /tmp/md-journal; fi
}
# rejoin DEV: runs rnbd-md re-add DEV; its journal lines in /tmp/md-journal
rejoin() {
	rm -f /tmp/md-journal
	"$REPO/tools/udev/rnbd-md" re-add "$1" || die "rnbd-md re-add $1: exit $?"
	log "rnbd-md re-add $1: $(journal)"
}
# in_sync DEV: wait (60 s at most) until DEV is in sync and md idle
in_sync() {
	local i=0
	until case ",$(member "$1")," in *,in_sync,*) true ;; *) false ;; esac &&
		[ "$(cat "/sys/block/$MD/md/sync_action")" = idle ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || die "$1 not in sync 60 s later: $(member "$1"), $(cat /proc/mdstat)"
		sleep 0.1
	done
}
# same_data: both legs hold the same data past their superblocks
same_data() {
	local o1 o2 s
	o1=$(cat "/sys/block/$MD/md/dev-$d1/offset")
	o2=$(cat "/sys/block/$MD/md/dev-$d2/offset")
	s=$(cat "/sys/block/$MD/md/dev-$d1/size")
	# offset in sectors, size in KiB; 1 MiB reads (512-byte ones take
	# minutes under TCG)
	expect_eq "legs' data" \
		"$(dd if="/dev/$d1" bs=1M skip="$((o1 * 512))" count="$((s * 1024))" \
			iflag=direct,skip_bytes,count_bytes 2>/dev/null | sha256sum)" \
		"$(dd if="/dev/$d2" bs=1M skip="$((o2 * 512))" count="$((s * 1024))" \
			iflag=direct,skip_bytes,count_bytes 2>/dev/null | sha256sum)"
}

# ---- list and show: both legs in sync --------------------------------------
ctl 0 list
expect_eq "list, MD" "$(awk -v a="$d1" -v b="$d2" '$1 == a || $1 == b { print $1, $NF }' /tmp/ctl.out |
	sed 's/,failfast$//')" "$d1 $MD:in_sync
$d2 $MD:in_sync"
ctl 0 show --json
json "sorted((i['devname'], i['md'], i['md_state'].split(',')[0]) for i in d['imports'])" \
	"[('$d1', '$MD', 'in_sync'), ('$d2', '$MD', 'in_sync')]"
rejoin "$d1"
expect_eq "in sync: nothing logged" "$(journal)" ""

# ---- a faulty leg: removed and re-added ------------------------------------
mdadm "/dev/$MD" --fail "/dev/$d2" >/dev/null 2>&1 || die "mdadm --fail"
case ",$(member "$d2")," in *,faulty,*) ;; *) die "$d2 not faulty: $(member "$d2")" ;; esac
ctl 0 show "/dev/$d2" --json
json "d['imports'][0]['md'], d['imports'][0]['md_state'].split(',')[0]" "('$MD', 'faulty')"
# written while the leg is out: the bitmap marks it
dd if=/dev/urandom of="/dev/$MD" bs=64k count=32 seek=100 oflag=direct 2>/dev/null || die "write $MD"
rejoin "$d2"
grep -q "^-t rnbd-md -- $d2 (session md-b, $nb2): was faulty in $MD (faulty[a-z_,]*): removed and re-added$" \
	/tmp/md-journal || die "journal: $(journal)"
in_sync "$d2"
same_data

# ---- a leg out of the array: re-added by its superblock's UUID -------------
mdadm "/dev/$MD" --fail "/dev/$d2" >/dev/null 2>&1 || die "mdadm --fail"
mdadm "/dev/$MD" --remove "/dev/$d2" >/dev/null 2>&1 || die "mdadm --remove"
[ ! -e "/sys/block/$d2/holders/$MD" ] || die "$d2 still held"
ctl 0 list
expect_eq "list, MD of a removed leg" "$(awk -v b="$d2" '$1 == b { print $NF }' /tmp/ctl.out)" "-"
dd if=/dev/urandom of="/dev/$MD" bs=64k count=32 seek=300 oflag=direct 2>/dev/null || die "write $MD"
rejoin "$d2"
expect_eq "journal" "$(journal)" "-t rnbd-md -- $d2 (session md-b, $nb2): re-added to $MD"
in_sync "$d2"
same_data

mdadm --stop "/dev/$MD" >/dev/null 2>&1 || die "mdadm --stop"
trap - EXIT
unmap_dev "$d1"
unmap_dev "$d2"
