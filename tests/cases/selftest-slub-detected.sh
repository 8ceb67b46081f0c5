# SPDX-License-Identifier: GPL-2.0-only
# desc: a heap red zone overwrite, which SLUB reports without "BUG:", fails
#       the guest run (status 125)
# boot: host
# timeout: 180
. "$REPO/tests/lib/host.sh"
job=$(mk_dir job)
cat >"$job/../slub.sh" <<'G'
insmod "$REPO/tests/kmod/rnbd_selftest.ko" fault=slub || true
echo "module load returned"
G
rc=0
"$GUEST_RUN" --quiet --errexit --timeout 120 --job "$job" "$job/../slub.sh" >"$CASE_RESULTS/out" 2>&1 || rc=$?
cat "$CASE_RESULTS/out"
[ "$rc" = 125 ] || die "guest-run status $rc, expected 125"
# KASAN, on the debug kernel, sees the overwrite before SLUB does.
grep -qE 'Redzone|BUG kmalloc|KASAN: slab-out-of-bounds' "$CASE_RESULTS/out" ||
	die "SLUB (or KASAN) report not shown"
