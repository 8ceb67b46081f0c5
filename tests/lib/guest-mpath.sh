# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest helpers, multipath (sourced by tests/lib/guest.sh): the two paths
# of the two-link bed (MP_PATH1, MP_PATH2; links: guest-rdma.sh), a map
# over several paths, each path's state, counters and policy (mp_*), and
# the server and client guests of a multipath case (mp_server, mp_client).

# shellcheck disable=SC2034 # the cases use them
MP_PATH1=ip:10.10.0.2@ip:10.10.0.1
# shellcheck disable=SC2034
MP_PATH2=ip:10.11.0.2@ip:10.11.0.1

MP_CLASS=/sys/class/rtrs-client

# mp_map SESS DEVICE_PATH PATH...: map over several paths at once (each
# [SRC@]DST, one path= each) and print the new device.  Dies at once, and
# says so, if the client modules have no multipath (EOPNOTSUPP).
mp_map() {
	local sess dp line p before r d
	sess=$1
	dp=$2
	shift 2
	line="sessname=$sess"
	for p in "$@"; do
		line="$line path=$p"
	done
	line="$line device_path=$dp"
	before=$(ls -d /sys/block/rnbd* 2>/dev/null || true)
	r=$(sysfs_write "$MAP_CTL" "$line")
	case "$r" in
	OK) ;;
	EOPNOTSUPP | ENOTSUP) # errno 95 (Python names it ENOTSUP)
		die "no multipath in the client modules: map_device with $# path= returned EOPNOTSUPP ($line)" ;;
	*) die "map_device ($line): $r" ;;
	esac
	for d in /sys/block/rnbd*; do
		echo "$before" | grep -qx "$d" || { basename "$d"; return 0; }
	done
	die "map succeeded but no new /sys/block/rnbd*"
}

# mp_paths SESS: the session's path directories, one a line, sorted.
mp_paths() {
	# shellcheck disable=SC2012 # path names have no newline
	ls "$MP_CLASS/$1/paths" 2>/dev/null | sort
}

# mp_state SESS PATH: the path's state; "gone" once it has no directory.
mp_state() {
	cat "$MP_CLASS/$1/paths/$2/state" 2>/dev/null || echo gone
}

# mp_wait_state SESS PATH STATE SECONDS: wait until the path is (with
# "!STATE": is no longer) in STATE ("gone": its directory is); SECONDS
# scale with RNBD_TIMEOUT_SCALE.
mp_wait_state() {
	local i=0
	while case "$3" in
		!*) [ "$(mp_state "$1" "$2")" = "${3#!}" ] ;;
		*) [ "$(mp_state "$1" "$2")" != "$3" ] ;;
	esac; do
		i=$((i + 1))
		[ $i -lt $(($4 * 10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "session $1, path $2: state stays $(mp_state "$1" "$2"), waited $4 s for $3"
		sleep 0.1
	done
}

# mp_check_path SESS PATH RXEDEV: the path is connected, on RXEDEV port 1,
# with the addresses its name says.
mp_check_path() {
	local d
	d=$MP_CLASS/$1/paths/$2
	[ -d "$d" ] || die "session $1 has no path $2 (it has: $(mp_paths "$1" | tr '\n' ' '))"
	expect_eq "$2 state" "$(cat "$d/state")" connected
	expect_eq "$2 hca_name" "$(cat "$d/hca_name")" "$3"
	expect_eq "$2 hca_port" "$(cat "$d/hca_port")" 1
	expect_eq "$2 src_addr" "$(cat "$d/src_addr")" "${2%@*}"
	expect_eq "$2 dst_addr" "$(cat "$d/dst_addr")" "${2#*@}"
}

# mp_rdma SESS PATH: the path's stats/rdma: "reads read_bytes writes
# write_bytes inflight failovers".
mp_rdma() {
	cat "$MP_CLASS/$1/paths/$2/stats/rdma"
}

# mp_reqs SESS PATH: requests the path carried (reads + writes).
mp_reqs() {
	mp_rdma "$1" "$2" | awk '{ print $1 + $3 }'
}

# mp_failovers SESS: requests moved from a failed path to another, summed
# over the session's paths (the sixth number of stats/rdma).
mp_failovers() {
	cat "$MP_CLASS/$1"/paths/*/stats/rdma | awk '{ s += $6 } END { print s + 0 }'
}

# mp_reconnects SESS PATH: the path's successful reconnects.
mp_reconnects() {
	awk '{ print $1 }' "$MP_CLASS/$1/paths/$2/stats/reconnects"
}

# mp_policy SESS NAME: set the session's multipath policy (a name or its
# number) and check what mpath_policy reads back.
mp_policy() {
	local want
	expect_eq "mpath_policy $2" "$(sysfs_write "$MP_CLASS/$1/mpath_policy" "$2")" OK
	case "$2" in
	round-robin | 0) want="round-robin (RR: 0)" ;;
	min-inflight | 1) want="min-inflight (MI: 1)" ;;
	min-latency | 2) want="min-latency (ML: 2)" ;;
	*) die "mp_policy: unknown policy $2" ;;
	esac
	expect_eq "mpath_policy after writing $2" "$(cat "$MP_CLASS/$1/mpath_policy")" "$want"
}

# mp_takes_traffic SESS PATH DEV: 2 s of 4k random reads (queue depth 16)
# on DEV; the path must carry some of them.
mp_takes_traffic() {
	local r0 r1 n0 n1
	r0=$(mp_reqs "$1" "$2")
	n0=$(dev_ios "$3")
	fio --name=t --filename="/dev/$3" --ioengine=libaio --direct=1 \
		--rw=randread --bs=4k --iodepth=16 --time_based --runtime=2 \
		>/tmp/fio-t.out 2>&1 || { cat /tmp/fio-t.out; die "fio (reads)"; }
	r1=$(mp_reqs "$1" "$2")
	n1=$(dev_ios "$3")
	log "$2 carried $((r1 - r0)) requests while $3 completed $((n1 - n0)) (2 s of reads)"
	[ $((r1 - r0)) -gt 0 ] || die "path $2 takes no traffic"
}

# mp_server [SECONDS]: the server guest of a multipath case: both links,
# the rnbd server, netem_follow; /sync/server-ready, then wait (SECONDS,
# default 1000) for /sync/client-done and unload.
mp_server() {
	setup_links server
	load_rnbd_server
	netem_follow >/tmp/netem.log 2>&1 &
	nf=$!
	touch /sync/server-ready
	wait_sync /sync/client-done "${1:-1000}"
	kill "$nf"
	cat /tmp/netem.log
	unload_rnbd
}

# mp_client: the client guest of a multipath case: both links, the rnbd
# client, then wait (300 s at most) for the server's /sync/server-ready.
mp_client() {
	setup_links client
	load_rnbd_client
	wait_sync /sync/server-ready 300
}
