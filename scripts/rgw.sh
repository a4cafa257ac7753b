#!/usr/bin/env bash
# Real S3 for tests: single-node Ceph (mon + memstore OSD + radosgw) on loopback, no systemd, no auth.
# It enforces If-None-Match / If-Match on PUT, which the storage tests rely on.
#   scripts/rgw.sh up   DIR [PORT]   prints the endpoint http://127.0.0.1:PORT (keys LLMMEMACCESSKEY /
#                                    LLMMEMSECRETKEY); without PORT, free ports are picked for rgw and mon
#   scripts/rgw.sh down DIR
#   scripts/rgw.sh stop-rgw DIR      stops only radosgw; the mon and the memstore OSD keep the data
#   scripts/rgw.sh start-rgw DIR     starts radosgw again on the same cluster and port, waits until it answers
#   scripts/rgw.sh restart-rgw DIR   stop-rgw, then start-rgw (a storage outage with the data kept)
#   scripts/rgw.sh check             -> exit 0 when every Ceph program `up` runs is installed; else names
#                                       each missing file, its package and the command that installs them
#   scripts/rgw.sh install           installs what `check` finds missing (apt-get; root or sudo)
set -euo pipefail
cmd=${1:?usage: rgw.sh up|down|stop-rgw|start-rgw|restart-rgw|check|install DIR [PORT]}
# shellcheck source=scripts/need.sh
. "$(dirname "${BASH_SOURCE[0]}")/need.sh"

# What `up` runs, each from the package that ships it (scripts/need.sh).
rgw_needs() {
	need_file ceph-mon /usr/bin/ceph-mon
	need_file ceph-base /usr/bin/monmaptool
	need_file ceph-osd /usr/bin/ceph-osd
	need_file ceph-common /usr/bin/ceph /usr/bin/radosgw-admin
	need_file radosgw /usr/bin/radosgw
	need_run radosgw /usr/bin/radosgw --version
	need_file curl /usr/bin/curl
}
case "$cmd" in
check) rgw_needs; need_ok || { need_say rgw.sh; exit 1; }; exit 0 ;;
install) rgw_needs; need_install rgw.sh; exit $? ;;
up) rgw_needs; need_ok || { need_say rgw.sh; echo "rgw.sh: run: bash scripts/rgw.sh install" >&2; exit 1; } ;;
esac

C=${2:?dir}
LIFETIME=${RGW_LIFETIME_SECONDS:-7200}
# The memstore OSD keeps every object in RAM, at most this many bytes (bench/scale.ts at 5,000 users
# stores about 0.9 GiB beside the 1,000 users it built first).
RGW_MEMSTORE_BYTES=${RGW_MEMSTORE_BYTES:-1073741824}
[[ $RGW_MEMSTORE_BYTES =~ ^[1-9][0-9]*$ ]] || { echo "rgw.sh: RGW_MEMSTORE_BYTES must be a number of bytes, not '$RGW_MEMSTORE_BYTES'" >&2; exit 2; }

