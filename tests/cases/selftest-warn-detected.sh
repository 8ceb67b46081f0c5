# SPDX-License-Identifier: GPL-2.0-only
# desc: a kernel problem a test-only module makes fails the guest run
#       (guest-run status 125), and each is in guest-run's problem report:
#       a heap red zone overwrite, which SLUB reports without "BUG:", and
#       a deliberate WARNING; a kernel WARNING line that follows test
#       output on the same console line is found on the console as well
#       (one guest boot for both problems)
# boot: host
# timeout: 180
. "$REPO/tests/lib/host.sh"
job=$(mk_dir job)
cat >"$job/../warn.sh" <<'G'
# Text without a newline on the console, then, once it has left the UART,
# a kernel line: the console shows them on one line.
printf 'rnbd-progress 50%%' >/dev/console
sleep 1
echo '<4>rnbd_selftest: WARNING: after test output on the same console line' >/dev/kmsg
sleep 1
echo >/dev/console
# (the SLUB report after that: its many lines would keep the text above
# in the UART for longer than a second)
insmod "$REPO/tests/kmod/rnbd_selftest.ko" fault=slub || true
echo "slub: module load returned"
insmod "$REPO/tests/kmod/rnbd_selftest.ko" fault=warn || true
echo "module load returned"
G
rc=0
"$GUEST_RUN" --quiet --errexit --timeout 120 --job "$job" "$job/../warn.sh" >"$CASE_RESULTS/out" 2>&1 || rc=$?
cat "$CASE_RESULTS/out"
[ "$rc" = 125 ] || die "guest-run status $rc, expected 125"
# KASAN, on the debug kernel, sees the overwrite before SLUB does.
grep -qE 'Redzone|BUG kmalloc|KASAN: slab-out-of-bounds' "$CASE_RESULTS/out" ||
	die "SLUB (or KASAN) report not shown"
grep -q 'WARNING:.*rnbd_selftest' "$CASE_RESULTS/out" || die "WARNING not reported"
grep -q '^slub: module load returned' "$job/test.log" || die "guest script stopped at the SLUB step"
grep -q '^module load returned' "$job/test.log" || die "guest script did not finish"
# the console alone, as scripts/check scans each case's part of it
tr -d '\r' <"$job/console.log" |
	grep -aqE 'rnbd-progress 50%\[ *[0-9]+\.[0-9]+\] rnbd_selftest: WARNING: after test output' ||
	die "the console has no kernel line after text on one line (the test did not set it up)"
"$REPO/scripts/guest/scan-console" "$job/console.log" |
	grep -q 'rnbd_selftest: WARNING: after test output' ||
	die "scan-console missed a WARNING that follows text on its console line"
