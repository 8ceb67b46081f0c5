# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest helpers, rnbd (sourced by tests/lib/guest.sh): our modules loaded
# and unloaded (ko_insert, load_rnbd*, unload_rnbd), devices mapped and
# unmapped (map_dev, unmap_dev), null_blk disks to export, a client
# session's path state and counters, a device's checksum and IO count,
# the two ends of a two-guest case (pair_server, pair_client), a mount that
# hangs (fuse_hang), the delay of TRS_FI_DELAY() (fi_delay_arm) and the end
# of every client session (client_sessions_gone).

# mod_loaded NAME: the module NAME is loaded (a builtin test: under TCG
# lsmod and grep cost about 0.2 s each).
mod_loaded() {
	[ -e "/sys/module/$1/initstate" ]
}

# ko_deps KO...: load the in-kernel modules the KOs depend on, not ours
# (a .ko beside one of them), with one modinfo for them all: a process
# start is a fifth of a second under TCG.
ko_deps() {
	local ko d
	for d in $(modinfo -F depends "$@" | tr , ' '); do
		mod_loaded $d && continue
		for ko in "$@"; do
			[ -e "${ko%/*}/$d.ko" ] && continue 2
		done
		modprobe "$d" || die "modprobe $d (for $*)"
	done
}

# ko_load KO [PARAM=VALUE...]: insmod, its address range recorded.
ko_load() {
	local ko=$1 d
	shift
	insmod "$ko" "$@" || die "insmod $ko"
	d=${ko##*/}
	mod_range_record "${d%.ko}" "$ko"
}

# Insert one of our modules after loading its in-kernel dependencies.
ko_insert() {
	ko_deps "$1"
	ko_load "$@"
}

# Load the rnbd stack from this tree: transport, then server and client.
# SERVER_PARAMS and TRS_SERVER_PARAMS: parameters of rnbd_server and of
# rnbd_trs_server (sess_queue_depth=...).
load_rnbd() {
	local m kos=
	for m in transport/rnbd_trs_core transport/rnbd_trs_server \
		transport/rnbd_trs_client server/rnbd_server client/rnbd_client; do
		mod_loaded ${m#*/} || kos="$kos $REPO/$m.ko"
	done
	[ -n "$kos" ] || return 0
	# shellcheck disable=SC2086
	ko_deps $kos
	for m in $kos; do
		case $m in
		*/rnbd_trs_server.ko) ko_load "$m" $TRS_SERVER_PARAMS ;;
		*/rnbd_server.ko) ko_load "$m" $SERVER_PARAMS ;;
		*) ko_load "$m" ;;
		esac
	done
}

load_rnbd_server() {
	mod_loaded rnbd_trs_core || ko_insert "$REPO/transport/rnbd_trs_core.ko"
	mod_loaded rnbd_trs_server ||
		ko_insert "$REPO/transport/rnbd_trs_server.ko" $TRS_SERVER_PARAMS
	mod_loaded rnbd_server || ko_insert "$REPO/server/rnbd_server.ko" $SERVER_PARAMS
}

load_rnbd_client() {
	for m in rnbd_trs_core rnbd_trs_client; do
		mod_loaded $m || ko_insert "$REPO/transport/$m.ko"
	done
	mod_loaded rnbd_client || ko_insert "$REPO/client/rnbd_client.ko"
}

# Unmap every rnbd device, then remove our modules; fail if one won't go.
unload_rnbd() {
	for d in /sys/block/rnbd*; do
		[ -e "$d/rnbd/unmap_device" ] || continue
		# one already going away may refuse; the rmmod below judges
		echo force >"$d/rnbd/unmap_device" 2>/dev/null || true
	done
	for m in rnbd_client rnbd_server rnbd_trs_client rnbd_trs_server rnbd_trs_core; do
		mod_loaded $m || continue
		rmmod "$m" || die "rmmod $m failed"
	done
}

MAP_CTL=/sys/devices/virtual/rnbd-client/ctl/map_device

# map SESS DEVICE_PATH [extra options]: map and print the new device name.
map_dev() {
	sess=$1
	path=$2
	shift 2
	before=$(ls -d /sys/block/rnbd* 2>/dev/null || true)
	echo "sessname=$sess path=ip:${MAP_ADDR:-$RXE_ADDR} device_path=$path $*" \
		>"$MAP_CTL" || return 1
	for d in /sys/block/rnbd*; do
		echo "$before" | grep -qx "$d" || { basename "$d"; return 0; }
	done
	die "map succeeded but no new /sys/block/rnbd*"
}

unmap_dev() {
	echo "${2:-normal}" >"/sys/block/$1/rnbd/unmap_device"
}

# rnbd_setup: soft-RoCE plus the whole rnbd stack in this guest.
rnbd_setup() {
	setup_rxe
	load_rnbd
}

# nullb_create NAME SIZE_MB [ATTR=VALUE...]: a null_blk device through
# configfs (memory backed unless told otherwise); prints /dev/NAME.
nullb_create() {
	name=$1
	size=$2
	shift 2
	mod_loaded null_blk || modprobe null_blk nr_devices=0 ||
		die "modprobe null_blk"
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs configfs /sys/kernel/config || die "configfs"
	d=/sys/kernel/config/nullb/$name
	mkdir "$d" || die "mkdir $d"
	echo "$size" >"$d/size"
	echo 1 >"$d/memory_backed"
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || die "nullb $name: ${kv%%=*}"
	done
	echo 1 >"$d/power" || die "nullb $name: power"
	udev_wait "/dev/$name"
	echo "/dev/$name"
}

