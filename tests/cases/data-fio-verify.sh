# SPDX-License-Identifier: GPL-2.0-only
# desc: fio crc32c verify through rnbd: random writes of 4k..124k and 1 MiB
#       (split by the block layer), QD 1 and 32, two jobs pinned to
#       different CPUs
# boot: shared
# timeout: 600
rnbd_setup
nb=$(nullb_create nullb1 256)
dev=$(map_dev fio "$nb")
common="--filename=/dev/$dev --ioengine=libaio --direct=1 --verify=crc32c
	--verify_fatal=1 --verify_state_save=0"
run() {
	log "fio $*"
	# shellcheck disable=SC2086
	fio --name=v $common "$@" >/tmp/fio.out 2>&1 || { cat /tmp/fio.out; die "fio $*"; }
	grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "no fio job report"; }
	if grep -o 'err= *[0-9]*' /tmp/fio.out | grep -vq 'err= *0$'; then
		cat /tmp/fio.out
		die "fio reported an error"
	fi
}
run --rw=randwrite --bsrange=4k-124k --iodepth=1 --size=16M
run --rw=randwrite --bsrange=4k-124k --iodepth=32 --size=32M
run --rw=randwrite --bs=1M --iodepth=32 --size=32M
run --rw=randwrite --bs=4k --iodepth=32 --size=16M --numjobs=2 --offset_increment=64M \
	--cpus_allowed=0,1 --cpus_allowed_policy=split
unmap_dev "$dev"
