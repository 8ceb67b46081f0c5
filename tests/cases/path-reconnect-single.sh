# SPDX-License-Identifier: GPL-2.0-only
# desc: reconnect written to the only path of a connected session, five
#       times in a row under fio write+verify: each time the path comes
#       back connected, the server ends with one session of one path, fio
#       has 0 errors, and unmap, rmmod and the rxe device's removal are
#       clean (a server that joined the new connect to a session closing
#       under it closed that session twice)
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
kmsg "path-reconnect-single: start"
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev one "$nb")
C=/sys/class/rtrs-client/one
P=$(ls "$C/paths")
expect_eq "one path" "$(echo "$P" | wc -l)" 1
r0=$(cut -d' ' -f1 "$C/paths/$P/stats/reconnects")
fio_outage_start "$dev" 24M
sleep 2
for round in 1 2 3 4 5; do
	kmsg "path-reconnect-single: round $round"
	expect_eq "reconnect $round" "$(sysfs_write "$C/paths/$P/reconnect" 1)" OK
	wait_path_state one connected 30
	sleep 1
done
# each round tore the path down and set it up again (a connected path
# that was set up again over its live connections oopsed the client)
expect_eq "reconnects" "$(($(cut -d' ' -f1 "$C/paths/$P/stats/reconnects") - r0))" 5
fio_wait_ok "$FIO_PID"
i=0
until [ "$(ls /sys/class/rtrs-server | wc -l)" = 1 ] &&
	[ "$(ls /sys/class/rtrs-server/*/paths | wc -l)" = 1 ]; do
	i=$((i + 1))
	[ $i -lt $((200 * S)) ] ||
		die "server: $(ls /sys/class/rtrs-server | wc -l) sessions, paths: $(ls /sys/class/rtrs-server/*/paths | tr '\n' ' ')"
	sleep 0.1
done
unmap_dev "$dev"
if klog | grep -q "I/O error, dev $dev\|Buffer I/O error on dev $dev"; then
	klog | grep "I/O error, dev $dev\|Buffer I/O error on dev $dev"
	die "IO errors across the reconnects"
fi
