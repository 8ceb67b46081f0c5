# SPDX-License-Identifier: GPL-2.0-only
# desc: rnbd-md, the helper of 65-rnbd-md.rules, on a made-up sysfs with a
#       stand-in mdadm (no guest: md's side is what mdadm would be told):
#       a faulty member is removed and re-added, one that md refuses to
#       remove at first is retried; an in-sync or recovering member, a
#       disk without superblock or whose array is not running, an
#       unmapped disk: nothing; a disk held by no array is re-added to
#       the running array of its MD_UUID, mdadm --incremental if md
#       refuses; failures logged with mdadm's error; never --add; one
#       journal line per action naming session and mapping path; names
#       other than rnbdN refused; the rule's match keys
# boot: host
# timeout: 60
. "$REPO/tests/lib/host.sh"
helper=$REPO/tools/udev/rnbd-md
T=$CASE_RESULTS/md
rm -rf "$T"
mkdir -p "$T/bin"
export RNBD_MD_SYSFS=$T/sys RNBD_MD_DEV=/dev
export RNBD_MD_MDADM=$T/bin/mdadm RNBD_MD_LOGGER=$T/bin/logger
# mdadm: records its arguments; --examine and --detail print
# $T/examine-NAME, $T/detail-NAME; a command whose arguments match a line
# of $T/fail fails (the line's count in $T/fail-left, if any, is how many
# times), with "mdadm: refused" on stderr
cat >"$T/bin/mdadm" <<EOF
#!/bin/sh
echo "\$*" >>"$T/calls"
case \$* in
--examine*) cat "$T/examine-\${3##*/}" 2>/dev/null; exit ;;
--detail*) cat "$T/detail-\${3##*/}" 2>/dev/null; exit ;;
esac
if grep -qxF -- "\$*" "$T/fail" 2>/dev/null; then
	left=\$(cat "$T/fail-left" 2>/dev/null || echo 99)
	if [ "\$left" -gt 0 ]; then
		echo \$((left - 1)) >"$T/fail-left"
		echo "mdadm: refused" >&2
		exit 1
	fi
fi
exit 0
EOF
printf '#!/bin/sh\necho "$*" >>"%s/journal"\n' "$T" >"$T/bin/logger"
chmod +x "$T/bin/mdadm" "$T/bin/logger"

