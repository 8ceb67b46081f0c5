# SPDX-License-Identifier: GPL-2.0-only
# desc: the IONOS rnbd tool, unmodified, on a two-path session in one guest
#       (two server addresses on the rxe netdev): map with two paths,
#       session and path list and show in JSON (path_cnt, act_path_cnt,
#       path_uu, states, byte counters of both paths), then under fio
#       write+verify: path disconnect, path reconnect, path delete, path
#       add (0 fio errors; the JSON follows each step), the server's view
#       of the session and its paths (server session/path list), unmap
# boot: shared
# timeout: 500
S=${RNBD_TIMEOUT_SCALE:-1}
tool=$REPO/.build/rnbd-tool/rnbd
[ -x "$tool" ] || die "$tool not built (scripts/check builds it from ../shared/tools/rnbd-tool)"
mkdir -p /run/rnbd-tool-mp
nb=$(nullb_create nullb1 64)
# shellcheck disable=SC2046
set -- $(stat -c '%t %T' "$nb")
mknod /run/rnbd-tool-mp/mdisk b $((0x$1)) $((0x$2)) || die "mknod"
SERVER_PARAMS="dev_search_path=/run/rnbd-tool-mp/"
rnbd_setup
A1=$RXE_ADDR
A2=10.9.1.1
ip addr add $A2/24 dev "$RXE_NETDEV" || die "second address"

t() {
	log "rnbd $*"
	"$tool" "$@" >/tmp/tool.out 2>&1 || die "rnbd $*: $(cat /tmp/tool.out)"
}
json() {
	got=$(python3 "$REPO/tests/lib/tool-json.py" "$1" </tmp/tool.out) ||
		die "bad JSON from the tool: $(cat /tmp/tool.out)"
	expect_eq "json $1" "$got" "$2"
}
sess="$(hostname)@mp.example"
C=/sys/class/rtrs-client/$sess
P1="ip:$A1@ip:$A1"
P2="ip:$A2@ip:$A2"
state() { cat "$C/paths/$1/state" 2>/dev/null; }
wait_state() {	# wait_state PATH STATE SECONDS
	i=0
	until [ "$(state "$1")" = "$2" ]; do
		i=$((i + 1))
		[ $i -lt $(($3 * 10 * S)) ] || die "path $1 stays '$(state "$1")', waited for $2"
		sleep 0.1
	done
}

t client map mdisk from "$sess" "ip:$A1@ip:$A1" "ip:$A2@ip:$A2"
dev=$(basename "$(readlink -f "/sys/class/rnbd-client/ctl/devices/mdisk@$sess")")
expect_eq "paths" "$(ls "$C/paths" | sort | tr '\n' ' ')" "$P1 $P2 "
dd if=/dev/urandom of=/dev/$dev bs=64k count=64 oflag=direct 2>/dev/null || die "write"
t client session list all json
s='d["outgoing sessions"][0]'
json "$s[\"sessname\"]" "$sess"
json "$s[\"path_cnt\"]" 2
json "$s[\"act_path_cnt\"]" 2
json "$s[\"path_uu\"]" UU
json "$s[\"state\"]" connected
json "$s[\"mp_short\"]" RR
json "$s[\"tx_bytes\"] >= 4194304" True
t client path list all json
json 'len(d["outgoing paths"])' 2
json 'sorted(p["pathname"] for p in d["outgoing paths"])' "['$P1', '$P2']"
json 'sorted(p["state"] for p in d["outgoing paths"])' "['connected', 'connected']"
json 'all(p["tx_bytes"] > 0 for p in d["outgoing paths"])' True
t client session show "$sess" all json
json '"\x27path_cnt\x27: 2" in str(d)' True

# path operations under fio write+verify
fio --name=v --filename=/dev/$dev --ioengine=libaio --direct=1 \
	--rw=randwrite --bs=4k --iodepth=16 --size=16M --rate_iops=,300 \
	--verify=crc32c --verify_fatal=1 --verify_state_save=0 \
	>/tmp/fio.out 2>&1 &
fpid=$!
sleep 2
t client path disconnect "$sess" "$P2"
expect_eq "state after disconnect" "$(state "$P2")" disconnected
t client session list all json
json "$s[\"act_path_cnt\"]" 1
json "$s[\"path_uu\"]" "$(for p in $(ls "$C/paths"); do [ "$(state "$p")" = connected ] && printf U || printf _; done)"
t client path reconnect "$sess" "$P2"
wait_state "$P2" connected 20
t client path delete "$sess" "$P2"
[ ! -e "$C/paths/$P2" ] || die "deleted path still listed"
t client path list all json
json 'len(d["outgoing paths"])' 1
t client path add "$sess" "ip:$A2@ip:$A2"
expect_eq "state after add" "$(state "$P2")" connected
t client session list all json
json "$s[\"path_cnt\"]" 2
json "$s[\"act_path_cnt\"]" 2
wait $fpid || { cat /tmp/fio.out; die "fio failed"; }
if grep -o 'err= *[0-9]*' /tmp/fio.out | grep -vq 'err= *0$'; then
	cat /tmp/fio.out
	die "fio reported an error"
fi
grep -q 'err= *0' /tmp/fio.out || { cat /tmp/fio.out; die "no fio report"; }

# the server's view: one session with both paths
t server session list all json
json 'len(d["incoming sessions"])' 1
json 'd["incoming sessions"][0]["path_cnt"]' 2
t server path list all json
json 'len(d["incoming paths"])' 2
json 'sorted(p["src_addr"] for p in d["incoming paths"])' "['ip:$A1', 'ip:$A2']"
json 'all(p["hca_name"] == "rxe0" for p in d["incoming paths"])' True

t client device unmap "$dev"
[ ! -e "$C" ] || die "session left"
ip addr del $A2/24 dev "$RXE_NETDEV"
rm -rf /run/rnbd-tool-mp
