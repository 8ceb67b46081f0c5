# SPDX-License-Identifier: GPL-2.0-only
# desc: a failing command inside a guest case fails that case (and only
#       that one), through the real runner: "not ok", "1 passed, 1 failed",
#       non-zero exit
# boot: host
# timeout: 240
. "$REPO/tests/lib/host.sh"
dir=$(mk_dir cases)
cat >"$dir/a-fails.sh" <<'G'
# boot: shared
# timeout: 30
true
false
echo "must not get here"
G
cat >"$dir/b-passes.sh" <<'G'
# boot: shared
# timeout: 30
test -d /job
G
out=$CASE_RESULTS/inner.out
rc=0
CHECK_RESULTS=$CASE_RESULTS/inner "$REPO/scripts/check" --no-static --no-build --cases-dir "$dir" >"$out" 2>&1 || rc=$?
cat "$out"
[ "$rc" != 0 ] || die "runner exited 0 with a failing case"
grep -q '^not ok 1 - a-fails' "$out" || die "failing case not reported"
grep -q '^ok 2 - b-passes' "$out" || die "passing case not reported"
grep -qx '1 passed, 1 failed' "$out" || die "summary line wrong"
grep -q 'must not get here' "$CASE_RESULTS/inner/a-fails/log" && die "case went on after a failure"
true
