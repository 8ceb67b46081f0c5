# SPDX-License-Identifier: GPL-2.0-only
# desc: `make deb` builds rnbd-dkms and rnbd-utils; in a guest (its tmpfs
#       overlay root: the host is left as it was) dpkg -i installs both,
#       DKMS puts the five modules under updates/dkms where modinfo and
#       modprobe find them, a mapped device passes checksummed IO, and
#       dpkg -r / --purge take the modules, sources and config away again.
#       The compile is DKMS's, on the host, of the package's own sources
#       (handed to the postinst as a DKMS tarball); RNBD_LONG=1 has the
#       guest's postinst compile them itself (minutes under TCG).
# boot: host
# timeout: 2400
. "$REPO/tests/lib/host.sh"

long=${RNBD_LONG:-0}
# The guest's kernel, and the kernel tree dkms builds against.
if [ "${KERNEL:-}" = debug ]; then
	kver=$KVER
	ksrc=$KDIR
else
	kver=$("$REPO/scripts/kver")
	ksrc=/lib/modules/$kver/build
fi
sync=$(mk_dir sync)
deb=$CASE_RESULTS/deb
dk=$CASE_RESULTS/dkms

# What the host has before: the case must leave it so.
host_state() {
	dpkg-query -W -f='${db:Status-Status} ' rnbd-dkms rnbd-utils 2>/dev/null || true
	ls -d /var/lib/dkms/rnbd /var/lib/dkms/mok.key /usr/src/rnbd-* \
		/lib/modules/*/updates/dkms/rnbd* 2>/dev/null || true
}
before=$(host_state)

cat >"$sync/../guest.sh" <<'G'
. "$REPO/tests/lib/guest.sh"
long=$1
t0=$(date +%s)
wait_sync /sync/built 600
[ ! -e /sync/failed ] || die "the host's build failed"
kver=$(uname -r)
dkms_deb=$(ls /sync/deb/rnbd-dkms_*_all.deb)
utils_deb=$(ls /sync/deb/rnbd-utils_*_all.deb)
ver=$(dpkg-deb -f "$dkms_deb" Version)
expect_eq "rnbd-utils version" "$(dpkg-deb -f "$utils_deb" Version)" "$ver"
log "packages $ver, kernel $kver, waited $(($(date +%s) - t0)) s for the host"

# Nothing of ours in this guest's view of the system yet.
! modinfo -F filename rnbd_client >/dev/null 2>&1 ||
	die "rnbd_client is installed before the package: $(modinfo -F filename rnbd_client)"

if [ "$long" = 0 ]; then
	# The DKMS tarball of the host's build: the postinst loads it
	# (dkms ldtarball) instead of compiling.
	mkdir -p /usr/share/rnbd-dkms
	cp /sync/rnbd.dkms.tar.gz "/usr/share/rnbd-dkms/rnbd-$ver.dkms.tar.gz"
fi
t=$(date +%s)
dpkg -i "$dkms_deb" "$utils_deb" >/tmp/dpkg-i.log 2>&1 || { cat /tmp/dpkg-i.log; die "dpkg -i"; }
cat /tmp/dpkg-i.log
log "dpkg -i: $(($(date +%s) - t)) s"
rm -rf /usr/share/rnbd-dkms
if [ "$long" = 0 ]; then
	grep -q "Loading tarball for rnbd-$ver" /tmp/dpkg-i.log || die "the postinst did not load the host's build"
else
	grep -q "Building initial module for $kver" /tmp/dpkg-i.log || die "the postinst did not build for $kver"
fi
for p in rnbd-dkms rnbd-utils; do
	expect_eq "$p status" "$(dpkg-query -W -f='${db:Status-Status}' $p)" installed
done
dkms status -m rnbd -v "$ver" -k "$kver" | grep -q ": installed$" ||
	die "dkms status: $(dkms status)"

# Each module is DKMS's copy: under updates/dkms, signed with DKMS's key,
# from the same sources as the tree's own build.
for m in rnbd_trs_core rnbd_trs_client rnbd_trs_server rnbd_client rnbd_server; do
	expect_eq "$m file" "$(modinfo -k "$kver" -F filename $m)" \
		"/lib/modules/$kver/updates/dkms/$m.ko"
	expect_eq "$m signer" "$(modinfo -k "$kver" -F signer $m)" "DKMS module signing key"
	tree=$(find "$REPO/transport" "$REPO/client" "$REPO/server" -name "$m.ko")
	[ -z "$tree" ] || expect_eq "$m srcversion (package against tree)" \
		"$(modinfo -k "$kver" -F srcversion $m)" "$(modinfo -F srcversion "$tree")"
done

# rnbd-utils: the files at their places, the table a conffile, the unit
# enabled (there is no systemd running here: the links are what counts).
for f in /usr/sbin/rnbdctl /lib/udev/rules.d/60-rnbd.rules \
	/lib/systemd/system/rnbdmap.service /usr/lib/modules-load.d/rnbd.conf \
	/etc/rnbd/rnbdtab; do
	[ -s "$f" ] || die "rnbd-utils: $f missing or empty"
done
[ -x /usr/sbin/rnbdctl ] || die "rnbdctl is not executable"
dpkg-query -W -f='${Conffiles}\n' rnbd-utils | grep -q '^ /etc/rnbd/rnbdtab ' ||
	die "/etc/rnbd/rnbdtab is not a conffile"
expect_eq "rnbdmap.service" "$(systemctl --root=/ is-enabled rnbdmap.service)" enabled
for p in rnbdctl.8 rnbdtab.5 rnbd.7; do
	[ -s "/usr/share/man/man${p##*.}/$p.gz" ] || die "man page $p missing"
done

# modprobe loads DKMS's copies (depmod ran), and they serve a disk.
setup_rxe
modprobe rnbd_server || die "modprobe rnbd_server"
modprobe rnbd_client || die "modprobe rnbd_client"
for m in rnbd_trs_core rnbd_trs_client rnbd_trs_server rnbd_client rnbd_server; do
	lsmod | grep -q "^$m " || die "$m not loaded"
	mod_range_record $m
	expect_eq "$m loaded srcversion" "$(cat /sys/module/$m/srcversion)" \
		"$(modinfo -k "$kver" -F srcversion $m)"
done
nb=$(nullb_create nullb0 64)
dev=$(map_dev pkg "$nb")
expect_eq "size in sectors" "$(cat "/sys/block/$dev/size")" $((64 * 2048))
head -c $((16 * 1048576)) /dev/urandom >/tmp/pattern
want=$(sha256sum </tmp/pattern | cut -d' ' -f1)
dd if=/tmp/pattern of="/dev/$dev" bs=1M oflag=direct 2>/dev/null || die "write to /dev/$dev"
expect_eq "server side" "$(sha_dev "$nb" $((16 * 1048576)))" "$want"
expect_eq "client side" "$(sha_dev "/dev/$dev" $((16 * 1048576)))" "$want"
unmap_dev "$dev"
[ ! -e "/sys/block/$dev" ] || die "$dev still there after unmap"
unload_rnbd
nullb_destroy_all
teardown_rxe

# Removal takes the modules away (dkms remove, depmod), purge the config.
t=$(date +%s)
dpkg -r rnbd-utils rnbd-dkms >/tmp/dpkg-r.log 2>&1 || { cat /tmp/dpkg-r.log; die "dpkg -r"; }
cat /tmp/dpkg-r.log
log "dpkg -r: $(($(date +%s) - t)) s"
! modinfo -k "$kver" -F filename rnbd_client >/dev/null 2>&1 ||
	die "rnbd_client still found after dpkg -r: $(modinfo -k "$kver" -F filename rnbd_client)"
left=$(ls /lib/modules/*/updates/dkms/rnbd* 2>/dev/null || true)
[ -z "$left" ] || die "modules left after dpkg -r: $left"
! grep -q rnbd "/lib/modules/$kver/modules.dep" || die "modules.dep still lists rnbd"
[ -z "$(dkms status -m rnbd)" ] || die "dkms still knows rnbd: $(dkms status -m rnbd)"
[ ! -e "/usr/src/rnbd-$ver" ] || die "/usr/src/rnbd-$ver left: $(find "/usr/src/rnbd-$ver" | head)"
[ -e /etc/rnbd/rnbdtab ] || die "dpkg -r removed the conffile /etc/rnbd/rnbdtab"
dpkg --purge rnbd-utils rnbd-dkms >/tmp/dpkg-p.log 2>&1 || { cat /tmp/dpkg-p.log; die "dpkg --purge"; }
[ ! -e /etc/rnbd/rnbdtab ] || die "/etc/rnbd/rnbdtab left after purge"
for p in rnbd-dkms rnbd-utils; do
	st=$(dpkg-query -W -f='${db:Status-Status}' $p 2>/dev/null || true)
	[ -z "$st" ] || [ "$st" = not-installed ] || die "$p: status '$st' after purge"
