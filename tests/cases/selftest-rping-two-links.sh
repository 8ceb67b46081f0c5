# SPDX-License-Identifier: GPL-2.0-only
# desc: the multipath test bed without rnbd: two guests joined by two
#       links (eth0 10.10.0.0/24, eth1 10.11.0.0/24), an rxe device on
#       each (rxe0, rxe1); rping works over each link, on that link's rxe
#       device only (rdma_cm routes each subnet to its own device), and
#       over both at once; link_netem silences link 2 at both ends (rping
#       over it fails, link 1 still works), then delays it (40 ms more
#       round trip, link 1 unchanged, rping still works), then restores it
#       (RNBD_LONG=1 only: the multipath cases boot the same two-link bed
#       and fail if it is broken)
# boot: host
# long: yes
# timeout: 420
. "$REPO/tests/lib/host.sh"
pair_bed
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_links server
netem_follow >/tmp/netem.log 2>&1 &
nf=$!
stdbuf -oL rping -s -P -a 10.10.0.1 -v >/tmp/rping0.log 2>&1 &
r0=$!
stdbuf -oL rping -s -P -a 10.11.0.1 -v >/tmp/rping1.log 2>&1 &
r1=$!
i=0
until [ "$(rdma resource show cm_id 2>/dev/null | grep 'comm rping' | grep -c LISTEN)" = 2 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || die "the two rping servers never listened"
	sleep 0.1
done
touch /sync/server-ready
wait_sync /sync/client-done 300
kill $r0 $r1 $nf
cat /tmp/netem.log
# each server answered on its own link (line-buffered output: the
# servers are killed): the pings of the client's runs
# (link 1: 5 alone, 5 beside link 2, 5 with link 2 silent; link 2: 5
# alone, 5 beside link 1, 5 delayed, 5 restored)
n0=$(grep -c 'ping data' /tmp/rping0.log || true)
n1=$(grep -c 'ping data' /tmp/rping1.log || true)
log "server pings answered: link 1 $n0, link 2 $n1"
[ "$n0" -ge 15 ] || { cat /tmp/rping0.log; die "link 1 server answered $n0 pings"; }
[ "$n1" -ge 20 ] || { cat /tmp/rping1.log; die "link 2 server answered $n1 pings"; }
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_links client
for l in 0 1; do
	rdma link show "rxe$l/1" | grep -q "netdev eth$l" || die "rxe$l is not on eth$l"
done
wait_sync /sync/server-ready 300
# rping_link ADDR RXE OTHER: 5 pings to ADDR, carried by RXE alone
rping_link() {
	a0=$(rxe_pkts "$2")
	o0=$(rxe_pkts "$3")
	timeout 60 rping -c -a "$1" -C 5 -v >/tmp/rping.log 2>&1 ||
		{ cat /tmp/rping.log; die "rping $1 failed"; }
	expect_eq "pings to $1" "$(grep -c 'ping data' /tmp/rping.log)" 5
	a1=$(rxe_pkts "$2")
	o1=$(rxe_pkts "$3")
	log "rping $1: $2 sent/received $a0 -> $a1, $3 $o0 -> $o1"
	if [ $((${a1% *} - ${a0% *})) -lt 10 ] || [ $((${a1#* } - ${a0#* })) -lt 10 ]; then
		die "rping $1 did not go through $2"
	fi
	expect_eq "$3 packets during rping $1 (another device's)" "$o1" "$o0"
}
rping_link 10.10.0.1 rxe0 rxe1
rping_link 10.11.0.1 rxe1 rxe0
# both links at once
timeout 60 rping -c -a 10.10.0.1 -C 5 -v >/tmp/both0.log 2>&1 &
b0=$!
timeout 60 rping -c -a 10.11.0.1 -C 5 -v >/tmp/both1.log 2>&1 ||
	{ cat /tmp/both1.log; die "rping over link 2 beside link 1"; }
wait $b0 || { cat /tmp/both0.log; die "rping over link 1 beside link 2"; }
expect_eq "pings over link 1 beside link 2" "$(grep -c 'ping data' /tmp/both0.log)" 5
expect_eq "pings over link 2 beside link 1" "$(grep -c 'ping data' /tmp/both1.log)" 5

# link 2 silent at both ends: rping over it fails, link 1 works
link_netem eth1 loss 100%
tc qdisc show dev eth1 | grep -q 'netem.*loss 100%' || die "no netem on eth1"
st=0
timeout 15 rping -c -a 10.11.0.1 -C 1 -v >/tmp/rping-cut.log 2>&1 || st=$?
log "rping over the silent link 2: status $st"
if [ "$st" = 0 ] || grep -q 'ping data' /tmp/rping-cut.log; then
	cat /tmp/rping-cut.log
	die "rping went through a silent link 2"
fi
timeout 60 rping -c -a 10.10.0.1 -C 5 -v >/tmp/rping.log 2>&1 ||
	{ cat /tmp/rping.log; die "rping over link 1 while link 2 is silent"; }
expect_eq "pings over link 1 while link 2 is silent" "$(grep -c 'ping data' /tmp/rping.log)" 5

# link 2 delayed 20 ms at both ends: 40 ms more round trip, link 1 as fast
link_netem eth1 delay 20ms
avg_rtt() {	# avg_rtt ADDR: mean ICMP round trip in ms, integer
	busybox ping -c 5 -i 0.2 "$1" >/tmp/ping.log 2>&1 || { cat /tmp/ping.log; die "ping $1"; }
	sed -n 's|.*min/avg/max = [0-9.]*/\([0-9]*\).*|\1|p' /tmp/ping.log
}
rtt1=$(avg_rtt 10.11.0.1)
rtt0=$(avg_rtt 10.10.0.1)
log "round trip: link 1 $rtt0 ms, link 2 (delayed) $rtt1 ms"
[ "$rtt1" -ge 40 ] || die "link 2's round trip is $rtt1 ms with 20 ms of netem delay at each end"
[ "$rtt0" -lt 20 ] || die "link 1's round trip is $rtt0 ms: the delay is not link 2's alone"
rping_link 10.11.0.1 rxe1 rxe0

# link 2 restored
link_netem eth1
tc qdisc show dev eth1 | grep -q netem && die "netem still on eth1"
rtt1=$(avg_rtt 10.11.0.1)
log "link 2 restored: round trip $rtt1 ms"
[ "$rtt1" -lt 20 ] || die "link 2's round trip is still $rtt1 ms"
rping_link 10.11.0.1 rxe1 rxe0
touch /sync/client-done
G
pair_run 360 2
