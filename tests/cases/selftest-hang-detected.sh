# SPDX-License-Identifier: GPL-2.0-only
# desc: a guest that hangs is ended by the hard timeout and reported as
#       failed (guest-run status 124)
# boot: host
# timeout: 180
. "$REPO/tests/lib/host.sh"
job=$(mk_dir job)
cat >"$job/../hang.sh" <<'G'
echo "hanging now"
sleep 100000
G
t0=$(date +%s)
rc=0
"$GUEST_RUN" --quiet --errexit --timeout 40 --job "$job" "$job/../hang.sh" >"$CASE_RESULTS/out" 2>&1 || rc=$?
t1=$(date +%s)
cat "$CASE_RESULTS/out"
[ "$rc" = 124 ] || die "guest-run status $rc, expected 124"
# guest-run stretches its --timeout by RNBD_TIMEOUT_SCALE (KERNEL=debug)
[ $((t1 - t0)) -lt $((50 * ${RNBD_TIMEOUT_SCALE:-1} + 40)) ] ||
	die "timeout took $((t1 - t0)) s"
grep -q 'hanging now' "$job/console.log" || die "guest never ran the script"
