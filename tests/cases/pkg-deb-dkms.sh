# SPDX-License-Identifier: GPL-2.0-only
# desc: `make deb` builds rnbd-dkms and rnbd-utils; dpkg -i of both in a
#       throwaway overlay of the host's root (tests/lib/overlay-root) has
#       the postinst build the five modules with DKMS and install them under
#       updates/dkms; a guest booted on that root finds them there
#       (modinfo, modprobe) and maps a device through them with
#       checksummed IO.  dpkg -r / --purge take modules, sources and
#       config away again.  The host itself is left as it was.  The other
#       Debian kernel's headers (6.12 beside 6.1, 6.1 beside 6.12) are
#       hidden during dpkg -i.  With RNBD_LONG=1 (a second kernel's build;
#       TCG) they then arrive: the hook a linux-headers postinst runs has
#       DKMS build for that kernel too; and dpkg -i, the build and dpkg -r
#       run once more in the guest itself.
# boot: host
# timeout: 4200
. "$REPO/tests/lib/host.sh"

long=${RNBD_LONG:-0}
# The guest's kernel; the debug kernel's modules live in its build cache.
kver=${KVER:-$("$REPO/scripts/kver")}
# The other Debian kernel, whose headers come after the package.
case $kver in
6.12.*) later=$("$REPO/scripts/kver" 6.1) ;;
*) later=$("$REPO/scripts/kver" 6.12) ;;
esac
deb=$CASE_RESULTS/deb
job=$(mk_dir job)

# What the host has of ours: the case must leave it so.
host_state() {
	dpkg-query -W -f='${db:Status-Status} ' rnbd-dkms rnbd-utils 2>/dev/null || true
	ls -d /var/lib/dkms/* /usr/src/rnbd-* /lib/modules/*/updates/dkms/rnbd* \
		/etc/rnbd 2>/dev/null || true
}
before=$(host_state)

t=$(date +%s)
"$REPO/packaging/build-deb" --out "$deb"
ver=$(dpkg-deb -f "$deb"/rnbd-dkms_*_all.deb Version)
echo "make deb: $(($(date +%s) - t)) s, version $ver, kernel $kver"

# In a throwaway overlay of the host's root, on either setting.
# The guest uses what the overlay's dpkg installed.
cat >"$job/../guest.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
. "$REPO/tests/lib/pkg.sh"
kmsg "pkg: checks"
pkg_modules "$(uname -r)"
pkg_use
# the debug kernel's detectors, as the runner checks after a guest case
kmemleak_check || die "kmemleak: objects leaked by our modules (above)"
lockdep_check || exit 1
G
# dpkg, its postinst's DKMS build and the checks, then the guest,
# then dpkg -r and --purge, all in the overlay.
cat >"$job/../overlay.sh" <<'O'
. "$REPO/tests/lib/guest.sh"
. "$REPO/tests/lib/pkg.sh"
deb=$1 ver=$2 kver=$3 job=$4 later=$5 long=$6
if [ "${KERNEL:-}" = debug ]; then
	# the debug kernel's modules, where the postinst finds every kernel
	ln -s "$(KVER=$kver "$REPO/scripts/debug-kernel" dir)/root/lib/modules/$kver" "/lib/modules/$kver"
fi
pkg_absent "$kver"
pkg_absent "$later"
# (hidden on either setting: the postinst would build for it too; the
# overlay is thrown away, headers and all)
pkg_hide_headers "$later"
pkg_install "$deb"
pkg_installed "$ver" "$kver"
[ "$long" = 0 ] || pkg_headers_arrive "$ver" "$later"
t=$(date +%s)
rc=0
"$REPO/scripts/guest-run" --errexit --quiet --timeout 300 --job "$job" "$job/../guest.sh" || rc=$?
echo "--- guest ($(($(date +%s) - t)) s)"
cat "$job/test.log"
[ "$rc" = 0 ] || die "guest status $rc"
pkg_remove "$ver" "$kver"
pkg_purge
O
"$REPO/tests/lib/overlay-root" "$CASE_RESULTS/overlay" --bind "$CASE_RESULTS" -- \
	/bin/sh -e "$job/../overlay.sh" "$deb" "$ver" "$kver" "$job" "$later" "$long"
if [ "$long" = 1 ]; then
	# All in the guest: dpkg, DKMS compiling under TCG, depmod.
	job=$(mk_dir job-long)
	cat >"$job/../guest-long.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
. "$REPO/tests/lib/pkg.sh"
deb=$1 ver=$2 kver=$(uname -r)
pkg_absent "$kver"
pkg_install "$deb"
pkg_installed "$ver" "$kver"
pkg_use
kmemleak_check || die "kmemleak: objects leaked by our modules (above)"
lockdep_check || exit 1
pkg_remove "$ver" "$kver"
pkg_purge
G
	rc=0
	"$GUEST_RUN" --errexit --quiet --timeout 3000 --job "$job" "$job/../guest-long.sh" "$deb" "$ver" || rc=$?
	cat "$job/test.log"
	[ "$rc" = 0 ] || die "guest status $rc"
fi

after=$(host_state)
[ "$after" = "$before" ] || die "the host changed: before '$before', after '$after'"
