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
# excl_open DEV: an exclusive open (O_EXCL, as mount and the server take
# it), which fails with EBUSY while anyone else holds the device so
excl_open() {
	python3 -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDWR | os.O_EXCL))' "$1" 2>&1
}
# the probe sees the server's hold: while mapped, an exclusive open fails
r=$(excl_open "$nb") && die "exclusive open of $nb succeeded while the server holds it"
case "$r" in *"Device or resource busy"*) ;; *) die "exclusive open of $nb: $r" ;; esac
timeout 60 rmmod rnbd_client || die "rmmod rnbd_client"
[ -z "$(ls -d /sys/block/rnbd* 2>/dev/null)" ] || die "devices left"
# The server saw the client go and released the devices: they open
# exclusively again (the server closes them once the session is gone)
for d in "$nb" "$nb2"; do
	i=0
	until r=$(excl_open "$d"); do
		i=$((i + 1))
		[ $i -lt $((100 * ${RNBD_TIMEOUT_SCALE:-1})) ] ||
			die "$d still held 10 s after rmmod rnbd_client: $r"
		sleep 0.1
	done
done
