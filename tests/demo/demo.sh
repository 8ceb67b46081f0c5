# SPDX-License-Identifier: GPL-2.0-only
# The guest side of `make demo` (runs under scripts/guest-run).
. "$REPO/tests/lib/guest.sh"
set -e
step() {
	echo
	echo "### $*"
}
step "soft-RoCE: rxe0 on dummy0 with $RXE_ADDR"
setup_rxe
rdma link show
step "rdma_cm sanity check: rping over rxe0"
rping -s -a "$RXE_ADDR" -C 3 >/dev/null 2>&1 &
wait_listen rping
rping -c -a "$RXE_ADDR" -C 3 -v
wait

step "server side: load rnbd_server (passive, no export configuration)"
load_rnbd_server
step "a null_blk disk to export: 512 MiB, memory backed"
nb=$(nullb_create nullb1 512)
lsblk "$nb"

step "client side: load rnbd_client and map the disk with one sysfs write"
load_rnbd_client
cmd="sessname=demo path=ip:$RXE_ADDR device_path=$nb"
echo "echo \"$cmd\" > $MAP_CTL"
echo "$cmd" >"$MAP_CTL"
dev=$(basename /sys/block/rnbd*)
lsblk "/dev/$dev"

step "sysfs state of /dev/$dev"
for f in session mapping_path access_mode state; do
	printf '  /sys/block/%s/rnbd/%-13s %s\n' "$dev" "$f" "$(cat /sys/block/$dev/rnbd/$f)"
done
for f in logical_block_size max_hw_sectors_kb write_cache fua discard_max_bytes; do
	printf '  /sys/block/%s/queue/%-19s %s\n' "$dev" "$f" "$(cat /sys/block/$dev/queue/$f)"
done
echo "  session connections:"
for c in /sys/class/rtrs-client/demo/paths/*/conns/*; do
	echo "    conn $(basename $c): cpu $(cat $c/cpu)"
done

step "mkfs.ext4 and mount /dev/$dev on /mnt/demo"
mkfs.ext4 -q -F "/dev/$dev"
mkdir -p /mnt/demo
mount "/dev/$dev" /mnt/demo
df -h /mnt/demo

step "write files, sync, drop caches and verify their checksums"
cp -a "$REPO/Documentation" /mnt/demo/docs
head -c 33554432 /dev/urandom >/mnt/demo/random.bin
(cd /mnt/demo && find . -type f -print0 | xargs -0 sha256sum) >/tmp/sums
sync
umount /mnt/demo
echo 3 >/proc/sys/vm/drop_caches
mount "/dev/$dev" /mnt/demo
(cd /mnt/demo && sha256sum -c --quiet /tmp/sums)
echo "  $(wc -l </tmp/sums) files verified after remount"
umount /mnt/demo

step "a short fio run: 4k random reads and writes, QD 16, 10 s"
fio --name=demo --filename="/dev/$dev" --ioengine=libaio --direct=1 \
	--rw=randrw --bs=4k --iodepth=16 --time_based --runtime=10 \
	--group_reporting | grep -E 'read:|write:|lat \(usec\): min'

step "per-connection counters of the session"
for c in /sys/class/rtrs-client/demo/paths/*/conns/*; do
	echo "  conn $(basename $c): requests $(cat $c/requests)"
done

step "unmap /dev/$dev"
echo normal >"/sys/block/$dev/rnbd/unmap_device"
ls /dev/rnbd* 2>/dev/null || echo "  no rnbd device left"

step "unload the modules"
unload_rnbd
nullb_destroy_all
echo "  RDMA resources left: $(rdma_res_counts)"
