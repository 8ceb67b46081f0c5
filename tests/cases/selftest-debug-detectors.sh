# SPDX-License-Identifier: GPL-2.0-only
# desc: the debug kernel's detectors catch a test-only module's bugs each
#       time: an AB-BA lock order (lockdep), a leak of a filled object
#       (kmemleak, found by the runner's check by module name and, after
#       unload, by address) and a
#       use after free (KASAN) fail the guest run; the same module doing
#       the same steps without the bugs passes; the runner's checks fail
#       when kmemleak or lockdep is missing or lockdep is off
# boot: host
# kernel: debug
# timeout: 600
. "$REPO/tests/lib/host.sh"

# One boot with the three bugs.  Lockdep first: any other report taints the
# kernel, and a tainted kernel turns lockdep off.
job=$(mk_dir job-bugs)
cat >"$job/../bugs.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
ko=$REPO/tests/kmod/rnbd_selftest.ko
insmod "$ko" fault=abba || true
echo "abba done"
kmemleak_check >/dev/null || die "kmemleak reports a leak before any"
insmod "$ko" fault=leak || die "insmod fault=leak"
mod_range_record rnbd_selftest
if kmemleak_check >/job/leak-named.txt; then die "leak not found while loaded"; fi
rmmod rnbd_selftest
insmod "$ko" fault=leak || die "insmod fault=leak (2)"
mod_range_record rnbd_selftest
rmmod rnbd_selftest
if kmemleak_check >/job/leak-unloaded.txt; then die "leak not found after unload"; fi
echo "leaks found"
insmod "$ko" fault=uaf || true
echo "uaf done"
G
rc=0
"$GUEST_RUN" --quiet --errexit --timeout 240 --job "$job" "$job/../bugs.sh" >"$CASE_RESULTS/bugs.out" 2>&1 || rc=$?
cat "$CASE_RESULTS/bugs.out"
cat "$job/test.log"
[ "$rc" = 125 ] || die "guest-run status $rc with the bugs, expected 125"
grep -q 'leaks found' "$job/test.log" || die "kmemleak part did not finish"
grep -q 'uaf done' "$job/test.log" || die "guest script did not finish"
grep -q 'possible circular locking dependency' "$CASE_RESULTS/bugs.out" ||
	die "lockdep report not shown"
grep -A40 'possible circular locking dependency' "$job/console.log" |
	grep -q 'rnbd_selftest_[ab]' || die "lockdep report does not name the module's locks"
grep -qE 'KASAN: (slab-)?use-after-free' "$CASE_RESULTS/bugs.out" ||
	die "KASAN report not shown"
grep -A3 'KASAN: .*use-after-free' "$job/console.log" | grep -q 'rnbd_selftest' ||
	die "KASAN report does not name the module"
grep -q '^leak in rnbd_selftest:' "$job/leak-named.txt" ||
	die "kmemleak check did not pin the leak on rnbd_selftest"
grep -q '^leak in rnbd_selftest (unloaded):' "$job/leak-unloaded.txt" ||
	die "kmemleak check did not pin the leak on the unloaded module"
grep -q '= rnbd_selftest_leak+0x[0-9a-f]*/0x[0-9a-f]* \[rnbd_selftest, unloaded\]' \
	"$job/leak-unloaded.txt" ||
	die "kmemleak check did not name the unloaded module's function"

# The same steps without the bugs: a clean run.
job=$(mk_dir job-clean)
cat >"$job/../clean.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
insmod "$REPO/tests/kmod/rnbd_selftest.ko" fault=none || die "insmod fault=none"
mod_range_record rnbd_selftest
kmemleak_check || die "kmemleak: a leak without the bug (loaded)"
rmmod rnbd_selftest
kmemleak_check || die "kmemleak: a leak without the bug (unloaded)"
lockdep_check || die "lockdep off"
grep -q 'debug_locks: *1' /proc/lockdep_stats || die "lockdep not running"
# on the debug kernel, a detector missing or off fails the checks
(KMEMLEAK=/nonexistent; kmemleak_check) >/tmp/d.out && die "kmemleak_check passed without kmemleak"
grep -q 'no kmemleak' /tmp/d.out || die "kmemleak_check: $(cat /tmp/d.out)"
(LOCKDEP_STATS=/nonexistent; lockdep_check) >/tmp/d.out && die "lockdep_check passed without lockdep"
grep -q 'no lockdep' /tmp/d.out || die "lockdep_check: $(cat /tmp/d.out)"
echo 'debug_locks:                             0' >/tmp/lockdep_stats
(LOCKDEP_STATS=/tmp/lockdep_stats LOCKDEP_OFF_MARK=/tmp/lockdep-off; lockdep_check) >/tmp/d.out &&
	die "lockdep_check passed with lockdep off"
grep -q 'lockdep is off' /tmp/d.out || die "lockdep_check: $(cat /tmp/d.out)"
echo "missing or stopped detectors fail the checks"
echo "clean run done"
G
rc=0
"$GUEST_RUN" --quiet --errexit --timeout 240 --job "$job" "$job/../clean.sh" >"$CASE_RESULTS/clean.out" 2>&1 || rc=$?
cat "$job/test.log"
[ "$rc" = 0 ] || { cat "$CASE_RESULTS/clean.out"; die "guest-run status $rc without the bugs, expected 0"; }
grep -q 'clean run done' "$job/test.log" || die "clean guest script did not finish"
