# SPDX-License-Identifier: GPL-2.0-only
# desc: the guest runs the Debian kernel the modules were built for, sees
#       this tree and host tools read-only, and has a writable /job; klog
#       shows this case's kernel lines only, and ends a case whose begin
#       line has left the kernel log rather than show nothing
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
kmsg "guest-env klog probe"
klog | grep -q "rnbd-test: guest-env klog probe" || die "klog misses this case's line"
klog | head -1 | grep -q "rnbd-check: begin $RNBD_CASE" || die "klog does not start at the begin line"
# a case whose begin line is gone: klog must end it, never let an absent
# line pass for "no such line"
out=$(RNBD_CASE=selftest-no-such-case bash -c '. "$REPO/tests/lib/guest.sh"
	klog | grep -q "a line of no case" || echo "check passed"' 2>&1 || true)
case "$out" in
*"check passed"*) die "klog let a check pass without its begin line: $out" ;;
*"FAIL: klog:"*) ;;
*) die "klog without its begin line: '$out'" ;;
esac
# a reader that stops at its first match (grep -q) on a long log: klog
# must neither fail nor end the case (a kernel log faked by a function)
out=$(RNBD_CASE=selftest-long-log bash -c '. "$REPO/tests/lib/guest.sh"
	dmesg() { echo "[ 1.0] rnbd-check: begin selftest-long-log"; seq 200000; }
	klog | grep -qx 1 && echo "found early"' 2>&1 || true)
expect_eq "klog read by grep -q on a long log" "$out" "found early"
log "guest ok: $(nproc) CPUs, $(awk '/MemTotal/ {print $2}' /proc/meminfo) kB"
