# SPDX-License-Identifier: GPL-2.0-only
# desc: ip: takes IPv6 addresses: map over an IPv6 address of the rxe
#       netdev and move data
# boot: shared
# timeout: 200
rnbd_setup
ip -6 addr add fd00:9::1/64 dev "$RXE_NETDEV" nodad
sleep 1
nb=$(nullb_create nullb1 16)
dev=$(MAP_ADDR=fd00:9::1 map_dev v6 "$nb")
head -c 1048576 /dev/urandom >/tmp/p
dd if=/tmp/p of=/dev/$dev bs=64k oflag=direct 2>/dev/null || die "write"
expect_eq "data over IPv6" "$(sha_dev "$nb" 1048576)" "$(sha256sum </tmp/p | cut -d' ' -f1)"
grep -q 'fd00:9::1' /sys/class/rtrs-client/v6/paths/*/dst_addr || die "dst_addr not IPv6"
unmap_dev "$dev"
