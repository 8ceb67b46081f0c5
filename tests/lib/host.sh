# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers for host-side test cases ("# boot: host") that start guests
# themselves: two-guest setups, server crash and restart.
# REPO and CASE_RESULTS are set by scripts/check.

GUEST_RUN=$REPO/scripts/guest-run
declare -A GUEST_PID GUEST_JOB

die() {
	echo "FAIL: $*" >&2
	exit 1
}

# A fresh job/sync directory under the case's results.
mk_dir() {
	local d=$CASE_RESULTS/$1
	rm -rf "$d"
	mkdir -p "$d"
	echo "$d"
}

# Kernel problems found on the consoles of this case's guests; the case
# fails at its end if there is any (cleanup_guests).
GUEST_SPLAT=$CASE_RESULTS/splat
rm -f "$GUEST_SPLAT"

# start_guest NAME [guest-run options] SCRIPT [ARGS]: boot in the background.
# SCRIPT runs with errexit (guest-run --errexit): a command that fails
# outside a condition (an unmap_dev, a write to sysfs) ends the guest
# with its status, as a guest case's commands do under `bash -e`.
start_guest() {
	local name=$1
	shift
	# a guest started again under the same name: its first job is
	# scanned before it is made anew
	[ -z "${GUEST_JOB[$name]:-}" ] || scan_guest "$name" || true
	GUEST_JOB[$name]=$(mk_dir "job-$name")
	"$GUEST_RUN" --quiet --errexit --job "${GUEST_JOB[$name]}" "$@" \
		>"$CASE_RESULTS/$name.out" 2>&1 &
	GUEST_PID[$name]=$!
}

# wait_guest NAME: wait for the guest to end; prints nothing, returns its
# guest-run status.
wait_guest() {
	local rc
	wait "${GUEST_PID[$1]}"
	rc=$?
	unset "GUEST_PID[$1]"
	return $rc
}

# scan_guest NAME: the kernel problems on the guest's console and in the
# dmesg it saved (if it ended by itself), each line added to GUEST_SPLAT
# with the guest's name; fails if there is one.  Whatever the guest's end
# (killed, paused, failed), this is what looks at its kernel.
scan_guest() {
	local j=${GUEST_JOB[$1]} out
	local logs=("$j/console.log")
	[ -s "$j/dmesg.txt" ] && logs+=("$j/dmesg.txt")
	[ -e "$j/console.log" ] || return 0
	out=$("$REPO/scripts/guest/scan-console" "${logs[@]}") && return 0
	printf '%s\n' "$out" | sed "s/^/$1: /" >>"$GUEST_SPLAT"
	return 1
}

# kill_guest NAME: end the guest at once, as a crash would.  Its console
# is scanned at the case's end, with every other guest's.
kill_guest() {
	local pid=${GUEST_PID[$1]}
	pkill -KILL -f "path=${GUEST_JOB[$1]},mount_tag=job" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	unset "GUEST_PID[$1]"
}

# guest_monitor NAME COMMAND: a QEMU monitor command to a running guest
# ("stop" pauses it, clock included, "cont" resumes it).
guest_monitor() {
	python3 - "${GUEST_JOB[$1]}/monitor.sock" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(10)
s.recv(4096)
s.sendall(sys.argv[2].encode() + b"\n")
time.sleep(0.5)
s.close()
PY
}

# wait_alive FILE SECONDS GUEST: wait for FILE while GUEST runs.
wait_alive() {
	local i=0
	while [ ! -e "$1" ]; do
		kill -0 "${GUEST_PID[$3]}" 2>/dev/null || return 1
		i=$((i + 1))
		[ $i -le $(($2 * 2)) ] || return 1
		sleep 0.5
	done
}

# wait_file FILE TIMEOUT: wait for a guest to create FILE.
wait_file() {
	local i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -le $(($2 * 2)) ] || return 1
		sleep 0.5
	done
}