# disk NAME [SESSION PATH]: an rnbd disk in the made-up sysfs
disk() {
	mkdir -p "$T/sys/block/$1/rnbd" "$T/sys/block/$1/holders"
	[ $# = 1 ] && return
	echo "$2" >"$T/sys/block/$1/rnbd/session"
	echo "$3" >"$T/sys/block/$1/rnbd/mapping_path"
}
# array MD STATE UUID [MEMBER MEMBER_STATE]
array() {
	mkdir -p "$T/sys/block/$1/md"
	echo "$2" >"$T/sys/block/$1/md/array_state"
	echo "MD_UUID=$3" >"$T/detail-$1"
	[ $# = 5 ] || return 0
	mkdir -p "$T/sys/block/$1/md/dev-$4"
	echo "$5" >"$T/sys/block/$1/md/dev-$4/state"
	ln -sfn "../../$1" "$T/sys/block/$4/holders/$1"
}
# run EXPECTED_STATUS ARGS...: the helper; its calls and journal lines
run() {
	local want=$1 rc=0
	shift
	rm -f "$T/calls" "$T/journal"
	sh "$helper" "$@" || rc=$?
	[ "$rc" = "$want" ] || die "rnbd-md $*: exit $rc, want $want"
	! grep -q -- '--add' "$T/calls" 2>/dev/null || die "rnbd-md $*: ran mdadm --add"
}
calls() { cat "$T/calls" 2>/dev/null; }
journal() { cat "$T/journal" 2>/dev/null; }
expect() {	# WHAT GOT WANT
	[ "$2" = "$3" ] || die "$1: got '$2', want '$3'"
	echo "ok: $1"
}
U1=0a1b2c3d:4e5f6071:8293a4b5:c6d7e8f9
U2=11111111:22222222:33333333:44444444

# ---- a member: faulty, in sync, recovering ---------------------------------
disk rnbd0 srvA /dev/nvme0n1
disk rnbd1 srvB /dev/nvme0n1
array md0 clean "$U1" rnbd0 faulty
array md0 clean "$U1" rnbd1 in_sync
run 0 re-add rnbd0
expect "faulty: mdadm calls" "$(calls)" \
	"--manage /dev/md0 --remove /dev/rnbd0
--manage /dev/md0 --re-add /dev/rnbd0"
expect "faulty: journal" "$(journal)" \
	"-t rnbd-md -- rnbd0 (session srvA, /dev/nvme0n1): was faulty in md0 (faulty): removed and re-added"
run 0 re-add rnbd1
expect "in_sync: nothing" "$(calls)$(journal)" ""
echo spare >"$T/sys/block/md0/md/dev-rnbd0/state"
run 0 re-add rnbd0
expect "recovering (spare): nothing" "$(calls)$(journal)" ""

# md refuses the removal twice, then takes it
echo faulty,blocked >"$T/sys/block/md0/md/dev-rnbd0/state"
echo "--manage /dev/md0 --remove /dev/rnbd0" >"$T/fail"
echo 2 >"$T/fail-left"
run 0 re-add rnbd0
expect "remove retried: calls" "$(calls | grep -c -- --remove) $(calls | grep -c -- --re-add)" "3 1"
expect "remove retried: journal" "$(journal)" \
	"-t rnbd-md -- rnbd0 (session srvA, /dev/nvme0n1): was faulty in md0 (faulty,blocked): removed and re-added"
# ... or never: logged, exit 1, no re-add
echo 9 >"$T/fail-left"
run 1 re-add rnbd0
expect "remove refused: journal" "$(journal)" \
	"-t rnbd-md -- rnbd0 (session srvA, /dev/nvme0n1): faulty in md0 (faulty,blocked); mdadm --remove failed: mdadm: refused"
expect "remove refused: no re-add" "$(calls | grep -c -- --re-add)" 0
# the re-add refused
echo "--manage /dev/md0 --re-add /dev/rnbd0" >"$T/fail"
echo 9 >"$T/fail-left"
run 1 re-add rnbd0
expect "re-add refused: journal" "$(journal)" \
	"-t rnbd-md -- rnbd0 (session srvA, /dev/nvme0n1): was faulty in md0 (faulty,blocked): removed; mdadm --re-add failed: mdadm: refused"
rm -f "$T/fail" "$T/fail-left"

# ---- held by no array ------------------------------------------------------
disk rnbd2 srvB /dev/nvme1n1
array md1 inactive "$U2"
array md2 active "$U2"
run 0 re-add rnbd2
expect "no superblock: only --examine" "$(calls)$(journal)" "--examine --export /dev/rnbd2"
echo "MD_LEVEL=raid1
MD_UUID=$U2
MD_DEVICES=2" >"$T/examine-rnbd2"
run 0 re-add rnbd2
expect "superblock of md2: calls" "$(calls)" \
	"--examine --export /dev/rnbd2
--detail --export /dev/md0
--detail --export /dev/md2
--manage /dev/md2 --re-add /dev/rnbd2"
expect "superblock of md2: journal" "$(journal)" \
	"-t rnbd-md -- rnbd2 (session srvB, /dev/nvme1n1): re-added to md2"
echo "--manage /dev/md2 --re-add /dev/rnbd2" >"$T/fail"
run 0 re-add rnbd2
expect "re-add refused: --incremental" "$(calls | tail -1)" "--incremental /dev/rnbd2"
expect "re-add refused: journal" "$(journal)" \
	"-t rnbd-md -- rnbd2 (session srvB, /dev/nvme1n1): mdadm --re-add to md2 failed (mdadm: refused); added by mdadm --incremental"
echo "--incremental /dev/rnbd2" >>"$T/fail"
run 1 re-add rnbd2
expect "both refused: journal" "$(journal)" \
	"-t rnbd-md -- rnbd2 (session srvB, /dev/nvme1n1): not re-added to md2: mdadm --re-add: mdadm: refused; mdadm --incremental: mdadm: refused"
rm -f "$T/fail"
# the array of its UUID not running: nothing
echo clear >"$T/sys/block/md2/md/array_state"
run 0 re-add rnbd2
expect "array not running" "$(calls | grep -c -- '--manage\|--incremental')$(journal)" 0
# another UUID on the superblock
echo active >"$T/sys/block/md2/md/array_state"
sed -i "s/^MD_UUID=.*/MD_UUID=$U1/" "$T/examine-rnbd2"
echo inactive >"$T/sys/block/md0/md/array_state"
run 0 re-add rnbd2
expect "no running array of that UUID" "$(calls | grep -c -- '--manage\|--incremental')$(journal)" 0

# ---- what is not ours, or gone --------------------------------------------
run 0 re-add rnbd7
expect "unmapped disk" "$(calls)$(journal)" ""
mkdir -p "$T/sys/block/sdb/holders"
for bad in sdb rnbd ../rnbd0 rnbd0p1 rnbd1x; do
	run 1 re-add "$bad" 2>/dev/null
	expect "$bad refused" "$(calls)$(journal)" ""
done
run 1 add rnbd0 2>/dev/null
run 1 re-add 2>/dev/null
# a disk without session or mapping path still gets its line
disk rnbd3
array md0 clean "$U1" rnbd3 faulty
run 0 re-add rnbd3
expect "no rnbd attributes: journal" "$(journal)" \
	"-t rnbd-md -- rnbd3 (session ?, ?): was faulty in md0 (faulty): removed and re-added"
# a control character in the session name stays out of the journal line
printf 'a\tb\n' >"$T/sys/block/rnbd3/rnbd/session"
run 0 re-add rnbd3
expect "control character: journal" "$(journal | wc -l) $(journal | grep -c 'session ab,')" "1 1"

# ---- the rule --------------------------------------------------------------
rules=$REPO/tools/udev/65-rnbd-md.rules
grep -qx 'ACTION=="change", ENV{RNBD_EVENT}=="reconnected", RUN+="rnbd-md re-add %k"' "$rules" ||
	die "no reconnected rule"
grep -qx 'KERNEL!="rnbd\[0-9\]\*", GOTO="rnbd_md_end"' "$rules" || die "rule not limited to rnbd"
grep -qx 'ENV{DEVTYPE}!="disk", GOTO="rnbd_md_end"' "$rules" || die "rule not limited to disks"
if command -v udevadm >/dev/null; then
	out=$(udevadm verify "$rules" 2>&1) || {
		# udevadm before 254 has no verify
		echo "$out" | grep -q 'Unknown command' || die "udevadm verify: $out"
	}
fi
echo "rnbd-md: all checks passed"
