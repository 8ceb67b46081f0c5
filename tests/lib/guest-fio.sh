# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest helpers, fio (sourced by tests/lib/guest.sh): the fio wrapper
# that gives every verifying job a fresh random seed, the background
# write+verify jobs of the outage and multipath cases and their checks
# (fio_outage_start, fio_wait_ok, fio_mp_start, fio_mp_wait), and
# waiting for IO to flow (wait_io_flowing).

# fio: every fio job that verifies gets a fresh random seed, and checks it.
# With fio's default (randrepeat=1) a job run again writes the same blocks
# with the same data, seeds and numberio, so a write that never reached
# the disk reads back an earlier run's copy and verifies.  A fresh seed
# alone is not enough: fio (3.33) checks a block's seed only in a job that
# both reads and writes, so a write-only job becomes the same job as a
# read/write mix of 100% writes (--rw=randwrite: randrw, --rw=write: rw).
# The seed goes to the kernel log and to stderr (with fio's output), so a
# failure can be replayed: FIO_RANDSEED=N gives every verifying job seed N.
# A job that sets --randseed or --randrepeat itself is left as it is.
fio() {
	local a n verify= seed
	for a in "$@"; do
		case "$a" in
		--randseed=* | --randrepeat=*) command fio "$@"; return ;;
		--verify=*) verify=1 ;;
		esac
	done
	[ -n "$verify" ] || { command fio "$@"; return; }
	n=$#
	while [ "$n" -gt 0 ]; do
		a=$1
		shift
		n=$((n - 1))
		case "$a" in
		--rw=randwrite) set -- "$@" --rw=randrw --rwmixwrite=100 ;;
		--rw=write) set -- "$@" --rw=rw --rwmixwrite=100 ;;
		*) set -- "$@" "$a" ;;
		esac
	done
	seed=${FIO_RANDSEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	echo "fio: --randseed=$seed $*" >&2
	kmsg "fio --randseed=$seed $*" 2>/dev/null || true
	command fio --randseed="$seed" "$@"
}

# fio_outage_start DEV SIZE: 4k random writes with crc32c, throttled to
# 200 (writes) a second so that an outage a few seconds in falls in the
# write phase, then a full verify pass; in the background, output in
# /tmp/fio.out, pid in FIO_PID.
fio_outage_start() {
	fio --name=v --filename="/dev/$1" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 --size="$2" --rate_iops=,200 \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1 &
	FIO_PID=$!
}

# fio_wait_ok PID: the fio job ends with status 0 and reports no error.
fio_wait_ok() {
	wait "$1" || { cat /tmp/fio.out; die "fio failed"; }
	grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "no fio job report"; }
	if grep -o 'err= *[0-9]*' /tmp/fio.out | grep -vq 'err= *0$'; then
		cat /tmp/fio.out
		die "fio reported an error"
	fi
}

# wait_io_flowing DEV [N]: wait until DEV has completed N more requests (50
# unless given); fio takes seconds to start under TCG.  Dies after 30 s
# (times RNBD_TIMEOUT_SCALE).
wait_io_flowing() {
	local n0 i=0
	n0=$(dev_ios "$1")
	while [ "$(dev_ios "$1")" -lt $((n0 + ${2:-50})) ]; do
		i=$((i + 1))
		[ $i -lt $((300 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			{ cat /tmp/fio.err 2>/dev/null; die "no IO on $1 30 s after fio started"; }
		sleep 0.1
	done
}

# fio_mp_start DEV SIZE [RATE]: 4k random writes with crc32c at RATE writes
# a second (200 unless given; "max": no limit) and queue depth 16, then a
# verify pass reading every block back; JSON report in /tmp/fio.json for
# fio_mp_wait; in the background, pid in FIO_PID.
fio_mp_start() {
	local rate
	rate=${3:-200}
	[ "$rate" = max ] && rate=
	fio --name=v --filename="/dev/$1" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 --size="$2" ${rate:+--rate_iops=,$rate} \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		--output-format=json --output=/tmp/fio.json >/tmp/fio.err 2>&1 &
	FIO_PID=$!
}

# fio_mp_wait PID MAX_LAT_S: the fio_mp_start job ends with status 0 and no
# error, read back and verified every block it wrote, and no request took
# longer than MAX_LAT_S seconds (not scaled: the caller decides).
fio_mp_wait() {
	local fst=0
	wait "$1" || fst=$?
	if ! python3 "$REPO/tests/lib/fio-json.py" /tmp/fio.json "$2" ||
		[ "$fst" != 0 ]; then
		cat /tmp/fio.err
		die "fio (status $fst)"
	fi
}
