# SPDX-License-Identifier: GPL-2.0-only
# desc: sessions of 3 to 8 paths (eight server addresses on the rxe
#       netdev): a map with 8 path= connects all 8 on the client and on
#       the server, a ninth add_path is refused (ENOSPC), round-robin moves
#       data on every path under fio verify (fresh seed), and after removing
#       paths down to 3 the session still carries verified IO on each of the
#       3 and only on them (RNBD_LONG=1 only: multipath-loopback adds
#       and removes paths under fio verify, hostile-client has the server
#       refuse paths past the 8 of a session)
# boot: shared
# long: yes
# timeout: 600
rnbd_setup
nb=$(nullb_create nullb1 64)
sess=mp8
C=$MP_CLASS/$sess
addrs=$RXE_ADDR
for i in 1 2 3 4 5 6 7 8; do
	ip addr add 10.9.$((10 + i)).1/24 dev "$RXE_NETDEV" || die "address $i"
	[ $i = 8 ] || addrs="$addrs 10.9.$((10 + i)).1"
done
paths=
for a in $addrs; do
	paths="$paths ip:$a@ip:$a"
done
# shellcheck disable=SC2086 # one word a path
dev=$(mp_map $sess "$nb" $paths)
expect_eq "client paths" "$(mp_paths $sess | wc -l)" 8
for p in $paths; do
	expect_eq "$p state" "$(mp_state $sess "$p")" connected
done
ssess=$(ls /sys/class/rtrs-server)
expect_eq "server sessions" "$(echo "$ssess" | wc -l)" 1
expect_eq "server paths" "$(ls "/sys/class/rtrs-server/$ssess/paths" | wc -l)" 8
expect_eq "a ninth path" "$(sysfs_write "$C/add_path" "ip:10.9.18.1@ip:10.9.18.1")" ENOSPC
expect_eq "client paths after the refused ninth" "$(mp_paths $sess | wc -l)" 8

# fio_verify DEV: 16 MiB of 4k random writes at queue depth 16, verified,
# with a fresh seed
fio_verify() {
	fio --name=v --filename="/dev/$1" --ioengine=libaio --direct=1 \
		--rw=randwrite --bs=4k --iodepth=16 --size=16M \
		--randseed="$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')" \
		--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
		>/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio verify over $(mp_paths $sess | wc -l) paths"; }
}
mp_policy $sess round-robin
for p in $paths; do
	eval "r0_$(echo "$p" | tr -c 'a-z0-9\n' _)=$(mp_reqs $sess "$p")"
done
fio_verify "$dev"
for p in $paths; do
	v=r0_$(echo "$p" | tr -c 'a-z0-9\n' _)
	n=$(($(mp_reqs $sess "$p") - ${!v}))
	log "$p: $n requests"
	[ "$n" -ge 100 ] || die "$p carried $n requests of a round-robin fio run over 8 paths"
done

# down to 3 paths: the last five removed
# shellcheck disable=SC2086 # one word a path
set -- $paths
keep="$1 $2 $3"
shift 3
for p in "$@"; do
	expect_eq "remove_path $p" "$(sysfs_write "$C/paths/$p/remove_path" 1)" OK
done
expect_eq "client paths after removing five" "$(mp_paths $sess | tr '\n' ' ')" \
	"$(for p in $keep; do echo "$p"; done | sort | tr '\n' ' ')"
i=0
until [ "$(ls "/sys/class/rtrs-server/$ssess/paths" | wc -l)" = 3 ]; do
	i=$((i + 1))
	[ $i -lt $((100 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
		die "server paths after removing five: $(ls "/sys/class/rtrs-server/$ssess/paths" | tr '\n' ' ')"
	sleep 0.1
done
for p in $keep; do
	eval "r0_$(echo "$p" | tr -c 'a-z0-9\n' _)=$(mp_reqs $sess "$p")"
done
fio_verify "$dev"
for p in $keep; do
	v=r0_$(echo "$p" | tr -c 'a-z0-9\n' _)
	n=$(($(mp_reqs $sess "$p") - ${!v}))
	[ "$n" -ge 300 ] || die "$p carried $n requests of a round-robin fio run over 3 paths"
done
unmap_dev "$dev"
