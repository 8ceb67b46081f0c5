# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Guest side of scripts/bench/profile: the bench's null_blk device used
# locally, through rnbd and through NVMe-oF RDMA, one fio row on each under
# a system-wide perf cpu-clock sample.  Reports go to /job/out.
#
# Arguments: ROW RUNTIME
. "$REPO/tests/lib/guest.sh"
. "$REPO/scripts/bench/targets.sh"
SERVER_PARAMS=${SERVER_PARAMS:-}
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

sed -e "s/^runtime=.*/runtime=$RUNTIME/" -e 's/^ramp_time=.*/ramp_time=1/' \
	"$REPO/scripts/bench/fio/$ROW.fio" >/tmp/row.fio
for tgt in local rnbd nvme; do
	dev=$(eval echo "\$DEV_$tgt")
	kmsg "profile: $ROW on $tgt ($dev)"
	perf record -a -e cpu-clock -F 2000 -g -o "$OUT/$tgt.data" -- \
		env DEV="/dev/$dev" fio --output-format=json \
		--output="$OUT/$tgt.fio.json" /tmp/row.fio \
		>"$OUT/$tgt.record.log" 2>&1 || die "perf record on $tgt"
	perf report -i "$OUT/$tgt.data" --no-children --sort sym \
		--percent-limit 0.3 --stdio -g none >"$OUT/$tgt.report" 2>&1
	perf report -i "$OUT/$tgt.data" --no-children --sort dso \
		--stdio -g none >"$OUT/$tgt.dso" 2>&1
	log "$tgt: $(grep -o '"iops" : [0-9.]*' "$OUT/$tgt.fio.json" | head -2 | tr '\n' ' ')"
done
cat /proc/kallsyms >"$OUT/kallsyms"
nvme disconnect -n "$NQN" >/dev/null || die "nvme disconnect"
unmap_dev "$DEV_rnbd" || die "unmap $DEV_rnbd"
unload_rnbd
echo "profile: done"
