# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest helpers, checks of the kernel (sourced by tests/lib/guest.sh):
# lockdep still on (lockdep_check), leaks of our modules' objects
# (kmemleak_check, with where each module lay: mod_range_record), and no
# IO error on an rnbd device (no_io_errors).

# ---- kmemleak and lockdep (debug kernel) ----------------------------------

# lockdep_check: fail once, in the case during which it happened, if lockdep
# switched itself off (after any report, or any taint but an out-of-tree
# module): every later case would run unchecked.  Succeeds without lockdep.
# On the debug kernel (KERNEL=debug) a kernel without lockdep fails too:
# its checks would pass unseen.
LOCKDEP_STATS=/proc/lockdep_stats
LOCKDEP_OFF_MARK=/run/lockdep-off
lockdep_check() {
	if [ ! -r "$LOCKDEP_STATS" ]; then
		[ "${KERNEL:-}" = debug ] || return 0
		echo "FAIL: no lockdep ($LOCKDEP_STATS) on the debug kernel"
		return 1
	fi
	grep -q 'debug_locks: *0' "$LOCKDEP_STATS" || return 0
	[ -e "$LOCKDEP_OFF_MARK" ] && return 0
	touch "$LOCKDEP_OFF_MARK"
	echo "FAIL: lockdep is off from here on (tainted: $(cat /proc/sys/kernel/tainted))"
	return 1
}

KMEMLEAK=/sys/kernel/debug/kmemleak
MOD_RANGES=/run/rnbd-module-ranges

# mod_range_record NAME [KO]: remember where a loaded module of ours lies
# (its memory and the address of each section), when it was loaded and
# from which file (KO; found in the tree if not given), so that
# kmemleak_check can pin a leak on it and name the function after it is
# unloaded, when its frames print as bare addresses.
# Under TCG each process started costs about 0.2 s, and this runs for every
# module load of every case: builtins, and one awk for all the sections
# (not the shell's read: dash reads a byte at a time, and a section file
# gives its first byte again at every offset).
mod_range_record() {
	local ko=${2:-} d name size refs deps state addr rest up
	if [ -z "$ko" ]; then
		for d in transport server client tests/kmod; do
			[ -e "$REPO/$d/$1.ko" ] && ko=$REPO/$d/$1.ko
		done
	fi
	name=
	while read -r name size refs deps state addr rest; do
		[ "$name" = "$1" ] && break
	done </proc/modules
	[ "$name" = "$1" ] || return 0
	read -r up rest </proc/uptime
	{
		echo "load $1 $addr $size $up ${ko:--}"
		awk 'FNR == 1 { n = FILENAME; sub(/.*\//, "", n); print "sect", n, $1 }' \
			"/sys/module/$1/sections/".[a-z]* 2>/dev/null || true
	} >>"$MOD_RANGES"
}

# kmemleak_check: scan for leaks, print every unreferenced object whose
# allocation passed through one of our modules and fail if there is one.
# The list is cleared after, so the next check sees only newer leaks.
# Succeeds at once without kmemleak on Debian's kernel; fails without it
# on the debug kernel (KERNEL=debug), or if it turned itself off (a scan
# is refused).
kmemleak_check() {
	if [ ! -w "$KMEMLEAK" ]; then
		[ "${KERNEL:-}" = debug ] || return 0
		echo "FAIL: no kmemleak ($KMEMLEAK) on the debug kernel"
		return 1
	fi
	# kmemleak leaves objects younger than 5 s alone.
	sleep 6
	# Two scans: kmemleak reports an unreferenced object only once its
	# contents' checksum is the same in two scans in a row.  A zeroed
	# object matches the initial checksum at the first scan; any other is
	# reported at the second (with one scan, by the next case's check,
	# blamed on that case, or never after the last case of a boot).
	echo scan >"$KMEMLEAK" || { echo "kmemleak scan failed"; return 1; }
	echo scan >"$KMEMLEAK" || { echo "kmemleak scan failed"; return 1; }
	cat "$KMEMLEAK" >/run/kmemleak.txt
	local up
	up=$(cut -d' ' -f1 /proc/uptime)
	echo clear >"$KMEMLEAK"
	python3 "$REPO/tests/lib/kmemleak-ours.py" /run/kmemleak.txt "$MOD_RANGES" "$up"
}

# no_io_errors: no block-layer IO error on an rnbd device in the kernel log.
no_io_errors() {
	if dmesg | grep -E 'I/O error.*dev rnbd|rnbd[0-9]+.*I/O error'; then
		die "IO errors on an rnbd device (above)"
	fi
}
