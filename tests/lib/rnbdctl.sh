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

# json EXPR EXPECTED [EXPR EXPECTED]...: each Python expression EXPR over
# d, rnbdctl's last output parsed as JSON (strictly: json.load), prints
# EXPECTED.  One python3 for them all: it starts slowly in the guest.
json() {
	python3 -I -S - "$@" <<'EOF' || die "rnbdctl's JSON: $(cat /tmp/ctl.out)"
import json, sys
d = json.load(open("/tmp/ctl.out"))
bad = len(sys.argv) % 2 == 0
for expr, want in zip(sys.argv[1::2], sys.argv[2::2]):
    got = str(eval(expr, {"d": d}))
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

# md_mirror MD SESS_A SESS_B LOSS: an md raid1 /dev/MD (internal bitmap in
# 1 MiB chunks, --failfast legs) over two 64 MiB null_blk devices of this
# guest's server, each mapped by rnbdctl in a session of its own with loss
# timeout LOSS s; sets nb1 nb2 (server paths) and d1 d2 (rnbdN).  rnbd-md's
# journal lines go to /tmp/md-journal (RNBD_MD_LOGGER).
md_mirror() {
	nb1=$(nullb_create nullb1 64)
	nb2=$(nullb_create nullb2 64)
	rnbd_setup
	modprobe raid1 || die "modprobe raid1"
	ctl 0 map -s "$2" -p "ip:$RXE_ADDR" --loss-timeout "$4" "$nb1"
	d1=$(basename "$(cat /tmp/ctl.out)")
	ctl 0 map -s "$3" -p "ip:$RXE_ADDR" --loss-timeout "$4" "$nb2"
	d2=$(basename "$(cat /tmp/ctl.out)")
	mdadm --create "/dev/$1" --run --quiet --level=1 --raid-devices=2 \
		--metadata=1.2 --bitmap=internal --bitmap-chunk=1M --assume-clean \
		--failfast "/dev/$d1" "/dev/$d2" || die "mdadm --create"
	export RNBD_MD_LOGGER=/tmp/md-logger
	printf '#!/bin/sh\necho "$*" >>/tmp/md-journal\n' >"$RNBD_MD_LOGGER"
	chmod +x "$RNBD_MD_LOGGER"
}
