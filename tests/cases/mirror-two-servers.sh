# SPDX-License-Identifier: GPL-2.0-only
# desc: an md raid1 mirror across two servers (three guests: server A on
#       link 0, server B on link 1, the client on both), legs --failfast,
#       internal bitmap, each session's loss_timeout_sec 2, udevd with
#       tools/udev/60-rnbd.rules and 65-rnbd-md.rules: (1) fio
#       write+verify (fresh seed) on the mirror; (2) server A's QEMU
#       SIGKILLed under the writes: md fails A's leg within the heartbeat
#       timeout plus the loss timeout plus 8 s, fio ends with 0 errors
#       and every block verified, its slowest write (the stall) within the
#       same bound; (3) server A booted again: its leg is back in the array
#       and in sync within 120 s with no command from the test (the
#       client's "reconnected" uevent, the md hook's --re-add), the
#       resync writes only the bitmap's dirty chunks (the sectors written
#       to A's leg, reported, at most the chunks fio touched); (4) server B
#       killed: the mirror reads back from A alone what B had (sha256 of
#       fio's region), a write goes on with A alone.  The hook's log
#       line names the leg and the array.  Every guest's
#       console is scanned, the killed ones' too
# boot: host
# timeout: 1500
. "$REPO/tests/lib/host.sh"
pair_bed
imgA=$CASE_RESULTS/disk-a.img
imgB=$CASE_RESULTS/disk-b.img
rm -f "$imgA" "$imgB"
truncate -s 160M "$imgA"
truncate -s 160M "$imgB"
cat >"$sync/../serverA1.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_server a1-ready
sleep 100000
G
cat >"$sync/../serverA2.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_server a2-ready
sleep 100000
G
cat >"$sync/../serverB.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
setup_rxe eth0 10.11.0.1/24
load_rnbd_server
touch /sync/b-ready
sleep 100000
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
S=${RNBD_TIMEOUT_SCALE:-1}
HB=10		# heartbeat_timeout_sec: not scaled, the kernel's
LOSS=2		# loss_timeout_sec of both sessions
BOUND=$((HB + LOSS + 8))
setup_links client
load_rnbd_client
rules=/run/udev/rules.d
mkdir -p $rules
cp "$REPO/tools/udev/60-rnbd.rules" "$REPO/tools/udev/65-rnbd-md.rules" $rules/
install -m 0755 "$REPO/tools/udev/rnbd-namer" /lib/udev/rnbd-namer
install -m 0755 "$REPO/tools/udev/rnbd-md" /lib/udev/rnbd-md
# the journal's part: the md hook logs with logger(1)
busybox syslogd -n -O /tmp/syslog &
/lib/systemd/systemd-udevd --daemon
udevadm settle -t $((30 * S))
wait_sync /sync/a1-ready 300
wait_sync /sync/b-ready 300
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
md=/sys/block/md0/md
leg_state() {
	cat $md/dev-$1/state 2>/dev/null || echo gone
}
for d in $devA $devB; do
	expect_eq "$d in the new mirror" "$(leg_state $d)" in_sync,failfast
done

# (1), (2): fio on the mirror, server A killed a few seconds in; the
# writes fio makes while A is away are what the bitmap marks
kmsg "mirror: fio on md0"
fio_mp_start md0 32M
fpid=$FIO_PID
wait_io_flowing md0 200
kmsg "mirror: server A killed now"
touch /sync/kill-a
wait_sync /sync/a-killed 60
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
log "bitmap of B's leg: $dirty dirty 1 MiB chunks (fio wrote 32 MiB of 128)"
[ -n "$dirty" ] && [ "$dirty" -gt 0 ] && [ "$dirty" -le 33 ] ||
	die "dirty chunks of B's bitmap: '$dirty' (1..33 expected): $(mdadm -X /dev/$devB)"
w0=$(awk '{ print $7 }' /sys/block/$devA/stat)

# (3) A comes back; nothing here touches md: the uevent and the hook do
touch /sync/want-a
wait_sync /sync/a2-ready 600
t0=$(date +%s)
i=0
until [ "$(leg_state $devA)" = in_sync,failfast ] &&
	[ "$(cat $md/degraded)" = 0 ] && [ "$(cat $md/sync_action)" = idle ]; do
	i=$((i + 1))
	[ $i -le $((1200 * S)) ] ||
		die "A's leg not back in sync 120 s after A came: $(leg_state $devA), $(cat /proc/mdstat)"
	sleep 0.1
done
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
wait_sync /sync/b-killed 60
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
mdadm --stop /dev/md0 || die "mdadm --stop"
udevadm control --exit
touch /sync/client-done
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
step() {	# step FILE SECONDS: wait for the client's FILE
	wait_alive "$sync/$1" "$2" client ||
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
rm -f "$imgA" "$imgB"
