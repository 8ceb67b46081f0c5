# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The steps of case pkg-deb-dkms: install the packages rnbd-dkms and
# rnbd-utils, check what they installed, use the modules, remove and purge
# them.  They run where dpkg runs (a guest, or tests/lib/overlay-root on
# the host) and, for pkg_modules and pkg_use, in the guest.  Source
# tests/lib/guest.sh first (log, die, expect_eq...).

PKG_MODULES="rnbd_trs_core rnbd_trs_client rnbd_trs_server rnbd_client rnbd_server"

# pkg_status PACKAGE: dpkg's state of PACKAGE ("installed", "config-files";
# empty when dpkg does not know it).
pkg_status() {
	dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null | sed 's/^not-installed$//'
}

# pkg_absent KVER: neither package nor any module of ours installed yet.
pkg_absent() {
	for p in rnbd-dkms rnbd-utils; do
		[ -z "$(pkg_status $p)" ] || die "$p is '$(pkg_status $p)' before the test"
	done
	! modinfo -k "$1" -F filename rnbd_client >/dev/null 2>&1 ||
		die "rnbd_client is installed before the package: $(modinfo -k "$1" -F filename rnbd_client)"
}

# pkg_install DEBDIR: dpkg -i of both packages of DEBDIR, whose postinst
# has DKMS build and install the modules.
pkg_install() {
	# dkms reads <(...): a guest's devtmpfs has no /dev/fd link
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	t=$(date +%s)
	DEBIAN_FRONTEND=noninteractive dpkg -i "$1"/rnbd-dkms_*_all.deb \
		"$1"/rnbd-utils_*_all.deb >/tmp/dpkg-i.log 2>&1 ||
		{ cat /tmp/dpkg-i.log; die "dpkg -i"; }
	cat /tmp/dpkg-i.log
	log "dpkg -i: $(($(date +%s) - t)) s"
	grep -q '^Building initial module for ' /tmp/dpkg-i.log ||
		die "the postinst built nothing"
}

# pkg_modules KVER: each module for KVER is DKMS's build: under
# updates/dkms, signed with DKMS's key, and what modprobe loads.
# DKMS compresses the modules as the kernel's own are (6.12's: .ko.xz).
pkg_modules() {
	for m in $PKG_MODULES; do
		expect_eq "$m file" "$(modinfo -k "$1" -F filename "$m" | pkg_ko)" \
			"/lib/modules/$1/updates/dkms/$m.ko"
		expect_eq "$m signer" "$(modinfo -k "$1" -F signer "$m")" "DKMS module signing key"
	done
	# the client's chain, dependencies first, all from updates/dkms
	expect_eq "modprobe rnbd_client loads" \
		"$(modprobe -S "$1" --show-depends rnbd_client | sed -n 's|^insmod \(.*/updates/dkms/[^ ]*\).*|\1|p' | pkg_ko | tr '\n' ' ')" \
		"/lib/modules/$1/updates/dkms/rnbd_trs_core.ko /lib/modules/$1/updates/dkms/rnbd_trs_client.ko /lib/modules/$1/updates/dkms/rnbd_client.ko "
}

# pkg_ko: module file names on stdin, less a compression suffix
pkg_ko() {
	sed -E 's/\.ko\.(xz|zst|gz)$/.ko/'
}

# pkg_sources VERSION: the package's module sources are the tree's: the
# same files, byte for byte, and no tracked one missing.
pkg_sources() {
	src=/usr/src/rnbd-$1
	n=0
	for f in $(git -C "$REPO" ls-files Kbuild include compat transport client server); do
		cmp -s "$REPO/$f" "$src/$f" || die "$src/$f differs from the tree's or is missing"
		n=$((n + 1))
	done
	expect_eq "files in $src" "$(find "$src" -type f ! -name dkms.conf | wc -l)" "$n"
	[ -s "$src/dkms.conf" ] || die "$src/dkms.conf missing"
	grep -qx "PACKAGE_VERSION=\"$1\"" "$src/dkms.conf" || die "dkms.conf: PACKAGE_VERSION is not $1"
}