# Stops the daemons named (rgw, osd, mon) whose pid files are in $C.
# Each pid is a `timeout` wrapper leading its own process group (setsid): TERM reaches the daemon
# through it; the daemons take a few seconds to stop, then whatever is left of each group is killed.
stop_daemons() {
	local pids=() p pid alive
	for p in "$@"; do
		if [ -f "$C/$p.pid" ]; then pids+=("$(cat "$C/$p.pid")"); rm -f "$C/$p.pid"; fi
	done
	[ ${#pids[@]} -gt 0 ] || return 0
	kill "${pids[@]}" 2>/dev/null || true
	for _ in $(seq 1 50); do
		alive=0
		for pid in "${pids[@]}"; do pgrep -g "$pid" >/dev/null && alive=1; done
		[ $alive = 1 ] || break
		sleep 0.2
	done
	for pid in "${pids[@]}"; do kill -9 -- "-$pid" 2>/dev/null || true; done
}

# Starts radosgw on the cluster in $C (its port is in the beast line of ceph.conf) and waits until it answers.
start_rgw() {
	local port ok=0
	port=$(sed -n 's/.*beast endpoint=127\.0\.0\.1:\([0-9]*\).*/\1/p' "$C/ceph.conf")
	[ -n "$port" ] || { echo "no beast endpoint in $C/ceph.conf" >&2; return 1; }
	setsid nohup timeout "$LIFETIME" radosgw -c "$C/ceph.conf" -n client.rgw.a -f >>"$C/log/rgw.out" 2>&1 &
	echo $! >"$C/rgw.pid"
	for _ in $(seq 1 120); do
		if curl -s -o /dev/null "http://127.0.0.1:$port/"; then ok=1; break; fi
		sleep 0.5
	done
	[ $ok = 1 ] || { echo "radosgw did not answer on port $port; see $C/log" >&2; return 1; }
	RGW_PORT=$port
}

case "$cmd" in
down) stop_daemons rgw osd mon; exit 0 ;;
stop-rgw) stop_daemons rgw; exit 0 ;;
start-rgw | restart-rgw)
	[ -f "$C/mon.pid" ] || { echo "no cluster in $C (run: rgw.sh up $C)" >&2; exit 1; }
	[ "$cmd" = start-rgw ] || stop_daemons rgw
	[ ! -f "$C/rgw.pid" ] || { echo "radosgw already running in $C" >&2; exit 1; }
	start_rgw
	echo "radosgw ready again on http://127.0.0.1:$RGW_PORT" >&2
	echo "http://127.0.0.1:$RGW_PORT"
	exit 0
	;;
up) ;;
*) echo "unknown command $cmd" >&2; exit 2 ;;
esac

free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
PORT=${3:-$(free_port)}
MON_PORT=${RGW_MON_PORT:-$(free_port)}
rm -rf "$C"
mkdir -p "$C"/{run,log,mon.a,osd.0,rgw}
FSID=$(cat /proc/sys/kernel/random/uuid)
cat >"$C/ceph.conf" <<CONF
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
ms bind msgr1 = false
ms bind ipv6 = false
public network = 127.0.0.0/8
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon data avail warn = 1
osd pool default pg autoscale mode = off
osd pool default pg num = 8
osd pool default pgp num = 8
mon max pg per osd = 1000
osd objectstore = memstore
memstore device bytes = $RGW_MEMSTORE_BYTES
run dir = $C/run
admin socket = $C/run/\$name.asok
pid file = $C/run/\$name.pid
log file = $C/log/\$name.log
keyring = $C/keyring
[mon.a]
mon data = $C/mon.a
[osd.0]
osd data = $C/osd.0
[client.rgw.a]
# tcp_nodelay: without it beast answers small GETs ~40 ms late (Nagle against delayed ACKs): 48 ms vs 3 ms for 3 KB.
rgw frontends = beast endpoint=127.0.0.1:$PORT tcp_nodelay=1
rgw data = $C/rgw
CONF
touch "$C/keyring"
CEPH="ceph -c $C/ceph.conf"
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$C/monmap" >/dev/null
ceph-mon -c "$C/ceph.conf" --mkfs -i a --monmap "$C/monmap"
setsid nohup timeout "$LIFETIME" ceph-mon -c "$C/ceph.conf" -i a -f >"$C/log/mon.out" 2>&1 &
echo $! >"$C/mon.pid"
for _ in $(seq 1 60); do timeout 5 $CEPH mon stat >/dev/null 2>&1 && break; sleep 0.5; done
OSDUUID=$(cat /proc/sys/kernel/random/uuid)
timeout 20 $CEPH osd new "$OSDUUID" >/dev/null
ceph-osd -c "$C/ceph.conf" -i 0 --mkfs --osd-uuid "$OSDUUID" 2>/dev/null
setsid nohup timeout "$LIFETIME" ceph-osd -c "$C/ceph.conf" -i 0 -f >"$C/log/osd.out" 2>&1 &
echo $! >"$C/osd.pid"
for _ in $(seq 1 60); do timeout 5 $CEPH osd stat 2>/dev/null | grep -q "1 up" && break; sleep 0.5; done
start_rgw
timeout 60 radosgw-admin -c "$C/ceph.conf" -n client.rgw.a user create --uid=llmmem --display-name=llmmem \
	--access-key=LLMMEMACCESSKEY --secret-key=LLMMEMSECRETKEY >/dev/null 2>>"$C/log/admin.err"
echo "radosgw ready on http://127.0.0.1:$PORT" >&2
echo "http://127.0.0.1:$PORT"
