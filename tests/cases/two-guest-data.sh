# SPDX-License-Identifier: GPL-2.0-only
# desc: two guests: the client guest maps the server guest's virtio disk
#       over RDMA (rxe on a virtual link) and passes the data test; the
#       server guest then finds the client's pattern on its disk
#       (RNBD_LONG=1 only: two-guest-peer-killed's second client reads back
#       what the first wrote to the server's disk, and every two-guest case
#       verifies its data over the link)
# boot: host
# long: yes
# timeout: 900
. "$REPO/tests/lib/host.sh"
pair_bed 256M
cat >"$sync/../server.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_server
wait_sync /sync/client-done 750
got=$(dd if=/dev/vda bs=1M skip=200 count=16 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)
expect_eq "client's pattern on the server disk" "$got" "$(cat /sync/pattern.sha)"
unload_rnbd
G
cat >"$sync/../client.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
pair_client
dev=$(MAP_ADDR=10.10.0.1 map_dev remote /dev/vda)
expect_eq "remote size" "$(cat /sys/block/$dev/size)" $((256 * 2048))
fio --name=v --filename=/dev/$dev --ioengine=libaio --direct=1 --rw=randwrite \
	--bsrange=4k-124k --iodepth=32 --size=32M --verify=crc32c --verify_fatal=1 \
	--verify_state_save=0 --numjobs=2 --offset_increment=64M \
	--cpus_allowed=0,1 --cpus_allowed_policy=split >/tmp/fio.out 2>&1 ||
	{ cat /tmp/fio.out; die "fio verify"; }
head -c 16777216 /dev/urandom >/tmp/p
sha256sum </tmp/p | cut -d' ' -f1 >/sync/pattern.sha
dd if=/tmp/p of=/dev/$dev bs=1M seek=200 oflag=direct conv=fsync 2>/dev/null || die "dd"
expect_eq "read back" "$(dd if=/dev/$dev bs=1M skip=200 count=16 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1)" "$(cat /sync/pattern.sha)"
unmap_dev "$dev"
unload_rnbd
touch /sync/client-done
G
pair_run 800
