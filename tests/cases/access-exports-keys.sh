# SPDX-License-Identifier: GPL-2.0-only
# desc: exports per host and host keys, one guest: with exports=listed a
#       map of something not exported to the session's host fails with
#       EACCES, the same for a path that does not exist; an export that
#       names a host refuses it until it proved a key (a name is only a
#       claim; rnbdctl says so at export add), one for any host serves
#       hosts without; a read-only export refuses a rw map; a host with a
#       key must prove it (none or a wrong one: EKEYREJECTED); the server
#       shows the host of each session (sysfs, rnbdctl list) and never a
#       key; removing an export closes the host's device of it within 5 s
#       (its IO fails) while another host's device goes on with 0 errors;
#       a key rotation (second key on the server, rnbdctl key set, old
#       key removed) under verified writes: 0 errors, one reconnect;
#       removing the last key closes the device of the session that
#       proved it
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
. "$REPO/tests/lib/rnbdctl.sh"
kmsg "access-exports-keys: start"
rnbd_setup
SCTL=/sys/class/rnbd-server/ctl
CCTL=/sys/class/rnbd-client/ctl
HN=/sys/module/rnbd_client/parameters/hostname
nbA=$(nullb_create nullb1 64)
nbB=$(nullb_create nullb2 64)
genkey() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
map_as() {	# HOST SESS DEV [OPTS...]: prints OK or the errno name
	h=$1 s=$2 d=$3
	shift 3
	echo "$h" >$HN
	sysfs_write "$MAP_CTL" "sessname=$s path=ip:$RXE_ADDR device_path=$d $*"
}
newdev() {	# the rnbd device of session $1
	for d in /sys/block/rnbd*; do
		[ "$(cat $d/rnbd/session 2>/dev/null)" = "$1" ] && { basename $d; return; }
	done
	die "no device of session $1"
}
# one guest plays several client hosts, and a client host has one key:
# each map_as of a keyed host sets its key first
use_key() { echo "${1:-none}" >$CCTL/host_key || die "client host_key $1"; }

# -- listed mode, nothing exported
echo listed >/sys/module/rnbd_server/parameters/exports
expect_eq "exports mode" "$(cat /sys/module/rnbd_server/parameters/exports)" listed
expect_eq "nothing exported" "$(map_as hostA a0 "$nbA")" EACCES
expect_eq "a path that does not exist" "$(map_as hostA a1 /dev/nullb9)" EACCES
klog | grep -q "host hostA may not open $nbA read-write: refused" ||
	die "no server line for the refused map"
expect_eq "a host name with a newline inside" \
	"$(sysfs_write $HN "$(printf 'a\nb')")" EINVAL
expect_eq "a host name with a '/'" "$(sysfs_write $HN "a/b")" EINVAL

# -- exports: a named host needs a key, '*' serves hosts without
KA=$(genkey)
KB=$(genkey)
ctl 0 export add "$nbA" --host hostA
err_has "note: host hostA has no key on this server"
expect_eq "hostA, its export, no key yet" "$(map_as hostA a2 "$nbA")" EACCES
klog | grep -q "an export names host hostA, which proved no key" ||
	die "no server line for a named host without a key"
echo "add hostA rnbd:$KA" >$SCTL/host_key || die "host_key add"
echo "add hostB rnbd:$KB" >$SCTL/host_key || die "host_key add"
[ "$(stat -c %a $SCTL/host_key)" = 200 ] || die "host_key is readable"
grep -q "$KA\|$KB" $SCTL/hosts && die "a key is shown"
expect_eq "hosts with keys" "$(cut -d' ' -f1 $SCTL/hosts | sort | paste -sd' ')" "hostA hostB"
ctl 0 export add "$nbB" --ro
expect_eq "exports" "$(cat $SCTL/exports)" "$nbA hostA rw
$nbB * ro"
use_key "rnbd:$KB"
expect_eq "hostB, hostA's export" "$(map_as hostB b0 "$nbA")" EACCES
expect_eq "hostB, rw of a ro export" "$(map_as hostB b1 "$nbB")" EACCES
use_key
expect_eq "hostC (no key), ro of the export for any host" \
	"$(map_as hostC c2 "$nbB" access_mode=ro)" OK
