# SPDX-License-Identifier: GPL-2.0-only
# desc: rmmod rnbd_client with devices mapped unmaps them cleanly (or
#       refuses while in use): no device, session or splat is left
# boot: shared
# timeout: 200
rnbd_setup
nb=$(nullb_create nullb1 16)
nb2=$(nullb_create nullb2 16)
map_dev two "$nb" >/dev/null
map_dev two "$nb2" >/dev/null
expect_eq "mapped devices" "$(ls -d /sys/block/rnbd* | wc -l)" 2
timeout 60 rmmod rnbd_client || die "rmmod rnbd_client"
[ -z "$(ls -d /sys/block/rnbd* 2>/dev/null)" ] || die "devices left"
# The server saw the client go and released the devices: they open rw.
exec 3>"$nb"
exec 3>&-
