# SPDX-License-Identifier: GPL-2.0-only
# desc: an md raid1 mirror across two servers (server A on link 0, server
#       B on link 1, the client on both), legs --failfast, internal
#       bitmap, each session's loss_timeout_sec 2, udevd with
#       tools/udev/60-rnbd.rules and 65-rnbd-md.rules (and mdadm's own):
#       (1) fio write+verify (fresh seed) on the mirror; (2) server A's
#       QEMU SIGKILLed under the writes: md fails A's leg within the
#       heartbeat timeout plus the loss timeout plus 8 s, fio ends with 0
#       errors and every block verified, its slowest write (the stall)
#       within the same bound; (3) server A booted again: its leg is back
#       in the array and in sync within 120 s with no command from the
#       test (the client's "reconnected" uevent, the md hook's --re-add,
#       its log line), the resync writes only the bitmap's dirty chunks
#       (the sectors written to A's leg, reported); (4) server B killed:
#       the mirror reads back from A alone what B had (sha256 of fio's
#       region), a write goes on with A alone; (5) the client reboots with
#       B still down: rnbdtab (nofail, loss_timeout=2) maps A's leg,
#       mdadm's udev rule assembles the array and mdadm --run (what
#       mdadm-last-resort@.service does) starts it degraded, the data
#       reads back; B booted again: map-all --retry (what
#       rnbdmap-retry.timer runs) maps its leg, udev takes it back, the
#       resync writes only the chunk B missed, and md's check finds the
#       legs equal.  Every guest's console is scanned, the killed ones' too
# boot: host
# timeout: 2000
. "$REPO/tests/lib/host.sh"
pair_bed
imgA=$CASE_RESULTS/disk-a.img
imgB=$CASE_RESULTS/disk-b.img
rm -f "$imgA" "$imgB"
truncate -s 160M "$imgA"
truncate -s 160M "$imgB"
for a in a1 a2; do
	cat >"$sync/../server${a^^}.sh" <<G
. "\$REPO/tests/lib/guest.sh"
pair_server $a-ready
sleep 100000
G
done
for b in b b2; do
	cat >"$sync/../server${b^^}.sh" <<G
. "\$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.11.0.1/24
load_rnbd_server
touch /sync/$b-ready
sleep 100000
G
done
# what both boots of the client start with
cat >"$sync/client-common.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
S=${RNBD_TIMEOUT_SCALE:-1}
HB=10		# heartbeat_timeout_sec: not scaled, the kernel's
LOSS=2		# loss_timeout_sec of both sessions
BOUND=$((HB + LOSS + 8))
md=/sys/block/md0/md
# leg_state DEV: its state in the array of $md
leg_state() {
	cat $md/dev-$1/state 2>/dev/null || echo gone
}
# dev_of SESSION: the rnbd disk mapped in SESSION
dev_of() {
	(cd /sys/block && grep -lx "$1" rnbd*/rnbd/session | cut -d/ -f1)
}
# wait_in_sync DEV WHAT: DEV back in the array, which is whole and idle,
# within 120 s
wait_in_sync() {
	local i=0
	until [ "$(leg_state $1)" = in_sync,failfast ] &&
		[ "$(cat $md/degraded)" = 0 ] && [ "$(cat $md/sync_action)" = idle ]; do
		i=$((i + 1))
		[ $i -le $((1200 * S)) ] ||
			die "$2: not in sync 120 s on: $(leg_state $1), $(cat /proc/mdstat)"
		sleep 0.1
	done
}
setup_links client
load_rnbd_client
rules=/run/udev/rules.d
mkdir -p $rules
cp "$REPO/tools/udev/60-rnbd.rules" "$REPO/tools/udev/65-rnbd-md.rules" $rules/
install -m 0755 "$REPO/tools/udev/rnbd-namer" /lib/udev/rnbd-namer
install -m 0755 "$REPO/tools/udev/rnbd-md" /lib/udev/rnbd-md
# the journal's part: the md hook logs with logger(1); not on the test's
# output, which the guest waits for every writer of
busybox syslogd -n -O /tmp/syslog </dev/null >/dev/null 2>&1 &
/lib/systemd/systemd-udevd --daemon
udevadm settle -t $((30 * S))
G
cat >"$sync/../client.sh" <<'G'
. /sync/client-common.sh
wait_sync /sync/a1-ready $((300 * S))
wait_sync /sync/b-ready $((300 * S))
devA=$(MAP_ADDR=10.10.0.1 map_dev mA /dev/vda)
devB=$(MAP_ADDR=10.11.0.1 map_dev mB /dev/vda)
for s in mA mB; do
	echo $LOSS >/sys/class/rtrs-client/$s/loss_timeout_sec
done
mdadm --create /dev/md0 --run --level=1 --raid-devices=2 --metadata=1.2 \
	--size=128M --bitmap=internal --bitmap-chunk=1M --assume-clean \
	--failfast /dev/$devA /dev/$devB >/tmp/mdadm.out 2>&1 ||
	{ cat /tmp/mdadm.out; die "mdadm --create"; }
udevadm settle -t $((30 * S))
for d in $devA $devB; do
	expect_eq "$d in the new mirror" "$(leg_state $d)" in_sync,failfast