# pkg_installed VERSION KVER: both packages installed, DKMS's modules in
# place for KVER, rnbd-utils' files where they belong.
pkg_installed() {
	for p in rnbd-dkms rnbd-utils; do
		expect_eq "$p status" "$(pkg_status $p)" installed
		expect_eq "$p version" "$(dpkg-query -W -f='${Version}' $p)" "$1"
	done
	dkms status -m rnbd -v "$1" -k "$2" | grep -q ': installed$' ||
		die "dkms status for $2: $(dkms status)"
	pkg_sources "$1"
	pkg_modules "$2"
	for f in /usr/sbin/rnbdctl /lib/udev/rnbd-namer /lib/udev/rules.d/60-rnbd.rules \
		/lib/udev/rnbd-md /lib/udev/rules.d/65-rnbd-md.rules \
		/lib/systemd/system/rnbdmap.service /usr/lib/modules-load.d/rnbd.conf \
		/lib/systemd/system/rnbdmap-retry.service \
		/lib/systemd/system/rnbdmap-retry.timer /etc/rnbd/rnbdtab; do
		[ -s "$f" ] || die "rnbd-utils: $f missing or empty"
	done
	for f in /usr/sbin/rnbdctl /lib/udev/rnbd-namer /lib/udev/rnbd-md; do
		[ -x "$f" ] || die "$f is not executable"
	done
	# the packaged tool runs and reports the package's version
	/usr/sbin/rnbdctl version >/tmp/rnbdctl-version 2>&1 ||
		{ cat /tmp/rnbdctl-version; die "rnbdctl version"; }
	expect_eq "rnbdctl version" "$(head -1 /tmp/rnbdctl-version)" "rnbdctl $1 (JSON version 1)"
	dpkg-query -W -f='${Conffiles}\n' rnbd-utils | grep -q '^ /etc/rnbd/rnbdtab ' ||
		die "/etc/rnbd/rnbdtab is not a conffile"
	# no systemd runs here: the enablement links are what counts
	expect_eq "rnbdmap.service" "$(systemctl --root=/ is-enabled rnbdmap.service)" enabled
	expect_eq "rnbdmap-retry.timer" "$(systemctl --root=/ is-enabled rnbdmap-retry.timer)" enabled
	for p in rnbdctl.8 rnbdtab.5 rnbd.7; do
		[ -s "/usr/share/man/man${p##*.}/$p.gz" ] || die "man page $p missing"
	done
}

# pkg_use: modprobe loads DKMS's copies and they serve a disk:
# 16 MiB of random data through /dev/rnbdN, the same sha256 on both sides.
pkg_use() {
	kmsg "pkg_use: rxe"
	setup_rxe
	kmsg "pkg_use: modprobe"
	modprobe rnbd_server || die "modprobe rnbd_server"
	modprobe rnbd_client || die "modprobe rnbd_client"
	for m in $PKG_MODULES; do
		mod_loaded $m || die "$m not loaded"
		mod_range_record "$m" "$(modinfo -n "$m")"
	done
	kmsg "pkg_use: null_blk"
	nb=$(nullb_create nullb0 64)
	# secure by default: the package's server exports nothing
	expect_eq "the package's exports mode" \
		"$(cat /sys/module/rnbd_server/parameters/exports)" listed
	expect_eq "a map of nothing exported" \
		"$(sysfs_write "$MAP_CTL" "sessname=pkg0 path=ip:$RXE_ADDR device_path=$nb")" EACCES
	kmsg "pkg_use: export"
	/usr/sbin/rnbdctl export add "$nb" || die "rnbdctl export add $nb"
	kmsg "pkg_use: map"
	dev=$(map_dev pkg "$nb")
	expect_eq "size in sectors" "$(cat "/sys/block/$dev/size")" $((64 * 2048))
	head -c $((16 * 1048576)) /dev/urandom >/tmp/pattern
	want=$(sha256sum </tmp/pattern | cut -d' ' -f1)
	dd if=/tmp/pattern of="/dev/$dev" bs=1M oflag=direct 2>/dev/null || die "write to /dev/$dev"
	expect_eq "server side" "$(sha_dev "$nb" $((16 * 1048576)))" "$want"
	expect_eq "client side" "$(sha_dev "/dev/$dev" $((16 * 1048576)))" "$want"
	kmsg "pkg_use: unmap"
	unmap_dev "$dev"
	[ ! -e "/sys/block/$dev" ] || die "$dev still there after unmap"
	/usr/sbin/rnbdctl export remove "$nb" || die "rnbdctl export remove $nb"
	unload_rnbd
	nullb_destroy_all
	teardown_rxe
}