udev_wait() {
	i=0
	while [ ! -b "$1" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || die "$1 did not appear"
		sleep 0.05
	done
}

# Remove every null_blk configfs device (after unmapping).
nullb_destroy_all() {
	for d in /sys/kernel/config/nullb/*/; do
		[ -e "$d/power" ] || continue
		echo 0 >"$d/power"
		rmdir "$d"
	done
}

# path_state SESS: the state of the client session's path.
path_state() {
	cat /sys/class/rtrs-client/"$1"/paths/*/state
}

# wait_path_state SESS STATE SECONDS: wait until the path is (with "!":
# is no longer) in STATE; SECONDS scale with RNBD_TIMEOUT_SCALE.
wait_path_state() {
	i=0
	while case "$2" in
		!*) [ "$(path_state "$1")" = "${2#!}" ] ;;
		*) [ "$(path_state "$1")" != "$2" ] ;;
	esac; do
		i=$((i + 1))
		[ $i -lt $(($3 * 10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "session $1: path state stays $(path_state "$1"), waited for $2"
		sleep 0.1
	done
}

# conn_stat SESS CONN FILE: a per-connection counter of a client session.
conn_stat() {
	cat /sys/class/rtrs-client/"$1"/paths/*/conns/"$2"/"$3"
}

# sess_sum SESS FILE: a per-connection counter of a client session, summed
# over its connections.
sess_sum() {
	cat /sys/class/rtrs-client/"$1"/paths/*/conns/*/"$2" |
		awk '{ s += $1 } END { print s + 0 }'
}

# sess_wrs SESS: work requests the client transport posted on all the
# connections of a session (sum of their wrs_posted counters).
sess_wrs() {
	sess_sum "$1" wrs_posted
}

# sha_dev DEV BYTES: checksum of the first BYTES of a device, read directly.
sha_dev() {
	dd if="$1" bs=1M count=$(($2 / 1048576)) iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1
}

# dev_ios DEV: requests the block device completed, reads plus writes.
dev_ios() {
	awk '{ print $1 + $5 }' "/sys/block/$1/stat"
}

# ---- the two ends of a two-guest case --------------------------------------
#
# A host case's guests (tests/lib/host.sh pair_bed, pair_run): the server
# 10.10.0.1 and the client 10.10.0.2 on eth0, the link 0 of pair_net.

# pair_server [READY]: rxe on eth0 with 10.10.0.1, the rnbd server, then
# /sync/READY (server-ready unless named) for the client.
pair_server() {
	setup_rxe eth0 10.10.0.1/24
	load_rnbd_server
	touch "/sync/${1:-server-ready}"
}

# pair_client [READY [SECONDS]]: rxe on eth0 with 10.10.0.2, the rnbd
# client, then wait (SECONDS, 300 unless given) for the server's
# /sync/READY (server-ready unless named).
pair_client() {
	setup_rxe eth0 10.10.0.2/24
	load_rnbd_client
	wait_sync "/sync/${1:-server-ready}" "${2:-300}"
}

# fuse_hang DIR: a FUSE mount at DIR whose daemon answers no request, so
# that any lookup below it hangs until the daemon dies or the mount is
# aborted; the daemon's pid in FUSE_PID.  The caller kills it (and
# unmounts DIR lazily) in its EXIT trap.  Never look below DIR yourself.
fuse_hang() {
	modprobe fuse || die "modprobe fuse"
	mkdir -p "$1"
	python3 "$REPO/tests/lib/fuse-hang.py" "$1" >/tmp/fuse-hang.out 2>&1 &
	FUSE_PID=$!
	i=0
	until grep -q " $1 fuse" /proc/mounts; do
		i=$((i + 1))
		[ $i -lt 100 ] || die "no FUSE mount: $(cat /tmp/fuse-hang.out)"
		kill -0 $FUSE_PID 2>/dev/null ||
			die "fuse-hang.py: $(cat /tmp/fuse-hang.out)"
		sleep 0.1
	done
}

# fi_delay_arm / fi_delay_disarm: every TRS_FI_DELAY() site sleeps
# TRS_FI_DELAY_MS while armed (fail_function on trs_should_delay(); the
# debug kernel).  Disarming twice, or without arming, is harmless.
FI_FF=/sys/kernel/debug/fail_function
fi_delay_arm() {
	echo trs_should_delay >"$FI_FF/inject"
	echo 1 >"$FI_FF/trs_should_delay/retval"
	echo 0 >"$FI_FF/space"
	echo 1 >"$FI_FF/interval"
	echo -1 >"$FI_FF/times"
	echo 0 >"$FI_FF/verbose"
	echo 100 >"$FI_FF/probability"
}
fi_delay_disarm() {
	if grep -q '^trs_should_delay\b' "$FI_FF/inject" 2>/dev/null; then
		echo 0 >"$FI_FF/probability"
		echo '!trs_should_delay' >"$FI_FF/inject"
	fi
}

# client_sessions_gone SEC: every client session is gone within SEC
# seconds (times the timeout scale), or the case fails.
client_sessions_gone() {
	i=0
	until [ -z "$(ls /sys/class/rtrs-client/ 2>/dev/null)" ]; do
		i=$((i + 1))
		[ $i -lt $(($1 * 10 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "client sessions left: $(ls /sys/class/rtrs-client/)"
		sleep 0.1
	done
}
