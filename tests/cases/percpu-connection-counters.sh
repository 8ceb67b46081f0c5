# SPDX-License-Identifier: GPL-2.0-only
# desc: IO submitted on one CPU goes out on that CPU's connection only
#       (per-connection request counters of the session)
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev percpu "$nb")
nconn=$(ls -d /sys/class/rtrs-client/percpu/paths/*/conns/* | wc -l)
expect_eq "connections (one per CPU)" "$nconn" "$(nproc)"
for cpu in 0 1; do
	other=$((1 - cpu))
	expect_eq "cpu of conn $cpu" "$(conn_stat percpu $cpu cpu)" "$cpu"
	a0=$(conn_stat percpu $cpu requests)
	b0=$(conn_stat percpu $other requests)
	taskset -c $cpu dd if=/dev/$dev of=/dev/null bs=4k count=500 iflag=direct 2>/dev/null ||
		die "dd on cpu $cpu"
	taskset -c $cpu dd if=/dev/zero of=/dev/$dev bs=4k count=300 oflag=direct 2>/dev/null ||
		die "dd write on cpu $cpu"
	a1=$(conn_stat percpu $cpu requests)
	b1=$(conn_stat percpu $other requests)
	log "cpu $cpu: conn $cpu +$((a1 - a0)), conn $other +$((b1 - b0))"
	[ $((a1 - a0)) -ge 800 ] || die "conn $cpu carried $((a1 - a0)) of 800 requests"
	expect_eq "requests on conn $other while pinned to cpu $cpu" $((b1 - b0)) 0
done
unmap_dev "$dev"
