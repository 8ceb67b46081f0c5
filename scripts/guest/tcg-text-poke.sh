#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Run in a guest by scripts/tcg-text-poke: turn whole groups of
# tracepoints on and off (each switch patches the jump labels of their
# call sites) for DURATION seconds while the other vCPU runs through those
# sites (timers, wake-ups, loopback packets, interrupts).
dur=${1:-120}
t=/sys/kernel/tracing  # stage2 mounted it
ip link set lo up
end=$(($(date +%s) + dur))
(while [ "$(date +%s)" -lt $end ]; do sleep 0.001; done) &
(while [ "$(date +%s)" -lt $end ]; do
	ping -f -q -c 2000 127.0.0.1 >/dev/null 2>&1
done) &
n=0
while [ "$(date +%s)" -lt $end ]; do
	for v in 1 0; do
		for e in sched timer net irq; do
			# a switch that fails would make the run pass for nothing
			echo $v >$t/events/$e/enable ||
				{ echo "cannot write $v to events/$e/enable"; exit 1; }
		done
	done
	n=$((n + 1))
	[ $((n % 10)) -ne 0 ] || echo "$n switches"
done
wait
echo "tracepoint groups switched on and off $n times in $dur s"