done
[ -z "$(find /etc/systemd/system -name rnbdmap.service)" ] || die "rnbdmap.service still enabled after purge"
log "guest total $(($(date +%s) - t0)) s"
G

# The guest boots while the host builds.
start_guest guest --timeout "$([ "$long" = 0 ] && echo 600 || echo 2300)" \
	--share "$sync" "$sync/../guest.sh" "$long"
t=$(date +%s)
build() {
	"$REPO/packaging/build-deb" --out "$deb" || return 1
	cp -r "$deb" "$sync/deb" || return 1
	[ "$long" = 0 ] || return 0
	# DKMS's build of the package's sources, in a tree of the case's own
	# (--dkmstree, --sourcetree, a signing key of its own: nothing under
	# /var/lib/dkms or /usr/src).  For every kernel the guest's postinst
	# builds for: the running one and the newest of /boot.
	local ver kernels k debkver kargs=()
	ver=$(dpkg-deb -f "$deb"/rnbd-dkms_*_all.deb Version)
	rm -rf "$dk"
	mkdir -p "$dk/tree"
	dpkg-deb -x "$deb"/rnbd-dkms_*_all.deb "$dk/root"
	debkver=$("$REPO/scripts/kver")
	kernels=("$kver")
	[ "$debkver" = "$kver" ] || kernels+=("$debkver")
	for k in "${kernels[@]}"; do
		local kd=/lib/modules/$k/build
		[ "$k" = "$kver" ] && kd=$ksrc
		mok_signing_key=$dk/mok.key mok_certificate=$dk/mok.pub \
		dkms build -m rnbd -v "$ver" -k "$k" --kernelsourcedir "$kd" \
			--dkmstree "$dk/tree" --sourcetree "$dk/root/usr/src" \
			>"$dk/build-$k.log" 2>&1 || { cat "$dk/build-$k.log"; return 1; }
		kargs+=(-k "$k")
	done
	dkms mktarball -m rnbd -v "$ver" "${kargs[@]}" \
		--dkmstree "$dk/tree" --sourcetree "$dk/root/usr/src" \
		--archive "$sync/rnbd.dkms.tar.gz" >"$dk/mktarball.log" 2>&1 ||
		{ cat "$dk/mktarball.log"; return 1; }
}
if ! build; then
	touch "$sync/failed" "$sync/built"
	kill_guest guest
	die "building the packages failed"
fi
echo "host build: $(($(date +%s) - t)) s"
touch "$sync/built"
rc=0
wait_guest guest || rc=$?
guest_log guest
[ "$rc" = 0 ] || die "guest status $rc"
after=$(host_state)
[ "$after" = "$before" ] || die "the host changed: before '$before', after '$after'"
