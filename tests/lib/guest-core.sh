# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest helpers, core (sourced by tests/lib/guest.sh, with the other
# guest-*.sh files; cases source guest.sh): messages and failing (log,
# die, expect_eq), marking and reading the kernel log of the case (kmsg,
# klog), waiting for another guest's file on the /sync share (wait_sync),
# one write(2) to a sysfs file (sysfs_write) and free memory (free_kb).

log() {
	echo "# $*"
}

die() {
	echo "FAIL: $*" >&2
	exit 1
}

# expect_eq WHAT ACTUAL EXPECTED
expect_eq() {
	[ "$2" = "$3" ] || die "$1: got '$2', expected '$3'"
}

# Mark the kernel log so a problem report can be tied to a step.
kmsg() {
	echo "rnbd-test: $*" >/dev/kmsg
}

# The kernel log of this case only (from the runner's begin line on): an
# earlier case of a shared boot may have made the same messages on purpose.
# If the begin line has left the kernel's ring buffer, every "no such line"
# check on klog's output would pass: the case is failed instead (klog runs
# in a pipeline's subshell, so it ends the case's shell, $$, itself).
# (The log is taken whole first: a reader that stops early, grep -q, must
# not make the search for the begin line fail with SIGPIPE.)
klog() {
	local out
	if ! out=$(dmesg | awk -v m="rnbd-check: begin ${RNBD_CASE:?}" '
		!on && length($0) >= length(m) &&
		    substr($0, length($0) - length(m) + 1) == m { on = 1 }
		on { print }
		END { exit !on }'); then
		echo "FAIL: klog: 'rnbd-check: begin $RNBD_CASE' is no longer in the kernel log" >&2
		kill -TERM $$
		exit 1
	fi
	printf '%s\n' "$out"
}

# free_kb: free memory in kB, counting the pages on the per-CPU free lists
# (MemFree and MemAvailable do not: tens of MiB freed can wait there).
free_kb() {
	awk '/^MemFree:/ { print $2 }' /proc/meminfo |
		awk -v pcp="$(awk '/ count:/ { s += $2 } END { print s * 4 }' /proc/zoneinfo)" \
			'{ print $1 + pcp }'
}

# wait_sync FILE SECONDS: wait up to SECONDS for the other guest of a
# two-guest case to create FILE on the /sync share; dies if it does not.
wait_sync() {
	local i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -le $(($2 * 2)) ] || die "timed out waiting for $1"
		sleep 0.5
	done
}

# sysfs_write FILE STRING: one write(2), prints OK or the errno name.
sysfs_write() {
	python3 "$REPO/tests/lib/sysfs-write.py" "$1" "$2"
}
