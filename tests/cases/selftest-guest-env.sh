# SPDX-License-Identifier: GPL-2.0-only
# desc: the guest runs the Debian kernel the modules were built for, sees
#       this tree and host tools read-only, and has a writable /job
# boot: shared
# timeout: 60
expect_eq "guest kernel" "$(uname -r)" "$KVER"
test -r "$REPO/Makefile" || die "repository not visible in the guest"
for t in fio rdma mkfs.ext4 rping losetup blkdiscard; do
	command -v "$t" >/dev/null || die "$t missing in the guest"
done
echo probe >/job/probe && rm /job/probe || die "/job not writable"
if touch "$REPO/.guest-write-probe" 2>/dev/null; then
	rm -f "$REPO/.guest-write-probe"
	# The overlay makes the root writable, but the host tree must stay
	# untouched: the write lands in the tmpfs upper layer only.
fi
grep -q 'slub_debug=FZPU' /proc/cmdline || die "functional boot without slub_debug"
log "guest ok: $(nproc) CPUs, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
