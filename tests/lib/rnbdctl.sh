# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Helpers of the rnbdctl cases (source after guest.sh): run the tool from
# this tree and check its exit status, messages and JSON.

RNBDCTL=$REPO/tools/rnbdctl/rnbdctl

# ctl STATUS ARGS...: run rnbdctl ARGS, which must exit with STATUS; its
# output in /tmp/ctl.out, its messages in /tmp/ctl.err.
ctl() {
	local want=$1 rc=0
	shift
	"$RNBDCTL" "$@" >/tmp/ctl.out 2>/tmp/ctl.err || rc=$?
	[ "$rc" = "$want" ] ||
		die "rnbdctl $*: exit $rc, expected $want; out: $(cat /tmp/ctl.out); err: $(cat /tmp/ctl.err)"
	log "rnbdctl $* -> $rc $(head -c 300 /tmp/ctl.err | tr '\n' ' ')"
}

# err_has TEXT: rnbdctl's last messages say TEXT.
err_has() {
	grep -qF -- "$1" /tmp/ctl.err || die "rnbdctl said '$(cat /tmp/ctl.err)', not '$1'"
}

# out_has TEXT: rnbdctl's last output has TEXT.
out_has() {
	grep -qF -- "$1" /tmp/ctl.out || die "rnbdctl printed '$(cat /tmp/ctl.out)', not '$1'"
}

# jget EXPR: the Python expression EXPR over d, rnbdctl's last output
# parsed as JSON (strictly: json.load), and x, the part of it that the
# expression JX selects (d unless set).
jget() {
	python3 -c 'import json, sys
d = json.load(open("/tmp/ctl.out"))
x = eval(sys.argv[2], {"d": d})
print(eval(sys.argv[1], {"d": d, "x": x}))' "$1" "${JX:-d}" ||
		die "not JSON, or no $1 (x: ${JX:-d}): $(cat /tmp/ctl.out)"
}

# json EXPR EXPECTED [EXPR EXPECTED]...: jget EXPR prints EXPECTED, for
# each pair (one python3 for them all: it starts slowly in the guest).
json() {
	python3 - "${JX:-d}" "$@" <<'EOF' || die "rnbdctl's JSON (x: ${JX:-d}): $(cat /tmp/ctl.out)"
import json, sys
d = json.load(open("/tmp/ctl.out"))
x = eval(sys.argv[1], {"d": d})
bad = len(sys.argv) % 2
for expr, want in zip(sys.argv[2::2], sys.argv[3::2]):
    got = str(eval(expr, {"d": d, "x": x}))
    print("# json %s: %s" % (expr, got))
    if got != want:
        print("FAIL: json %s: got '%s', expected '%s'" % (expr, got, want))
        bad = 1
sys.exit(bad)
EOF
}

# rnbd_devs: "NAME SESSION MAPPING_PATH ACCESS_MODE" of every mapped
# device, read from sysfs, one a line, sorted.
rnbd_devs() {
	local d
	for d in /sys/block/rnbd*; do
		[ -d "$d/rnbd" ] || continue
		echo "${d##*/} $(cat "$d/rnbd/session") $(cat "$d/rnbd/mapping_path") $(cat "$d/rnbd/access_mode")"
	done | sort
}
