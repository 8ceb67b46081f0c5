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

# errno_name MESSAGE: the errno name (EINVAL...) of a shell's error
# message ("...: Invalid argument"), as sysfs-write.py names it.  The table
# of strerror texts is made once a boot.
errno_name() {
	local t=/tmp/rnbd-errno-names msg name tmp
	if [ ! -s $t ]; then
		# (a redirection's $BASHPID would be the child's)
		tmp=$t.$BASHPID
		python3 -c 'import errno, os
for n, name in errno.errorcode.items():
	print(os.strerror(n) + "\t" + name)' >"$tmp"
		mv "$tmp" $t
	fi
	while IFS='	' read -r msg name; do
		[ "$msg" = "${1##*: }" ] && { echo "$name"; return; }
	done <$t
	echo "UNKNOWN(${1##*: })"
}

# sysfs_write FILE STRING: one write(2), prints OK or the errno name.
# Under bash, a plain string (no newline, no backslash escape, under a
# page) is written by bash itself (0.05 s; a python start is 0.5 to 0.6 s of
# a guest under TCG); the rest goes through sysfs-write.py (bash writes a
# line at a time and 4 KiB at most at once, and dash words its errors
# otherwise).
sysfs_write() {
	local err msg
	case "${BASH_VERSION:-}:$2" in
	:* | *"
"* | *\\*) ;;
	*)	if [ ${#2} -lt 4000 ]; then
			err=/tmp/sysfs-write.$BASHPID
			if { printf '%s' "$2" >"$1"; } 2>"$err"; then
				echo OK
			else
				IFS= read -r msg <"$err"
				errno_name "$msg"
			fi
			return
		fi ;;
	esac
	python3 "$REPO/tests/lib/sysfs-write.py" "$1" "$2"
}
