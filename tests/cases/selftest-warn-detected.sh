# SPDX-License-Identifier: GPL-2.0-only
# desc: a deliberate kernel WARNING from a test-only module fails the guest
#       run (guest-run status 125) and is shown from the console
# boot: host
# timeout: 180
. "$REPO/tests/lib/host.sh"
job=$(mk_dir job)
cat >"$job/../warn.sh" <<'G'
insmod "$REPO/tests/kmod/rnbd_selftest.ko" fault=warn || true
echo "module load returned"
G
rc=0
"$GUEST_RUN" --quiet --timeout 120 --job "$job" "$job/../warn.sh" >"$CASE_RESULTS/out" 2>&1 || rc=$?
cat "$CASE_RESULTS/out"
[ "$rc" = 125 ] || die "guest-run status $rc, expected 125"
grep -q 'WARNING:.*rnbd_selftest' "$CASE_RESULTS/out" || die "WARNING not reported"
grep -q 'module load returned' "$job/test.log" || die "guest script did not finish"
