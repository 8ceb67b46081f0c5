# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest side of scripts/check: run several test cases in one guest boot.
# Arguments: case files.  For each case it marks the kernel log
# ("rnbd-check: begin/end NAME", which the host uses to tie console reports
# to the case), runs the case under `bash -e` with its timeout, then cleans up
# (unmaps, unloads our modules, checks that no RDMA resources were leaked,
# removes rxe) and writes /job/results/NAME.rc, NAME.log and NAME.secs (its
# time).
. "$REPO/tests/lib/guest.sh"
export REPO KVER KERNEL RNBD_TIMEOUT_SCALE RNBD_HOSTILE_ROUNDS RNBD_HOSTILE_SEED
mkdir -p /job/results

case_timeout() {
	t=$(sed -n 's/^# timeout: *\([0-9]*\).*/\1/p' "$1" | head -1)
	echo $((${t:-300} * ${RNBD_TIMEOUT_SCALE:-1}))
}

post_case_cleanup() {
	pkill -KILL 'fio|rping' 2>/dev/null
	for m in $(awk '$1 ~ /^\/dev\/rnbd/ { print $2 }' /proc/mounts); do
		umount "$m"
	done
	# rnbd first (its unload must work), then whatever else the case used.
	(unload_rnbd) || return 1
	rxe_opcode_probe_remove
	nullb_destroy_all
	losetup -D 2>/dev/null
	# Nothing of ours, nor of a process of the case, may hold an RDMA
	# object now (a process killed above may take a moment to go).
	if [ -n "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
		i=0
		until left=$(rdma_res_left); [ -z "$left" ]; do
			i=$((i + 1))
			[ $i -lt 50 ] || {
				echo "FAIL: RDMA objects left after the case and the unload:"
				echo "$left"
				return 1
			}
			sleep 0.1
		done
	fi
	teardown_rxe
	for m in null_blk loop; do
		mod_loaded $m && { rmmod "$m" 2>/dev/null || true; }
	done
	# Last: a module's exit path that forgets an object shows only now.
	kmemleak_check || { echo "FAIL: kmemleak: objects leaked by our modules (above)"; return 1; }
	lockdep_check || return 1
	return 0
}

for c in "$@"; do
	name=$(basename "$c" .sh)
	t=$(case_timeout "$c")
	echo "rnbd-check: begin $name" >/dev/kmsg
	export RNBD_CASE=$name	# for klog
	# what a guest that dies of memory had left: free memory, and what
	# the earlier cases wrote to the root's tmpfs upper layer
	echo "rnbd-check: $(awk '/^MemAvailable:/ { print $1, $2, $3 }' /proc/meminfo)," \
		"root overlay $(df -k / | awk 'NR == 2 { print $3 }') kB written" >/dev/kmsg
	echo "=== $name"
	t0=$(date +%s)
	# bash -e with an ERR trap names the command that failed a case.
	timeout -k 10 "$t" bash -eE -c '. "$REPO/tests/lib/guest.sh"; cd "$REPO"
		trap '"'"'echo "FAIL: ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND (status $?)"'"'"' ERR
		. "$1"' bash "$c" >"/job/results/$name.log" 2>&1
	rc=$?
	[ "$rc" = 124 ] && echo "FAIL: case timed out after ${t}s" >>"/job/results/$name.log"
	if ! post_case_cleanup >>"/job/results/$name.log" 2>&1; then
		echo "FAIL: cleanup after the case failed" >>"/job/results/$name.log"
		[ "$rc" = 0 ] && rc=1
	fi
	cat "/job/results/$name.log"
	echo "$(($(date +%s) - t0))" >"/job/results/$name.secs"
	echo "$rc" >"/job/results/$name.rc"
	echo "rnbd-check: end $name rc=$rc" >/dev/kmsg
	sync
done
exit 0
