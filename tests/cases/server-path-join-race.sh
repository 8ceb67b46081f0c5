# SPDX-License-Identifier: GPL-2.0-only
# desc: a session closed while a path of it is being set up: a hostile
#       client (rnbd-hostile --cases join-race) opens a multipath session,
#       then joins path 1 to it with its key again and again, while the
#       server closes the session for having no device (idle_session_sec
#       1).  The close must wait for the setup of the joining path (its PD,
#       chunks and MRs), not free the path under it.  On the debug kernel
#       every path setup sleeps 3 s (fail_function on trs_should_delay()),
#       so that each idle close lands in one and the server says it closed
#       path 1; on Debian's kernel the joins run back to back, and the
#       setups take most of the server's time.  Every session is closed,
#       no RDMA object stays, and the kernel reports nothing.
# boot: shared
# timeout: 600
S=${RNBD_TIMEOUT_SCALE:-1}
rnbd_setup
tool=$REPO/tests/hostile/rnbd-hostile
[ -x "$tool" ] || die "$tool not built (make -C tests/hostile)"
out=${CASE_RESULTS:-/job/results}/server-path-join-race-tool.log
P=/sys/module/rnbd_server/parameters
old_idle=$(cat $P/idle_session_sec)

cleanup_race() {
	echo "$old_idle" >$P/idle_session_sec
	fi_delay_disarm
}
trap cleanup_race EXIT

base_res=$(rdma_res_counts)
delayed=0
if [ -d "$FI_FF" ]; then
	# every path setup sleeps TRS_FI_DELAY_MS (3 s): a 1 s idle timer
	# fires in the first join's
	fi_delay_arm
	delayed=1
	sessions=3
	timeout=15000
else
	sessions=20
	timeout=5000
fi
echo 1 >$P/idle_session_sec
log "$sessions sessions, setup delay: $delayed; before: $base_res"
kmsg "server-path-join-race: $sessions sessions"
rc=0
"$tool" --server "$RXE_ADDR" --cases join-race --race-sessions $sessions \
	--flood-qd 128 --idle-wait $((30 * S)) --timeout $((timeout * S)) \
	>"$out" 2>&1 || rc=$?
cleanup_race
trap - EXIT
grep '^hostile: join-race:' "$out"
[ $rc = 0 ] || die "rnbd-hostile exited $rc: $(tail -3 "$out")"

# every session was closed by the server, after at least one join
closed=$(grep -c '^case join-race: .* -> session closed$' "$out" || true)
expect_eq "sessions the server closed" "$closed" "$sessions"
counts=$(sed -n 's/^hostile: join-race: session [0-9]*: \([0-9]*\) joins accepted, \([0-9]*\) rejected (\([0-9]*\) ECONNRESET), \([0-9]*\) other.*/\1 \2 \3 \4/p' "$out")
joins=$(echo "$counts" | awk '{ n += $1 + $2 + $4 } END { print n + 0 }')
[ "$joins" -ge "$sessions" ] || die "only $joins joins in $sessions sessions"
# a join whose setup the close overtook is refused ECONNRESET: the race
# was run (on Debian's kernel in about 4 sessions of 10; with the delay in
# each)
hit=$(echo "$counts" | awk '$3 > 0 { n++ } END { print n + 0 }')
log "$joins joins; in $hit sessions the close overtook a join's setup"
if [ $delayed = 1 ]; then
	expect_eq "sessions whose close overtook a join's setup" "$hit" "$sessions"
	# the idle close met a path in its setup: path 1 closed for it
	n=$(klog | grep -c '/1: closing: no device open for idle_session_sec' || true)
	[ "$n" -ge "$sessions" ] ||
		die "path 1 closed by the idle timer $n times, expected $sessions"
else
	[ "$hit" -ge 1 ] || die "no close overtook a join's setup in $sessions sessions"
fi

# nothing of the sessions stays on the server
i=0
until [ "$(rdma_res_counts)" = "$base_res" ]; do
	i=$((i + 1))
	[ $i -lt $((600 * S)) ] ||
		die "RDMA objects left 60 s after the race: $(rdma_res_counts), before $base_res"
	sleep 0.1
done
for d in /sys/class/rtrs-server/*; do
	[ -e "$d" ] || continue
	die "session $(basename "$d") left on the server"
done
log "after: $(rdma_res_counts)"
