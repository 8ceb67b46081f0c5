# SPDX-License-Identifier: GPL-2.0-only
# desc: a path's admin files under fio write+verify, on a session with two
#       paths (one per link, rxe0 and rxe1), round-robin: (0) first a
#       one-path session over link 2 alone (path=SRC@DST, no multipath
#       needed): it uses rxe1 and nothing goes over rxe0; then (1)
#       disconnect of path 2: "disconnected", and stays so past the
#       reconnect delay with no reconnect attempt, carries nothing while
#       IO goes on over path 1; (2) reconnect: connected, takes traffic;
#       (3) remove_path: its directory goes, and remove_path of the last
#       path fails with EBUSY; (4) add_path SRC@DST puts it back,
#       connected, taking traffic; (5) disconnect of path 1: the session
#       runs on link 2 alone, then path 1 reconnects.  Every fio ends
#       with 0 errors and no request waits 10 s; nothing is left in
#       flight, no IO error is logged
#       (RNBD_LONG=1 only: multipath-loopback disconnects, reconnects,
#       removes and adds back a path under fio in one guest)
# boot: host
# long: yes
# timeout: 900
. "$REPO/tests/lib/host.sh"
pair_bed 256M
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
mp_server 800
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
S=${RNBD_TIMEOUT_SCALE:-1}
mp_client
P1=$MP_PATH1
P2=$MP_PATH2
C=$MP_CLASS/mp
# an admin operation makes no request wait this long
lat=$((10 * S))

# (0) one path, over link 2 alone: the bed under rnbd, no multipath needed
x0=$(rxe_pkts rxe0)
y0=$(rxe_pkts rxe1)
dev=$(mp_map one /dev/vda "$P2") || exit 1
mp_check_path one "$P2" rxe1
head -c 4194304 /dev/urandom >/tmp/p
dd if=/tmp/p of="/dev/$dev" bs=1M oflag=direct conv=fsync 2>/dev/null || die "dd to $dev"
expect_eq "read back over link 2" "$(sha_dev "/dev/$dev" 4194304)" "$(sha256sum </tmp/p | cut -d' ' -f1)"
unmap_dev "$dev" || die "unmap one"
[ ! -e "$MP_CLASS/one" ] || die "session one still there after the unmap"
x1=$(rxe_pkts rxe0)
y1=$(rxe_pkts rxe1)
log "one path over link 2: rxe1 sent/received $y0 -> $y1, rxe0 $x0 -> $x1"
expect_eq "rxe0 packets of a session on link 2" "$x1" "$x0"
[ $((${y1% *} - ${y0% *})) -ge 1024 ] || die "4 MiB written and read over link 2 but rxe1 sent only $((${y1% *} - ${y0% *})) packets"

dev=$(mp_map mp /dev/vda "$P1" "$P2") || exit 1
expect_eq "paths" "$(mp_paths mp | tr '\n' ' ')" "$P1 $P2 "
mp_check_path mp "$P1" rxe0
mp_check_path mp "$P2" rxe1
mp_policy mp round-robin
rdelay=$(cat "$C/reconnect_delay_sec")

# (1) disconnect path 2
fio_mp_start "$dev" 16M
fpid=$FIO_PID
wait_io_flowing "$dev"
kmsg "disconnect path 2"
expect_eq "disconnect of path 2" "$(sysfs_write "$C/paths/$P2/disconnect" 1)" OK
mp_wait_state mp "$P2" disconnected 10
sleep 1
q0=$(mp_reqs mp "$P2")
n0=$(dev_ios "$dev")
rc0=$(cat "$C/paths/$P2/stats/reconnects")
sleep $((rdelay + 3))
expect_eq "path 2, $((rdelay + 3)) s after its disconnect" "$(mp_state mp "$P2")" disconnected
expect_eq "path 1 with path 2 disconnected" "$(mp_state mp "$P1")" connected
expect_eq "requests on the disconnected path 2" "$(mp_reqs mp "$P2")" "$q0"
expect_eq "reconnects (done, failed) of the disconnected path 2" \
	"$(cat "$C/paths/$P2/stats/reconnects")" "$rc0"
n1=$(dev_ios "$dev")
log "$((n1 - n0)) requests in $((rdelay + 3)) s with path 2 disconnected"
[ $((n1 - n0)) -ge $(((rdelay + 3) * 50 / S)) ] || die "IO stalled with path 2 disconnected"
# (2) reconnect it
kmsg "reconnect path 2"
expect_eq "reconnect of path 2" "$(sysfs_write "$C/paths/$P2/reconnect" 1)" OK
mp_wait_state mp "$P2" connected 30
mp_check_path mp "$P2" rxe1
kill -0 "$fpid" 2>/dev/null || log "(fio ended before path 2 reconnected)"
fio_mp_wait "$fpid" "$lat"
mp_takes_traffic mp "$P2" "$dev"

# (3) remove path 2; the last path stays
fio_mp_start "$dev" 8M
fpid=$FIO_PID
wait_io_flowing "$dev"
kmsg "remove path 2"
expect_eq "remove_path of path 2" "$(sysfs_write "$C/paths/$P2/remove_path" 1)" OK
mp_wait_state mp "$P2" gone 10
expect_eq "paths after remove_path" "$(mp_paths mp)" "$P1"
expect_eq "remove_path of the last path" "$(sysfs_write "$C/paths/$P1/remove_path" 1)" EBUSY
expect_eq "path 1 after a refused remove_path" "$(mp_state mp "$P1")" connected
n0=$(dev_ios "$dev")
sleep 2
[ "$(dev_ios "$dev")" -gt "$n0" ] || die "no IO with path 1 alone"
fio_mp_wait "$fpid" "$lat"

# (4) add it back
fio_mp_start "$dev" 8M
fpid=$FIO_PID
wait_io_flowing "$dev"
kmsg "add path 2"
expect_eq "add_path $P2" "$(sysfs_write "$C/add_path" "$P2")" OK
mp_wait_state mp "$P2" connected 30
expect_eq "paths after add_path" "$(mp_paths mp | tr '\n' ' ')" "$P1 $P2 "
mp_check_path mp "$P2" rxe1
fio_mp_wait "$fpid" "$lat"
mp_takes_traffic mp "$P2" "$dev"

# (5) path 1 disconnected: link 2 alone carries the session
fio_mp_start "$dev" 8M
fpid=$FIO_PID
wait_io_flowing "$dev"
kmsg "disconnect path 1"
expect_eq "disconnect of path 1" "$(sysfs_write "$C/paths/$P1/disconnect" 1)" OK
mp_wait_state mp "$P1" disconnected 10
sleep 1
q0=$(mp_reqs mp "$P1")
mp_takes_traffic mp "$P2" "$dev"
expect_eq "requests on the disconnected path 1" "$(mp_reqs mp "$P1")" "$q0"
expect_eq "path 2 with path 1 disconnected" "$(mp_state mp "$P2")" connected
kmsg "reconnect path 1"
expect_eq "reconnect of path 1" "$(sysfs_write "$C/paths/$P1/reconnect" 1)" OK
mp_wait_state mp "$P1" connected 30
mp_check_path mp "$P1" rxe0
fio_mp_wait "$fpid" "$lat"
mp_takes_traffic mp "$P1" "$dev"

for q in "$P1" "$P2"; do
	expect_eq "requests in flight on $q at the end" "$(mp_rdma mp "$q" | awk '{ print $5 }')" 0
done
no_io_errors
unmap_dev "$dev" || die "unmap"
[ ! -e "$C" ] || die "session mp still there after the unmap"
unload_rnbd
touch /sync/client-done
G
pair_run 800 2
