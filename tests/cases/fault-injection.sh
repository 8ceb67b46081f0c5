# SPDX-License-Identifier: GPL-2.0-only
# desc: allocation failures injected into our modules end cleanly: at each
#       allocation of a map in turn (client and server side, every
#       context), of an unmap, during IO and while loading the modules
#       (fail_function on trs_should_fail_alloc()).  A map fails with an
#       errno and leaves nothing, or succeeds and works; IO is retried and
#       the data stays right; at least 100 failures in all; the runner then
#       checks that nothing leaked (kmemleak, RDMA resources) and that no
#       kernel problem showed.  (failslab and fail_page_alloc, which 6.1
#       can limit to a task but not to our modules on x86_64, reach rxe's
#       QP error path, where rxe deletes timers it never set up: a kernel
#       ODEBUG warning that is not ours, so they are not used here.)
# boot: shared
# kernel: debug
# timeout: 1800
DBG=/sys/kernel/debug
FF=$DBG/fail_function
FN=trs_should_fail_alloc
[ -d "$FF" ] || die "no fail_function in this kernel (KERNEL=debug)"
# A small queue depth keeps the per-slot allocations of a map few, so that
# the sweep reaches every allocation of it.
TRS_SERVER_PARAMS="sess_queue_depth=8"
injected=0

# fi_set DIR SPACE PROBABILITY TIMES: arm a fault_attr.  It fails nothing
# until SPACE - 1 candidates have passed, then each with PROBABILITY %,
# TIMES times at most.
fi_set() {
	echo 0 >"$1/probability"
	echo "$4" >"$1/times"
	echo "$2" >"$1/space"
	echo 1 >"$1/interval"
	echo 1 >"$1/verbose"
	echo "$3" >"$1/probability"
}

# fi_off DIR ARMED_TIMES: disarm; the failures it made go to $last and are
# added to $injected.
fi_off() {
	local left
	echo 0 >"$1/probability"
	left=$(cat "$1/times")
	echo 0 >"$1/times"
	injected=$((injected + $2 - left))
	last=$(($2 - left))
}

fn_inject() {
	echo "$FN" >"$FF/inject"
	echo 1 >"$FF/$FN/retval"
}

# On the way out, whatever the case did: nothing stays armed.  The function
# may be gone from the list already; that is not a failure.
cleanup_fi() {
	echo 0 >"$FF/probability"
	if grep -q "^$FN\\b" "$FF/inject"; then
		echo "!$FN" >"$FF/inject"
	fi
}
trap cleanup_fi EXIT

nb=$(nullb_create nullb0 32)
map_opts="sessname=fi path=ip:$RXE_ADDR device_path=$nb"

# no_device: nothing of session "fi" is left on the client.
no_device() {
	local b
	for b in /sys/block/rnbd*; do
		[ -e "$b" ] || continue
		die "$1: $(basename "$b") is left"
	done
	[ ! -e /sys/class/rtrs-client/fi ] || die "$1: session fi is left"
}

# check_dev DEV: the device reads and writes (a 64 KiB pattern).
check_dev() {
	dd if=/dev/urandom of=/run/fi.pat bs=64k count=1 2>/dev/null
	dd if=/run/fi.pat of="/dev/$1" bs=64k count=1 oflag=direct 2>/dev/null ||
		die "write to $1"
	expect_eq "read back from $1" \
		"$(dd if="/dev/$1" bs=64k count=1 iflag=direct 2>/dev/null | sha256sum)" \
		"$(sha256sum </run/fi.pat)"
}

new_dev() {
	basename "$(ls -d /sys/block/rnbd* | head -1)"
}

