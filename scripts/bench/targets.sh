# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The benchmark's targets in the guest, for scripts/bench/guest.sh and
# scripts/bench/profile.sh: NVMe-oF RDMA over the rxe device (nvmet-rdma
# exporting a block device, nvme-rdma connecting to it), and the guest's
# event counters read around a run.  Source after tests/lib/guest.sh.

NQN=nqn.2026-11.io.rnbd:bench
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6c0d6b8a-3d0e-4a4b-9c59-0000000b3e4c
NVME_PORT=4420

nvme_target_setup() {
	modprobe nvmet || die "modprobe nvmet"
	modprobe nvmet-rdma || die "modprobe nvmet-rdma"
	modprobe nvme-rdma || die "modprobe nvme-rdma"
	s=/sys/kernel/config/nvmet/subsystems/$NQN
	mkdir "$s" || die "nvmet subsystem"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo "$1" >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/enable" || die "nvmet namespace"
	p=/sys/kernel/config/nvmet/ports/1
	mkdir "$p"
	echo rdma >"$p/addr_trtype"
	echo ipv4 >"$p/addr_adrfam"
	echo "$RXE_ADDR" >"$p/addr_traddr"
	echo "$NVME_PORT" >"$p/addr_trsvcid"
	ln -s "$s" "$p/subsystems/$NQN" || die "nvmet port"
}

nvme_connect() {
	nvme connect -t rdma -a "$RXE_ADDR" -s "$NVME_PORT" -n "$NQN" \
		--hostnqn="$HOSTNQN" >/dev/null || die "nvme connect"
	for _ in $(seq 100); do
		# the multipath head (nvmeXnY), not its hidden path nvmeXcZnY
		for d in /sys/block/nvme*n*; do
			case $d in */nvme*c*n*) continue ;; esac
			[ -e "$d" ] && { basename "$d"; return 0; }
		done
		sleep 0.1
	done
	die "no nvme namespace appeared"
}

# sched_none: the none scheduler on every block device that has it (with
# one vCPU, single-queue devices default to mq-deadline; with two, every
# bench device has none already).
sched_none() {
	for f in /sys/block/*/queue/scheduler; do
		grep -q '\[none\]' "$f" && continue
		grep -qw none "$f" && echo none >"$f"
	done
	return 0
}

# counters [DEV [SESS]]: one "name value" per line, all monotonic.  A
# counter missing from either side of a delta (the rnbd session before it
# is mapped) is left out of it.  With DEV, also the IOs the block device
# completed (reads and writes, /proc/diskstats).  A multipath NVMe disk
# nvmeXnY counts none itself on 6.1 but counts each IO on 6.12, and its
# path disks nvmeXcZnY (hidden, still listed) count them on both: the
# larger of the head's count and its paths' sum, so that no kernel counts
# an IO twice (summing both halved 6.12's NVMe cost per IO).
# The rnbd counters are session SESS's (default bench); for a session of
# several paths also each path's requests (rnbd_path1_requests...).
counters() {
	_sess=${2:-bench}
	[ -z "${1:-}" ] || awk -v dev="$1" -v re="^$(echo "$1" |
		sed -E 's/^(nvme[0-9]+)(n[0-9]+)$/\1c[0-9]+\2/')\$" \
		'$3 == dev { h += $4 + $8 } $3 != dev && $3 ~ re { p += $4 + $8 }
		 END { print "dev_ios", (h > p ? h : p) + 0 }' \
		/proc/diskstats
	awk '/^cpu / { print "cpu_busy_ticks", $2 + $3 + $4 + $7 + $8;
		       print "cpu_idle_ticks", $5 + $6 }
	     /^cpu[0-9]+ / { print $1 "_busy_ticks", $2 + $3 + $4 + $7 + $8 }
	     /^ctxt / { print "ctxt", $2 }
	     /^intr / { print "intr", $2 }' /proc/stat
	awk 'NR > 1 { s = 0; for (i = 2; i <= NF; i++) s += $i;
		      print "softirq_" tolower($1), s }' /proc/softirqs | tr -d :
	awk '$1 ~ /^(RES|CAL|TLB|LOC):$/ { print "ipi_" $1, $2 + $3 }' \
		/proc/interrupts | tr -d :
	# RDMA packets (loopback: each is sent and received once), and the
	# rnbd client's requests and work requests while it is mapped
	echo "rxe_pkts $(cat "$RXE_CNT/sent_pkts")"
	if [ -d "/sys/class/rtrs-client/$_sess" ]; then
		echo "rnbd_requests $(sess_sum "$_sess" requests)"
		echo "rnbd_wrs $(sess_sum "$_sess" wrs_posted)"
		set -- "/sys/class/rtrs-client/$_sess"/paths/*/stats/rdma
		[ $# -lt 2 ] || awk '{ print "rnbd_path" NR "_requests", $1 + $3 }' "$@"
	fi
}

# counters_delta BEFORE AFTER: "name increase" per line.
counters_delta() {
	awk 'NR == FNR { v[$1] = $2; next }
	     $1 in v { print $1, $2 - v[$1] }' "$1" "$2"
}
