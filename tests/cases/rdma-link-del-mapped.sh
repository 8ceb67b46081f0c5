# SPDX-License-Identifier: GPL-2.0-only
# desc: rdma link del of the RDMA device under a mapped session: returns
#       promptly, the session reconnects in vain and, after its loss timeout
#       (set to 5 s), fails IO; unmap and every module unload work afterwards
# boot: shared
# timeout: 300
rnbd_setup
nb=$(nullb_create nullb1 64)
dev=$(map_dev linkdel "$nb")
echo 5 >/sys/class/rtrs-client/linkdel/loss_timeout_sec
dd if=/dev/zero of=/dev/$dev bs=64k count=16 oflag=direct 2>/dev/null || die "IO before"
fio --name=f --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=randread \
	--bs=4k --iodepth=16 --time_based --runtime=60 >/tmp/fio.out 2>&1 &
fpid=$!
sleep 3
timeout 60 rdma link del "$RXE_DEV" || die "rdma link del hung or failed"
i=0
while kill -0 $fpid 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 300 ] || die "fio still running 30 s after link del (loss timeout 5 s)"; sleep 0.1
done
wait $fpid && die "fio saw no error"
case "$(cat /sys/class/rtrs-client/linkdel/paths/*/state)" in
reconnecting|connecting) ;;
*) die "path state after link del: $(cat /sys/class/rtrs-client/linkdel/paths/*/state)" ;;
esac
klog | grep -q 'linkdel: no connection for 5 s' || die "no loss timeout line in dmesg"
if dd if=/dev/$dev of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null; then
	die "read succeeded without RDMA device"
fi
expect_eq "unmap" "$(sysfs_write /sys/block/$dev/rnbd/unmap_device normal)" OK
for m in rnbd_client rnbd_server rnbd_trs_client rnbd_trs_server rnbd_trs_core; do
	rmmod $m || die "rmmod $m"
done
