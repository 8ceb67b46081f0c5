# SPDX-License-Identifier: GPL-2.0-only
# desc: scripts/check judges each case of a shared guest boot by itself,
#       through the real runner: of six cases in one boot, a clean one
#       passes; one whose command fails stops there and fails, with the
#       failing command named; one that makes a WARNING fails for it (and
#       the cases around it do not); one that leaves a process holding
#       an RDMA object (an rdma_cm listener on rxe) fails the runner's
#       check after it; one that crashes the guest fails with the guest's
#       last words (the panic and its stack); the one after it is
#       reported as not run; "1 passed, 5 failed", non-zero exit
# boot: host
# timeout: 420
. "$REPO/tests/lib/host.sh"
cases=$(mk_dir cases)
inner=$CASE_RESULTS/inner
for c in a-clean:"echo clean" \
	a2-fails:"true; false; echo 'must not get here'" \
	b-warn:"insmod \"\$REPO/tests/kmod/rnbd_selftest.ko\" fault=warn || true" \
	b2-rdma-left:"setup_rxe; cp /usr/bin/rping /tmp/rdma-holder; /tmp/rdma-holder -s -a \$RXE_ADDR -p 7999 & wait_listen rdma-holder" \
	c-crash:"echo 1 >/proc/sys/kernel/sysrq; echo c >/proc/sysrq-trigger" \
	d-after:"echo after"; do
	printf '# desc: scripts/check self-test\n# boot: shared\n# timeout: 60\n%s\n' \
		"${c#*:}" >"$cases/selftest-${c%%:*}.sh"
done
rc=0
CHECK_RESULTS=$inner "$REPO/scripts/check" --cases-dir "$cases" --no-static \
	--no-build >"$CASE_RESULTS/out" 2>&1 || rc=$?
cat "$CASE_RESULTS/out"
[ "$rc" != 0 ] || die "scripts/check passed a boot with a WARNING and a panic"
want() {	# want PATTERN WHAT: a line of scripts/check's report
	grep -qE "$1" "$CASE_RESULTS/out" || die "$2"
}
want '^ok [0-9]+ - selftest-a-clean$' "the clean case did not pass"
want '^not ok [0-9]+ - selftest-a2-fails$' "the failing command did not fail its case"
want '^#   FAIL: selftest-a2-fails.sh:[0-9]+: false \(status 1\)$' \
	"the failing command was not named"
! grep -q 'must not get here' "$inner/selftest-a2-fails/log" ||
	die "the case went on after its command failed"
want '^not ok [0-9]+ - selftest-b-warn \(kernel problem on the console\)$' \
	"the WARNING was not tied to its case"
want '^#   splat: .*WARNING:.*rnbd_selftest' "the WARNING was not shown"
want '^not ok [0-9]+ - selftest-c-crash \(guest ended during the case' \
	"the crash was not tied to its case"
want '^#   splat: .*Kernel panic' "the panic was not shown"
want '^#   splat: -- the console from the first problem on:' "the console was not shown"
want '^#   splat: .*sysrq_handle_crash' "the panic's stack was not shown"
want '^not ok [0-9]+ - selftest-d-after \(not run: guest ended earlier' \
	"the case after the crash was not reported as not run"
want '^not ok [0-9]+ - selftest-b2-rdma-left$' \
	"a process left holding an RDMA object did not fail its case"
want '^#   FAIL: RDMA objects left after the case and the unload:$' \
	"the RDMA objects left were not named"
want '^#   .* comm rdma-holder ' "the object left was not shown"
want '^1 passed, 5 failed$' "the summary line is wrong"
[ -s "$inner/selftest-b-warn/console" ] || die "the WARNING case has no console"
! grep -q 'WARNING:' "$inner/selftest-a-clean/console" ||
	die "the clean case's console holds the next case's WARNING"
! grep -q '^#   splat: .*WARNING:' <(sed -n '/selftest-c-crash/,$p' "$CASE_RESULTS/out") ||
	die "the crash's report holds the WARNING of the case before it"
