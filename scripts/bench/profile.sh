# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Guest side of scripts/bench/profile: the bench's null_blk device used
# locally, through rnbd and through NVMe-oF RDMA.  One fio row runs on each
# target, first plain (twice, interleaved) with the guest's CPU time and
# event counters (context switches, interrupts, softirqs by kind, IPIs) read
# before and after, then under a system-wide perf cpu-clock sample.
# Results go to /job/out.
#
# Arguments: ROW RUNTIME
. "$REPO/tests/lib/guest.sh"
. "$REPO/scripts/bench/targets.sh"
SERVER_PARAMS=${SERVER_PARAMS:-}
TRS_SERVER_PARAMS=${TRS_SERVER_PARAMS:-}
set -u

ROW=$1
RUNTIME=$2
OUT=/job/out
mkdir -p "$OUT"
echo 0 >/proc/sys/kernel/kptr_restrict
echo -1 >/proc/sys/kernel/perf_event_paranoid

setup_rxe
NB=$(nullb_create nullb0 4096 memory_backed=0 irqmode=0 \
	submit_queues="$(nproc)")
load_rnbd
DEV_rnbd=$(map_dev bench "$NB") || die "map $NB"
nvme_target_setup "$NB"
DEV_nvme=$(nvme_connect)
DEV_local=$(basename "$NB")
sched_none

sed -e "s/^runtime=.*/runtime=$RUNTIME/" -e 's/^ramp_time=.*/ramp_time=0/' \
	"$REPO/scripts/bench/fio/$ROW.fio" >/tmp/row.fio

for rep in 1 2; do
	for tgt in local rnbd nvme; do
		dev=$(eval echo "\$DEV_$tgt")
		counters "$dev" >/tmp/c0
		DEV="/dev/$dev" fio --output-format=json \
			--output="$OUT/$tgt.$rep.fio.json" /tmp/row.fio ||
			die "fio on $tgt"
		counters "$dev" >/tmp/c1
		counters_delta /tmp/c0 /tmp/c1 \
			>"$OUT/$tgt.$rep.counters"
	done
done

for tgt in local rnbd nvme; do
	dev=$(eval echo "\$DEV_$tgt")
	kmsg "profile: $ROW on $tgt ($dev)"
	perf record -a -e cpu-clock -F 1000 -g -o "/tmp/$tgt.data" -- \
		env DEV="/dev/$dev" fio --output-format=json \
		--output="$OUT/$tgt.perf.fio.json" /tmp/row.fio \
		>"$OUT/$tgt.record.log" 2>&1 || die "perf record on $tgt"
	cp "/tmp/$tgt.data" "$OUT/$tgt.data"
	perf report -i "/tmp/$tgt.data" --no-children --sort sym \
		--percent-limit 0.3 --stdio -g none >"$OUT/$tgt.report" 2>&1
done
cat /proc/kallsyms >"$OUT/kallsyms"
nvme disconnect -n "$NQN" >/dev/null || die "nvme disconnect"
unmap_dev "$DEV_rnbd" || die "unmap $DEV_rnbd"
unload_rnbd
echo "profile: done"