done

# (1), (2): fio on the mirror, server A killed a few seconds in; the
# writes fio makes while A is away are what the bitmap marks
kmsg "mirror: fio on md0"
# A quarter of it on the debug kernel (RNBD_TIMEOUT_SCALE 4), where three
# guests on two host cores write at a tenth of the speed.
fio_mp_start md0 $((32 / S))M
fpid=$FIO_PID
wait_io_flowing md0 200
kmsg "mirror: server A killed now"
touch /sync/kill-a
wait_sync /sync/a-killed $((60 * S))
t0=$(date +%s)
i=0
until leg_state $devA | grep -q faulty; do
	i=$((i + 1))
	[ $i -le $((BOUND * 10 * S)) ] ||
		die "A's leg not faulty $((BOUND * S)) s after the kill: $(leg_state $devA), $(cat /proc/mdstat)"
	sleep 0.1
done
log "A's leg faulty $(($(date +%s) - t0)) s after the kill (bound $((BOUND * S)) s)"
expect_eq "B's leg with A gone" "$(leg_state $devB)" in_sync,failfast
# no write waits longer than the bound: the stall
fio_mp_wait $fpid $((BOUND * S))
expect_eq "mirror degraded" "$(cat $md/degraded)" 1
# what B alone has of fio's region
sumB=$(dd if=/dev/md0 bs=1M count=32 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
dirty=$(mdadm -X /dev/$devB | sed -n 's/.* \([0-9]*\) dirty.*/\1/p')
log "bitmap of B's leg: $dirty dirty 1 MiB chunks (fio wrote $((32 / S)) MiB of 128)"
[ -n "$dirty" ] && [ "$dirty" -gt 0 ] && [ "$dirty" -le 33 ] ||
	die "dirty chunks of B's bitmap: '$dirty' (1..33 expected): $(mdadm -X /dev/$devB)"
w0=$(awk '{ print $7 }' /sys/block/$devA/stat)

# (3) A comes back; nothing here touches md: the uevent and the hook do
touch /sync/want-a
wait_sync /sync/a2-ready $((600 * S))
t0=$(date +%s)
wait_in_sync $devA "A's leg after A came back"
log "A's leg back in sync $(($(date +%s) - t0)) s after A was up"
w1=$(awk '{ print $7 }' /sys/block/$devA/stat)
copied=$((w1 - w0))
log "resync wrote $copied sectors to A's leg ($((copied / 2048)) MiB; $dirty dirty chunks of 1 MiB, the mirror 128 MiB)"
# the dirty chunks, plus md's superblock and bitmap writes
[ $copied -le $(((dirty + 1) * 2048)) ] ||
	die "the resync wrote $copied sectors to A's leg: more than the $dirty dirty chunks"
[ $copied -ge $((dirty * 2048)) ] ||
	die "the resync wrote $copied sectors to A's leg: fewer than the $dirty dirty chunks"
grep "rnbd-md" /tmp/syslog | grep "$devA" | grep -q md0 ||
	die "no line of the md hook about $devA in the log: $(cat /tmp/syslog)"
log "the hook said: $(grep rnbd-md /tmp/syslog | grep "$devA" | tail -1)"

# (4) B killed: what A was away for reads back from A alone
touch /sync/kill-b
wait_sync /sync/b-killed $((60 * S))
t0=$(date +%s)
head -c 1048576 /dev/urandom >/tmp/blk
dd if=/tmp/blk of=/dev/md0 bs=1M seek=100 oflag=direct 2>/dev/null ||
	die "a write to the mirror with B killed"
log "a write with B killed: $(($(date +%s) - t0)) s"
[ $(($(date +%s) - t0)) -le $((BOUND * S)) ] ||
	die "a write with B killed stalled more than $((BOUND * S)) s"
expect_eq "B's leg after a write with B killed" "$(leg_state $devB | grep -o faulty)" faulty
sumA=$(dd if=/dev/md0 bs=1M count=32 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
expect_eq "fio's region read from A alone" "$sumA" "$sumB"
expect_eq "the write with B killed" \
	"$(dd if=/dev/md0 bs=1M skip=100 count=1 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" \
	"$(sha256sum </tmp/blk | cut -d' ' -f1)"
echo "$sumA $(sha256sum </tmp/blk | cut -d' ' -f1)" >/sync/sums
# (5) the client reboots, B still down
mdadm --stop /dev/md0 || die "mdadm --stop"
udevadm control --exit
touch /sync/client-done
G
cat >"$sync/../client2.sh" <<'G'
. /sync/client-common.sh
read -r sumB blkB </sync/sums
ctl() {
	"$REPO/tools/rnbdctl/rnbdctl" "$@" >>/tmp/map.out 2>&1
}
# what rnbdmap.service runs at boot; B does not answer (nofail)
printf '%s\n' "mA ip:10.10.0.1 /dev/vda rw nofail,loss_timeout=$LOSS" \
	"mB ip:10.11.0.1 /dev/vda rw nofail,loss_timeout=$LOSS" >/tmp/rnbdtab
ctl map-all --tab /tmp/rnbdtab || { cat /tmp/map.out; die "map-all with B down"; }
grep -q "mA /dev/vda: mapped as" /tmp/map.out ||
	{ cat /tmp/map.out; die "map-all did not map A's leg"; }
devA=$(dev_of mA)
expect_eq "loss_timeout_sec of mA" "$(cat /sys/class/rtrs-client/mA/loss_timeout_sec)" $LOSS
# mdadm's udev rule (--incremental) gathers the array; with a leg missing
# it waits, and mdadm-last-resort@.service starts it degraded at boot
i=0
until ls /sys/block/$devA/holders/ | grep -q md; do
	i=$((i + 1))
	[ $i -le $((300 * S)) ] || die "no array holds A's leg $devA after map-all"
	sleep 0.1
done
mdname=$(ls /sys/block/$devA/holders/)
md=/sys/block/$mdname/md
log "after the reboot: A's leg $devA in $mdname, $(cat $md/array_state)"
[ "$(cat $md/array_state)" != inactive ] || mdadm --run /dev/$mdname >/tmp/run.out 2>&1 ||
	{ cat /tmp/run.out; die "mdadm --run $mdname"; }
expect_eq "$mdname degraded after the reboot" "$(cat $md/degraded)" 1
expect_eq "fio's region, A alone after the reboot" \
	"$(dd if=/dev/$mdname bs=1M count=32 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" "$sumB"
expect_eq "the block written with B killed, after the reboot" \
	"$(dd if=/dev/$mdname bs=1M skip=100 count=1 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" "$blkB"
# B comes back: rnbdmap-retry.timer's command maps its leg, udev (mdadm's
# rule, the md hook) takes it back; nothing else here touches md
touch /sync/want-b
wait_sync /sync/b2-ready $((600 * S))
t0=$(date +%s)
until ctl map-all --retry --tab /tmp/rnbdtab && grep -q "mB /dev/vda: mapped as" /tmp/map.out; do
	[ $(($(date +%s) - t0)) -le $((120 * S)) ] ||
		{ cat /tmp/map.out; die "map-all --retry did not map B's leg in 120 s"; }
	sleep 2
done
devB=$(dev_of mB)
w0=$(awk '{ print $7 }' /sys/block/$devB/stat)
wait_in_sync $devB "B's leg after B came back"
log "B's leg mapped again and in sync $(($(date +%s) - t0)) s after B was up"
copied=$(($(awk '{ print $7 }' /sys/block/$devB/stat) - w0))
log "resync wrote $copied sectors to B's leg (B missed one 1 MiB write)"
[ $copied -le $((2 * 2048)) ] ||
	die "the resync wrote $copied sectors to B's leg: more than the chunk it missed"
[ $copied -ge 2048 ] ||
	die "the resync wrote $copied sectors to B's leg: not the chunk it missed"
# both legs the same: md compares them
echo check >$md/sync_action
i=0
until [ "$(cat $md/sync_action)" = idle ]; do
	i=$((i + 1))
	[ $i -le $((1200 * S)) ] || die "md's check did not end in 120 s"
	sleep 0.1
done
expect_eq "mismatch_cnt after md's check" "$(cat $md/mismatch_cnt)" 0
mdadm --stop /dev/$mdname || die "mdadm --stop"
udevadm control --exit
touch /sync/client2-done
G
srv() {	# srv NAME LINK: a server guest on link LINK, its disk
	local img=$imgA
	[ "$2" = 0 ] || img=$imgB
	start_guest "$1" --timeout 1300 --share "$sync" --disk "$img" \
		--net "$(pair_net $p server "$2")" "$sync/../$1.sh"
}
srv serverA1 0
srv serverB 1
start_guest client --timeout 1400 --share "$sync" \
	--net "$(pair_net $p client 0)" --net "$(pair_net $p client 1)" \
	"$sync/../client.sh"
# the waits stretched as the guests' timeouts are (the debug kernel)
hs=${RNBD_TIMEOUT_SCALE:-1}
step() {	# step FILE SECONDS: wait for the client's FILE
	wait_alive "$sync/$1" $(($2 * hs)) client ||
		{ guest_log client; die "the client did not reach $1"; }
}
step kill-a 600
kill_guest serverA1
touch "$sync/a-killed"
step want-a 600
srv serverA2 0
step kill-b 600
kill_guest serverB
touch "$sync/b-killed"
rc=0
wait_guest client || rc=$?
guest_log client
[ "$rc" = 0 ] || die "client guest status $rc"
[ -e "$sync/client-done" ] || die "the client did not finish"
start_guest client2 --timeout 900 --share "$sync" \
	--net "$(pair_net $p client 0)" --net "$(pair_net $p client 1)" \
	"$sync/../client2.sh"
wait_alive "$sync/want-b" $((600 * hs)) client2 ||
	{ guest_log client2; die "the rebooted client did not reach want-b"; }
srv serverB2 1
wait_guest client2 || rc=$?
guest_log client2
[ "$rc" = 0 ] || die "client2 guest status $rc"
[ -e "$sync/client2-done" ] || die "the rebooted client did not finish"
rm -f "$imgA" "$imgB"
