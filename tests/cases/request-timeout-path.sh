# SPDX-License-Identifier: GPL-2.0-only
# desc: blk-mq's request timeout is the only one, and it takes down the
#       request's own path only: a two-path session in one guest, one of
#       its devices on a disk that hangs (a suspended dm device); a read
#       of it unanswered for the disk's io_timeout reconnects the path it
#       waits on, the log names path and slot, the other path stays
#       connected and carries the verified writes of the session's other
#       device (0 errors), the session is never down; once the disk
#       resumes the read returns the data written before; the
#       io_timeout_sec file of the session is gone
# boot: shared
# timeout: 300
S=${RNBD_TIMEOUT_SCALE:-1}
kmsg "request-timeout-path: start"
rnbd_setup
modprobe dm_mod || die "modprobe dm_mod"
A1=$RXE_ADDR
A2=10.9.1.1
ip addr add $A2/24 dev "$RXE_NETDEV" || die "second address"
P1="ip:$A1@ip:$A1"
P2="ip:$A2@ip:$A2"
nbA=$(nullb_create nullb1 64)
nbH=$(nullb_create nullb2 16)
dmsetup create rnbdtmo --table "0 $((16 * 2048)) linear $nbH 0" || die "dmsetup create"
hangdev=/dev/$(basename "$(readlink -f "/sys/dev/block/$(dmsetup info -c --noheadings -o major,minor rnbdtmo | tr -d ' ')")")
udev_wait "$hangdev"
# On any exit the hung bio ends, so the cleanup after the case can unload,
# and the second address goes, for the next case of a shared boot.
trap 'dmsetup resume rnbdtmo 2>/dev/null; ip addr del $A2/24 dev "$RXE_NETDEV" 2>/dev/null' EXIT

devA=$(mp_map tmo "$nbA" "$P1" "$P2") || exit 1
devH=$(mp_map tmo "$hangdev" "$P1" "$P2") || exit 1
expect_eq "paths" "$(mp_paths tmo | tr '\n' ' ')" "$P1 $P2 "
# the session's files are the ABI's, io_timeout_sec gone (a stale entry in
# the attribute list once read past its array: KASAN only saw it)
expect_eq "the session's files" "$(ls "$MP_CLASS/tmo" | tr '\n' ' ')" \
	"add_path loss_timeout_sec max_reconnect_attempts mpath_policy paths power reconnect_delay_sec subsystem uevent "
for f in reconnect_delay_sec loss_timeout_sec max_reconnect_attempts mpath_policy add_path; do
	grep -q "^What:.*/rtrs-client/<sessname>/$f\$" "$REPO/Documentation/ABI/testing/sysfs-class-rtrs-client" ||
		die "$f is not in the ABI document"
done
# a path taken down is back within 1..2 s, long before the next timeout
echo 1 >"$MP_CLASS/tmo/reconnect_delay_sec" || die "reconnect_delay_sec"
tmo=$((8 * S))
echo $((tmo * 1000)) >"/sys/block/$devH/queue/io_timeout" || die "io_timeout"

# what the read must return once the disk resumes
dd if=/dev/urandom of=/tmp/tmo-blk bs=4k count=1 2>/dev/null
dd if=/tmp/tmo-blk of="/dev/$devH" bs=4k count=1 seek=7 oflag=direct 2>/dev/null ||
	die "writing the block"
want=$(sha256sum </tmp/tmo-blk)
r1=$(mp_reconnects tmo "$P1")
r2=$(mp_reconnects tmo "$P2")

kmsg "suspending $hangdev"
dmsetup suspend --nolockfs rnbdtmo || die "dmsetup suspend"
t0=$(date +%s)
dd if="/dev/$devH" of=/tmp/tmo-got bs=4k count=1 skip=7 iflag=direct 2>/tmp/tmo-dd.err &
dpid=$!
# the other device: verified writes on both paths across the timeout
# (200 a second for 15 s, then the verify pass)
fio_outage_start "$devA" 12M
i=0
until klog | grep -q 'unanswered'; do
	i=$((i + 1)); [ $i -lt $(((tmo + 20) * 10)) ] || die "no request timeout in $((tmo + 20)) s"
	sleep 0.1
done
log "request timeout after $(($(date +%s) - t0)) s"
# the path comes back (1..2 s) while the disk still hangs, then the disk
sleep $((3 * S))
kmsg "resuming $hangdev"
dmsetup resume rnbdtmo || die "dmsetup resume"
wait $dpid || { cat /tmp/tmo-dd.err; die "the read of the hung device failed"; }
expect_eq "the block read after the timeout" "$(sha256sum </tmp/tmo-got)" "$want"
fio_wait_ok "$FIO_PID"
klog | grep 'unanswered'

# exactly one path reconnected, the one the log names, and the session
# was never down
a=$(($(mp_reconnects tmo "$P1") - r1))
b=$(($(mp_reconnects tmo "$P2") - r2))
log "reconnects: path 0 $a, path 1 $b"
expect_eq "paths that reconnected" "$a$b" "$(klog | grep -q 'tmo: path 0: request' && echo 10 || echo 01)"
klog | grep -q 'session tmo: lost its connection' && die "the whole session went down"
expect_eq "request timeouts" "$(klog | grep -Ec 'tmo: path [01]: request on slot [0-9]+ unanswered \((no reply|replied), ')" 1
klog | grep -Eq "session tmo: request [0-9]+ \(op 0\) of $devH unanswered for $tmo s; reconnecting its path" ||
	die "no line of the client about the timed-out read"
mp_wait_state tmo "$P1" connected 30
mp_wait_state tmo "$P2" connected 30
klog | grep -Eq 'I/O error.*(rnbd|dm-)' && die "an IO error in dmesg"

for d in $devA $devH; do
	expect_eq "unmap $d" "$(sysfs_write /sys/block/$d/rnbd/unmap_device normal)" OK
done
trap - EXIT
dmsetup remove --retry rnbdtmo || die "dmsetup remove"
ip addr del $A2/24 dev "$RXE_NETDEV" || die "second address not removed"
