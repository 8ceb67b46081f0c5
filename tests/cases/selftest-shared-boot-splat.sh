# SPDX-License-Identifier: GPL-2.0-only
# desc: scripts/check ties a kernel problem in a shared guest boot to the
#       case that caused it: of four cases in one boot, a clean one passes,
#       one that makes a WARNING fails for it (and the cases around it do
#       not), one that crashes the guest fails with the guest's last words
#       (the panic and its stack), and the one after it is
#       reported as not run
# boot: host
# timeout: 420
. "$REPO/tests/lib/host.sh"
cases=$(mk_dir cases)
inner=$CASE_RESULTS/inner
for c in a-clean:"echo clean" \
	b-warn:"insmod \"\$REPO/tests/kmod/rnbd_selftest.ko\" fault=warn || true" \
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
[ -s "$inner/selftest-b-warn/console" ] || die "the WARNING case has no console"
! grep -q 'WARNING:' "$inner/selftest-a-clean/console" ||
	die "the clean case's console holds the next case's WARNING"
! grep -q '^#   splat: .*WARNING:' <(sed -n '/selftest-c-crash/,$p' "$CASE_RESULTS/out") ||
	die "the crash's report holds the WARNING of the case before it"
