# SPDX-License-Identifier: GPL-2.0-only
# desc: a hostile client plays the exchange of TRS_CAP_AUTH wrong in every
#       way (rnbd-hostile --cases auth) against a server in the listed mode
#       that knows its host and key: only the exchange played right gets the
#       chunk table; another key, no key, a recorded exchange played again,
#       one made for another session or address, malformed, truncated,
#       oversized and out-of-order messages, and a connection 1 with the
#       clear session key, and a path without TRS_CAP_AUTH that shows the
#       session's uuid and key, are each refused the way they must be; a brute
#       force is slowed to a few tries a second (EAGAIN); nothing leaks and
#       the kernel reports nothing
# boot: shared
# timeout: 400
S=${RNBD_TIMEOUT_SCALE:-1}
rnbd_setup
tool=$REPO/tests/hostile/rnbd-hostile
[ -x "$tool" ] || die "$tool not built (make -C tests/hostile)"
out=${CASE_RESULTS:-/job/results}/access-hostile-client-tool.log
SCTL=/sys/class/rnbd-server/ctl
nb=$(nullb_create nullb1 16)
K=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
echo listed >/sys/module/rnbd_server/parameters/exports
echo "add $nb hostile rw" >$SCTL/exports || die "export add"
echo "add hostile rnbd:$K" >$SCTL/host_key || die "host_key add"
base_res=$(rdma_res_counts)

# the brute force tries for B s: a try must come within 1 s of the third
# failure in a row to be refused, and on the debug kernel one try takes
# about that long (3 tries in 3 s, none refused)
B=$((3 * S))
rc=0
"$tool" --server "$RXE_ADDR" --cases auth --auth-host hostile \
	--auth-key "rnbd:$K" --timeout $((5000 * S)) --brute-ms $((B * 1000)) \
	>"$out" 2>&1 || rc=$?
cat "$out"
[ $rc = 0 ] || die "rnbd-hostile exited $rc: $(tail -3 "$out")"

# expect WHAT OUTCOME: the tool's line for the case named WHAT
expect() {
	got=$(awk -v w="case auth: $1 -> " \
		'index($0, w) == 1 { print substr($0, length(w) + 1) }' "$out")
	expect_eq "$1" "$got" "$2"
}
expect "the exchange played right" accepted
expect "PROOF made with another key" "answered EKEYREJECTED"
expect "HELLO without a key id, PROOF zero, for a host that has a key" "answered EKEYREJECTED"
expect "the HELLO and PROOF of an earlier session played again" "answered EKEYREJECTED"
expect "PROOF made for another session's uuid" "answered EKEYREJECTED"
expect "PROOF made for another client address" "answered EKEYREJECTED"
expect "another host's name with this host's key" "answered EKEYREJECTED"
for m in "HELLO with a bad magic" "HELLO with the type of PROOF" \
	"HELLO with reserved0 1" "HELLO with a '/' in the host name" \
	"HELLO with a host name of 64 characters, no NUL" \
	"HELLO with an empty host name" "HELLO of 100 bytes" \
	"PROOF where HELLO is due" "a heartbeat where HELLO is due" \
	"PROOF of 20 bytes"; do
	expect "$m" "answered EPROTO"
done
expect "HELLO of 200 bytes, more than its receive" "session closed"
expect "HELLO again where PROOF is due" "session closed"
expect "connection 1 with the session key instead of its token" "rejected ENOENT"
expect "a path without TRS_CAP_AUTH joins the authenticated session" "rejected EKEYREJECTED"
expect "brute force: PROOFs with other keys back to back for $B s" "answered EAGAIN"
n=$(sed -n "s/^auth: brute force: [0-9]* tries in $B s, [0-9]* refused EAGAIN, \([0-9]*\) proofs checked/\1/p" "$out")
log "brute force: $n proofs checked in $B s"
# three failures, then a second's hold: three a second at most
[ -n "$n" ] && [ "$n" -le $((3 * B)) ] ||
	die "brute force: $n proofs checked in $B s, $((3 * B)) at most"
# one rate-limited line per refusal, with the host; no key in the log
klog | grep -q "host hostile refused: its proof does not verify" ||
	die "no server line for a failed proof"
klog | grep -qi "$K" && die "the key in the kernel log"

# every session of the tool is gone, and nothing stays
i=0
until [ -z "$(ls /sys/class/rtrs-server/ 2>/dev/null)" ]; do
	i=$((i + 1)); [ $i -lt $((300 * S)) ] || die "server sessions left: $(ls /sys/class/rtrs-server/)"; sleep 0.1
done
expect_eq "RDMA resources" "$(rdma_res_counts)" "$base_res"
echo "remove hostile" >$SCTL/host_key
echo "remove $nb" >$SCTL/exports
echo all >/sys/module/rnbd_server/parameters/exports
true