# pkg_hide_headers KVER: KVER's headers out of DKMS's sight, as if that
# kernel's headers were not installed yet (pkg_headers_arrive brings them).
pkg_hide_headers() {
	[ -e "/lib/modules/$1/build" ] || die "no headers for $1 to hide"
	mv "/lib/modules/$1/build" "/lib/modules/$1/build.rnbd-hidden"
}

# pkg_headers_arrive VERSION KVER: KVER's headers come after the package:
# DKMS had nothing for KVER; the hook that a linux-headers package's
# postinst runs (/etc/kernel/header_postinst.d/dkms) builds and installs
# the modules for it.
pkg_headers_arrive() {
	! modinfo -k "$2" -F filename rnbd_client >/dev/null 2>&1 ||
		die "rnbd_client built for $2 before its headers came: $(modinfo -k "$2" -F filename rnbd_client)"
	mv "/lib/modules/$2/build.rnbd-hidden" "/lib/modules/$2/build"
	t=$(date +%s)
	/etc/kernel/header_postinst.d/dkms "$2" >/tmp/dkms-later.log 2>&1 ||
		{ cat /tmp/dkms-later.log; die "header_postinst.d/dkms $2"; }
	cat /tmp/dkms-later.log
	log "headers of $2 installed later: DKMS built in $(($(date +%s) - t)) s"
	dkms status -m rnbd -v "$1" -k "$2" | grep -q ': installed$' ||
		die "dkms status for $2: $(dkms status)"
	pkg_modules "$2"
}

# pkg_remove VERSION KVER: dpkg -r takes the modules away (dkms remove,
# depmod) and keeps the conffile.
pkg_remove() {
	t=$(date +%s)
	dpkg -r rnbd-utils rnbd-dkms >/tmp/dpkg-r.log 2>&1 || { cat /tmp/dpkg-r.log; die "dpkg -r"; }
	cat /tmp/dpkg-r.log
	log "dpkg -r: $(($(date +%s) - t)) s"
	! modinfo -k "$2" -F filename rnbd_client >/dev/null 2>&1 ||
		die "rnbd_client still found after dpkg -r: $(modinfo -k "$2" -F filename rnbd_client)"
	left=$(ls /lib/modules/*/updates/dkms/rnbd* 2>/dev/null || true)
	[ -z "$left" ] || die "modules left after dpkg -r: $left"
	! grep -q rnbd "/lib/modules/$2/modules.dep" || die "modules.dep still lists rnbd"
	[ -z "$(dkms status -m rnbd)" ] || die "dkms still knows rnbd: $(dkms status -m rnbd)"
	[ ! -e "/usr/src/rnbd-$1" ] || die "/usr/src/rnbd-$1 left: $(find "/usr/src/rnbd-$1" | head)"
	expect_eq "rnbd-dkms after dpkg -r" "$(pkg_status rnbd-dkms)" ""
	expect_eq "rnbd-utils after dpkg -r" "$(pkg_status rnbd-utils)" config-files
	[ -e /etc/rnbd/rnbdtab ] || die "dpkg -r removed the conffile /etc/rnbd/rnbdtab"
}

# pkg_purge: dpkg --purge takes the conffile and the unit's links away.
pkg_purge() {
	dpkg --purge rnbd-utils >/tmp/dpkg-p.log 2>&1 || { cat /tmp/dpkg-p.log; die "dpkg --purge"; }
	[ ! -e /etc/rnbd/rnbdtab ] || die "/etc/rnbd/rnbdtab left after purge"
	expect_eq "rnbd-utils after purge" "$(pkg_status rnbd-utils)" ""
	[ -z "$(find /etc/systemd/system -name rnbdmap.service -o -name rnbdmap-retry.timer)" ] ||
		die "rnbdmap.service or rnbdmap-retry.timer still enabled after purge"
}