# pair_net PORT server|client [LINK]: the --net argument of one end of a
# link between the two guests.  LINK 0 (the default), the link every
# two-guest case has, is on UDP ports PORT and PORT+1 (server 10.10.0.1's
# MAC ends in 00:01, the client's in 00:02); LINK 1, a second link for the
# multipath cases, on PORT+2 and PORT+3 (MACs ending in 01:01 and 01:02).
# Each --net is one more NIC, eth0, eth1... in the order given, so a case
# with two links passes both, link 0 first:
#   start_guest server ... --net "$(pair_net $p server)" \
#	--net "$(pair_net $p server 1)" ...
# and its guests call setup_links (tests/lib/guest-rdma.sh): 10.10.0.0/24 on
# eth0 with rxe0, 10.11.0.0/24 on eth1 with rxe1.
pair_net() {
	local l=${3:-0}
	local base=$(($1 + 2 * l))
	if [ "$2" = server ]; then
		echo "$base:$((base + 1)):52:54:00:00:0$l:01"
	else
		echo "$((base + 1)):$base:52:54:00:00:0$l:02"
	fi
}

# pair_bed [SIZE]: what a two-guest case starts from, in three globals:
# sync, a fresh directory the guests share as /sync (its parent holds
# their scripts); img, with SIZE the server guest's disk image of SIZE
# ($CASE_RESULTS/server-disk.img), else empty; p, the UDP port of the
# link (pair_net).
pair_bed() {
	sync=$(mk_dir sync)
	img=
	if [ -n "${1:-}" ]; then
		img=$CASE_RESULTS/server-disk.img
		truncate -s "$1" "$img"
	fi
	p=$((20000 + RANDOM % 20000))
}

# pair_run TIMEOUT [LINKS]: boot the server guest on $sync/../server.sh
# (with the disk img if pair_bed made one) and the client guest on
# $sync/../client.sh, each with TIMEOUT, the /sync share and LINKS links
# (1 unless given; 2: both pair_net links, for setup_links), then
# wait_pair client server.  The guests' side: pair_server and pair_client
# (tests/lib/guest-rnbd.sh), mp_server and mp_client (guest-mpath.sh).
pair_run() {
	local t=$1 links=${2:-1} l
	local snet=() cnet=() disk=()
	for ((l = 0; l < links; l++)); do
		snet+=(--net "$(pair_net "$p" server "$l")")
		cnet+=(--net "$(pair_net "$p" client "$l")")
	done
	[ -z "${img:-}" ] || disk=(--disk "$img")
	start_guest server --timeout "$t" --share "$sync" "${disk[@]}" "${snet[@]}" \
		"$sync/../server.sh"
	start_guest client --timeout "$t" --share "$sync" "${cnet[@]}" "$sync/../client.sh"
	wait_pair client server
}

# wait_pair CLIENT SERVER: wait for both guests, print their logs, and die
# if either ended with a non-zero status.  A client that failed never
# signals its server, which would wait out its timeout: it is ended.
wait_pair() {
	local crc=0 src=0
	wait_guest "$1" || crc=$?
	if [ "$crc" != 0 ]; then
		kill_guest "$2"
		echo "(the $2 guest was ended: its client failed)" \
			>>"$CASE_RESULTS/$2.out"
	else
		wait_guest "$2" || src=$?
	fi
	guest_log "$1"
	guest_log "$2"
	[ "$crc" = 0 ] || die "$1 guest status $crc"
	[ "$src" = 0 ] || die "$2 guest status $src"
}

guest_log() {
	echo "--- $1: test.log"
	cat "${GUEST_JOB[$1]}/test.log" 2>/dev/null
	echo "--- $1: guest-run"
	cat "$CASE_RESULTS/$1.out" 2>/dev/null
	[ "$(cat "${GUEST_JOB[$1]}/rc" 2>/dev/null)" != 0 ] || return 0
	# a guest that failed: its last kernel lines say why (CI keeps no files)
	echo "--- $1: kernel log (rnbd, transport, RDMA, block errors; last 40)"
	grep -aE 'rnbd|trs|rdma|rxe|I/O error|rnbd-test' \
		"${GUEST_JOB[$1]}/console.log" 2>/dev/null | tail -n 40
}

# At the case's end, however it ends: the guests still running are ended,
# and the console of every guest the case started is scanned; a kernel
# problem on any of them fails the case.
cleanup_guests() {
	local g bad=
	for g in "${!GUEST_PID[@]}"; do
		kill_guest "$g"
	done
	for g in "${!GUEST_JOB[@]}"; do
		scan_guest "$g" || bad="$bad $g"
	done
	[ -s "$GUEST_SPLAT" ] || return 0
	echo "FAIL: kernel problem on the console of guest(s)${bad:- started earlier}:" >&2
	head -n 40 "$GUEST_SPLAT" >&2
	exit 1
}
trap cleanup_guests EXIT