# ---- 1. module loading ----------------------------------------------------
setup_rxe
ko_insert "$REPO/transport/rnbd_trs_core.ko"
fn_inject
n=1
while :; do
	fi_set "$FF" "$n" 100 1
	r=ok
	for m in transport/rnbd_trs_server transport/rnbd_trs_client \
		 server/rnbd_server client/rnbd_client; do
		lsmod | grep -q "^$(basename $m) " && continue
		insmod "$REPO/$m.ko" $([ $m = transport/rnbd_trs_server ] && echo $TRS_SERVER_PARAMS) \
			2>/dev/null || { r="$m"; break; }
		mod_range_record "$(basename $m)"
	done
	fi_off "$FF" 1
	if [ "$last" = 0 ]; then
		[ "$r" = ok ] || die "insmod $r failed with nothing injected"
		break
	fi
	log "load: failure $n injected, insmod ${r/ok/(none)} failed"
	# Whatever loaded is unloaded again, cleanly.
	for m in rnbd_client rnbd_server rnbd_trs_client rnbd_trs_server; do
		lsmod | grep -q "^$m " && { rmmod $m || die "rmmod $m after injected failure $n"; }
	done
	n=$((n + 1))
	[ $n -le 50 ] || die "module loading never completes"
done
log "module loading: $((n - 1)) allocations, every one failed once"
load_total=$injected

# ---- 2. map: each allocation in turn --------------------------------------
n=1
ok_maps=0
while :; do
	fi_set "$FF" "$n" 100 1
	r=$(sysfs_write "$MAP_CTL" "$map_opts")
	fi_off "$FF" 1
	if [ "$last" = 0 ]; then
		expect_eq "map with nothing injected (allocation $n)" "$r" OK
		dev=$(new_dev)
		check_dev "$dev"
		unmap_dev "$dev"
		break
	fi
	case "$r" in
	OK)
		# The failure hit something retried (an IO of the partition
		# scan) or had a fallback: the device must work.
		ok_maps=$((ok_maps + 1))
		dev=$(new_dev)
		check_dev "$dev"
		unmap_dev "$dev" || die "unmap after map $n"
		;;
	E*)
		no_device "map with allocation $n failed ($r)"
		;;
	*)
		die "map with allocation $n failed: '$r'"
		;;
	esac
	n=$((n + 1))
	[ $n -le 600 ] || die "map never completes"
done
map_total=$((injected - load_total))
log "map: $map_total allocations failed in turn ($ok_maps maps still succeeded)"

# ---- 3. unmap: each allocation in turn ------------------------------------
n=1
while :; do
	expect_eq "map for unmap $n" "$(sysfs_write "$MAP_CTL" "$map_opts")" OK
	dev=$(new_dev)
	fi_set "$FF" "$n" 100 1
	r=$(sysfs_write "/sys/block/$dev/rnbd/unmap_device" normal)
	fi_off "$FF" 1
	if [ "$r" = OK ]; then
		no_device "unmap with allocation $n failed"
	else
		[ "$last" = 1 ] || die "unmap failed with nothing injected: $r"
		check_dev "$dev"
		unmap_dev "$dev" || die "unmap again after $r"
	fi
	[ "$last" = 1 ] || break
	n=$((n + 1))
	[ $n -le 50 ] || die "unmap never completes"
done
log "unmap: $((n - 1)) allocations failed in turn"

# ---- 4. IO: failures at random while writing and reading ------------------
expect_eq "map for IO" "$(sysfs_write "$MAP_CTL" "$map_opts")" OK
dev=$(new_dev)
dd if=/dev/urandom of=/run/fi.data bs=1M count=8 2>/dev/null
before=$injected
fi_set "$FF" 0 10 40
dd if=/run/fi.data of="/dev/$dev" bs=16k oflag=direct 2>/dev/null || die "IO write failed"
got=$(dd if="/dev/$dev" bs=16k count=512 iflag=direct 2>/dev/null | sha256sum)
fi_off "$FF" 40
expect_eq "data written and read under injected failures" "$got" "$(sha256sum </run/fi.data)"
[ "$last" -gt 0 ] || die "no failure injected during IO"
log "IO: $last allocations failed, every request retried"
unmap_dev "$dev"
echo "!$FN" >"$FF/inject"

# ---- the device still works, and the count -------------------------------
expect_eq "map after everything" "$(sysfs_write "$MAP_CTL" "$map_opts")" OK
dev=$(new_dev)
check_dev "$dev"
unmap_dev "$dev"
log "$injected allocation failures injected in all"
[ "$injected" -ge 100 ] || die "only $injected failures injected, 100 wanted"
