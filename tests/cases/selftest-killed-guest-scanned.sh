# SPDX-License-Identifier: GPL-2.0-only
# desc: a host case's guest that is killed (as a crash or an outage would
#       end it) still has its console scanned: a host case whose killed
#       guest printed a kernel WARNING first, and which otherwise passes,
#       fails through the real runner, with the WARNING shown
# boot: host
# timeout: 300
. "$REPO/tests/lib/host.sh"
dir=$(mk_dir cases)
cat >"$dir/selftest-inner-killed.sh" <<'C'
# boot: host
# timeout: 200
. "$REPO/tests/lib/host.sh"
sync=$(mk_dir sync)
cat >"$sync/../victim.sh" <<'G'
insmod "$REPO/tests/kmod/rnbd_selftest.ko" fault=warn || true
touch /sync/warned
sleep 1000
G
start_guest victim --timeout 200 --share "$sync" "$sync/../victim.sh"
wait_alive "$sync/warned" 150 victim || die "the victim guest never got to its WARNING"
kill_guest victim
echo "the case's own steps passed"
C
out=$CASE_RESULTS/inner.out
rc=0
# the inner results in a short path: QEMU's monitor socket path must fit
# in 108 bytes; copied here after
inner=$(mktemp -d /tmp/rnbd-selftest.XXXXXX)
CHECK_RESULTS=$inner "$REPO/scripts/check" --no-static --no-build \
	--cases-dir "$dir" >"$out" 2>&1 || rc=$?
cp -r "$inner" "$CASE_RESULTS/inner"
rm -rf "$inner"
cat "$out"
grep -q "the case's own steps passed" "$CASE_RESULTS/inner/selftest-inner-killed/log" ||
	die "the inner case failed before its end (not what this tests)"
[ "$rc" != 0 ] || die "runner exited 0: the killed guest's WARNING was not seen"
grep -q '^not ok 1 - selftest-inner-killed$' "$out" || die "the inner case not reported failed"
grep -qE '^#   splat: victim: \[ *[0-9.]+\] WARNING:.*rnbd_selftest' "$out" ||
	die "the killed guest's WARNING not shown"
grep -q '^#   FAIL: kernel problem on the console of guest(s) victim:' "$out" ||
	die "the failure does not name the killed guest"