devB=$(newdev c2)
use_key "rnbd:$KA"
expect_eq "hostA, its export, with its key" "$(map_as hostA a2 "$nbA")" OK
devA=$(newdev a2)
# the server names the host of each session, in its log, sysfs and rnbdctl
klog | grep -q "connected, host hostA" || die "no server line with host hostA"
klog | grep -q "connected, host hostC" || die "no server line with host hostC"
ctl 0 show
out_has ", host hostA"
ctl 0 --json list
json "sorted(x['hostname'] for x in d['exports'])" "['hostA', 'hostC']"
for s in /sys/class/rtrs-server/*; do
	h=$(cat "$s/hostname")
	case $h in hostA|hostC) ;; *) die "server session $(basename "$s"): host '$h'" ;; esac
done
seed=$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')
fio --name=v --filename=/dev/$devA --ioengine=libaio --direct=1 --rw=randwrite \
	--bs=4k --iodepth=8 --size=16M --randseed=$seed --verify=crc32c \
	--verify_fatal=1 --verify_state_save=0 >/tmp/fio.out 2>&1 ||
	{ cat /tmp/fio.out; die "fio on $devA"; }

# -- revocation: hostA's export goes under IO; hostC's device goes on
fio --name=v --filename=/dev/$devB --ioengine=libaio --direct=1 --rw=randread \
	--bs=4k --iodepth=4 --runtime=$((15 * S)) --time_based >/tmp/fioB.out 2>&1 &
fioB=$!
fio --name=w --filename=/dev/$devA --ioengine=libaio --direct=1 --rw=randwrite \
	--bs=4k --iodepth=4 --runtime=60 --time_based >/tmp/fioA.out 2>&1 &
fioA=$!
# IO running on both before the removal: under TCG fio takes seconds to
# start (8 s and about 24 s seen on the debug kernel), and a fio that
# starts after it meets a closed device, which times fio's start, not the
# revocation of IO in flight
wait_io_flowing "$devA" 20
wait_io_flowing "$devB" 20
# the sysfs write, not rnbdctl: python3 takes seconds to start in a
# loaded TCG guest, and the 5 s count from the removal
t0=$(date +%s%N)
echo "remove $nbA hostA" >$SCTL/exports || die "export remove"
wait $fioA && die "IO on the revoked device went on"
t1=$(date +%s%N)
log "the revoked device's IO failed after $(((t1 - t0) / 1000000)) ms"
wA=$(sed -n 's/.*issued rwts: total=[0-9]*,\([0-9]*\),.*/\1/p' /tmp/fioA.out)
log "hostA's fio issued $wA writes"
[ -n "$wA" ] && [ "$wA" -ge 20 ] ||
	{ cat /tmp/fioA.out; die "hostA's fio had no IO running at the removal"; }
[ $(((t1 - t0) / 1000000)) -le $((5000 * S)) ] || die "revocation took more than 5 s"
klog | grep -q "host hostA may no longer have $nbA open: closed" ||
	die "no server line for the revocation"
wait $fioB || { cat /tmp/fioB.out; die "hostC's IO failed"; }
grep -q 'err= *0' /tmp/fioB.out || die "no fio report for hostC"
unmap_dev "$devA"
unmap_dev "$devB"
echo "add $nbA hostA rw" >$SCTL/exports || die "export add again"

# -- host keys: a host with one must prove it
idA=$(awk '$1 == "hostA" { print $2 }' $SCTL/hosts)
use_key
expect_eq "hostA without a key" "$(map_as hostA a3 "$nbA")" EKEYREJECTED
use_key "rnbd:$KB"
expect_eq "hostA with a wrong key" "$(map_as hostA a4 "$nbA")" EKEYREJECTED
klog | grep -q "host hostA refused" || die "no server line for the refused key"
use_key "rnbd:$KA"
expect_eq "hostA with its key" "$(map_as hostA a5 "$nbA")" OK
devA5=$(newdev a5)
klog | grep -q "host hostA authenticated" || die "no server line for the authentication"

# -- a rotation under verified writes: a second key on the server, rnbdctl
# key set on the client (its path proves the new key), the old key
# removed: the device goes on with 0 errors
KA2=$(genkey)
echo "add hostA rnbd:$KA2" >$SCTL/host_key || die "host_key add, second"
expect_eq "hostA's keys" "$(awk '$1 == "hostA" { print NF - 1 }' $SCTL/hosts)" 2
(umask 077; echo "rnbd:$KA2" >/tmp/ka2)
seed=$(od -An -tu4 -N4 /dev/urandom | tr -d ' ')
fio --name=r --filename=/dev/$devA5 --ioengine=libaio --direct=1 --rw=randwrite \
	--bs=4k --iodepth=4 --size=32M --runtime=$((20 * S)) --time_based \
	--randseed=$seed --verify=crc32c --verify_backlog=32 --verify_fatal=1 \
	--verify_state_save=0 >/tmp/fioR.out 2>&1 &
fioR=$!
sleep 2
rc0=$(cut -d' ' -f1 /sys/class/rtrs-client/a5/paths/*/stats/reconnects)
ctl 0 key set /tmp/ka2
expect_eq "a5's reconnects for the new key" \
	"$(cut -d' ' -f1 /sys/class/rtrs-client/a5/paths/*/stats/reconnects)" $((rc0 + 1))
ctl 0 host-key remove hostA --key-id "$idA"
sleep 3
wait $fioR || { cat /tmp/fioR.out; die "IO failed across the rotation"; }
grep -q 'err= *0' /tmp/fioR.out || die "no fio report for the rotation"
klog | grep -q "may no longer have $nbA open (" &&
	die "the rotation closed the device"
expect_eq "hostA's keys after the rotation" \
	"$(awk '$1 == "hostA" { print NF - 1 }' $SCTL/hosts)" 1

# -- removing the last key closes the device of the session that proved it
echo "remove hostA" >$SCTL/host_key || die "host_key remove"
i=0
until klog | grep -q "host hostA may no longer have $nbA open (its session's key is not one the host has): closed"; do
	i=$((i + 1)); [ $i -lt $((50 * S)) ] || die "no revocation by key"; sleep 0.1
done
dd if=/dev/$devA5 of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null &&
	die "IO on a device whose key was removed"
klog | grep -qi "$KA\|$KB\|$KA2" && die "a key in the kernel log"
unmap_dev "$devA5"
use_key
echo "remove hostB" >$SCTL/host_key || die "host_key remove"
ctl 0 export remove "$nbA"
echo "remove $nbB" >$SCTL/exports || die "export remove"
expect_eq "exports left" "$(cat $SCTL/exports)" ""
echo all >/sys/module/rnbd_server/parameters/exports
echo "" >$HN
client_sessions_gone 30
unload_rnbd
true
