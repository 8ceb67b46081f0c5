# SPDX-License-Identifier: GPL-2.0-only
# desc: the multipath policies on a session with two paths (one per link,
#       rxe0 and rxe1), counted with stats/rdma over the same fio job
#       (8 MiB of 4k random writes, queue depth 16, and their verify
#       reads): round-robin: both paths carry traffic, within 10% of each
#       other; with link 2 200 ms slower (netem delay 100ms at both ends,
#       times the timeout scale)
#       min-inflight gives path 2 less than half of path 1's requests, and
#       min-latency less than a tenth; mpath_policy reads back what was
#       set, takes names and numbers and refuses anything else (EINVAL)
# boot: host
# timeout: 700
. "$REPO/tests/lib/host.sh"
pair_bed 256M
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
mp_server 600
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
S=${RNBD_TIMEOUT_SCALE:-1}
mp_client
P1=$MP_PATH1
P2=$MP_PATH2
C=$MP_CLASS/mp
dev=$(mp_map mp /dev/vda "$P1" "$P2") || exit 1
expect_eq "paths" "$(mp_paths mp | tr '\n' ' ')" "$P1 $P2 "
mp_check_path mp "$P1" rxe0
mp_check_path mp "$P2" rxe1

# counted_run WHAT: the fixed fio job; D1 and D2 are the requests paths 1
# and 2 carried during it
counted_run() {
	a=$(mp_reqs mp "$P1")
	b=$(mp_reqs mp "$P2")
	fio_mp_start "$dev" 8M max
	fio_mp_wait "$FIO_PID" $((30 * S))
	D1=$(($(mp_reqs mp "$P1") - a))
	D2=$(($(mp_reqs mp "$P2") - b))
	log "$1: path 1 carried $D1 requests, path 2 $D2"
	# 2048 writes and 2048 verify reads, nothing else on the device
	[ $((D1 + D2)) -ge 4096 ] || die "$1: the paths carried $((D1 + D2)) requests of fio's 4096"
	for q in "$P1" "$P2"; do
		expect_eq "$1: requests in flight on $q after fio" \
			"$(mp_rdma mp "$q" | awk '{ print $5 }')" 0
	done
}

# round-robin: even
mp_policy mp round-robin
counted_run round-robin
[ "$D1" -gt 0 ] || die "round-robin left path 1 idle"
[ "$D2" -gt 0 ] || die "round-robin left path 2 idle"
if [ "$D1" -gt "$D2" ]; then hi=$D1 lo=$D2; else hi=$D2 lo=$D1; fi
[ $(((hi - lo) * 10)) -le "$hi" ] ||
	die "round-robin: the paths carried $D1 and $D2 requests, more than 10% apart"

# link 2 slower: 100 ms more each way (times the timeout scale).  Under
# min-inflight the paths carry requests in the ratio of their latencies,
# and under TCG on a loaded host path 1 takes some 30 ms a request at this
# queue depth (with 20 ms each way path 2 still carried 1253 requests to
# path 1's 2843).
# The debug kernel is slower still, so the delay is scaled as the case's
# waits are: at 100 ms on it, path 1 under load was slow enough that
# min-latency gave path 2 477 requests to path 1's 3619 (at 400 ms, 131
# to 3965).
link_netem eth1 delay $((100 * S))ms
mp_policy mp 1
counted_run "min-inflight, link 2 slow"
[ $((D2 * 2)) -lt "$D1" ] ||
	die "min-inflight: the slow path 2 carried $D2 requests, path 1 $D1 (expected less than half)"
mp_policy mp min-latency
# one run for the policy to measure the paths' latencies, then the count
fio_mp_start "$dev" 1M max
fio_mp_wait "$FIO_PID" $((30 * S))
counted_run "min-latency, link 2 slow"
[ $((D2 * 10)) -lt "$D1" ] ||
	die "min-latency: the slow path 2 carried $D2 requests, path 1 $D1 (expected less than a tenth)"

# what mpath_policy refuses
for bad in bogus 3 -1 round; do
	expect_eq "mpath_policy '$bad'" "$(sysfs_write "$C/mpath_policy" "$bad")" EINVAL
done
expect_eq "mpath_policy after refused writes" "$(cat "$C/mpath_policy")" "min-latency (ML: 2)"
mp_policy mp 0
mp_policy mp 2
mp_policy mp min-inflight
link_netem eth1
no_io_errors
unmap_dev "$dev" || die "unmap"
[ ! -e "$C" ] || die "session mp still there after the unmap"
unload_rnbd
touch /sync/client-done
G
pair_run 600 2
