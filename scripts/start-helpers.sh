# Helpers of scripts/start.sh (sourced): ports checked or chosen before any server starts, so that a clash
# is reported by port and by the server that wanted it (instead of surfacing later as a server's own,
# misleading error), and process trees stopped on exit.
#
#   want_port VAR PORT WHO     claim PORT, given in the environment variable VAR, for WHO; fails naming
#                              the port, VAR, WHO and the process holding it when PORT is not a port
#                              number, is already claimed by another server, or is in use
#   pick_port VAR FROM WHO     claim the first free, unclaimed port from FROM up for WHO; sets VAR
#   recheck_ports PORT...      fail as want_port does if one of these claimed ports has been taken since
#   alive PID                  true while PID runs (a zombie counts as gone)
#   stop_tree PID              TERM PID and every process below it; KILL what is left after 10 s

CLAIMED_PORTS=() # one "PORT|VAR|WHO" per claimed port

# True when nothing listens on 127.0.0.1:PORT (every server npm start runs listens there): binds it.
port_free() {
	node -e 'const s = require("net").createServer();
		s.once("error", () => process.exit(1));
		s.listen(Number(process.argv[1]), "127.0.0.1", () => s.close(() => process.exit(0)));' "$1"
}

# Who listens on PORT, e.g. "pid 1234 (node server.js)", when ss can tell; else "another process".
port_holder() {
	local pid
	pid=$(ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n 1 | cut -d= -f2 || true)
	if [ -n "$pid" ]; then
		echo "pid $pid ($(ps -o args= -p "$pid" 2>/dev/null | cut -c1-80))"
	else
		echo "another process"
	fi
}

port_die() { echo "npm start: $*" >&2; exit 1; }

# The claim of PORT, "PORT|VAR|WHO", if any.
port_claim() {
	local c
	for c in "${CLAIMED_PORTS[@]}"; do [ "${c%%|*}" != "$1" ] || { echo "$c"; return 0; }; done
	return 1
}

port_in_use() {
	port_die "port $1 ($2), wanted by $3, is already in use by $(port_holder "$1"). Stop that process or set $2 to another port."
}

want_port() {
	local var=$1 port=$2 who=$3 other ovar owho
	[[ $port =~ ^[0-9]+$ ]] && [ "$port" -ge 1 ] && [ "$port" -le 65535 ] ||
		port_die "$var=$port (for $who) is not a port number (1-65535)."
	if other=$(port_claim "$port"); then
		IFS='|' read -r _ ovar owho <<<"$other"
		port_die "port $port is wanted twice: by $owho ($ovar) and by $who ($var). Set one of them to another port."
	fi
	port_free "$port" || port_in_use "$port" "$var" "$who"
	CLAIMED_PORTS+=("$port|$var|$who")
}

pick_port() {
	local var=$1 port=$2 who=$3
	for _ in $(seq 1 200); do
		if [ "$port" -le 65535 ] && ! port_claim "$port" >/dev/null && port_free "$port"; then
			CLAIMED_PORTS+=("$port|$var|$who")
			printf -v "$var" '%s' "$port"
			return 0
		fi
		port=$((port + 1))
	done
	port_die "found no free port from $2 up for $who; set $var."
}

recheck_ports() {
	local port var who
	for port in "$@"; do
		IFS='|' read -r _ var who <<<"$(port_claim "$port")"
		port_free "$port" || port_in_use "$port" "$var" "$who"
	done
}

alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && st=${st// /} && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }

# The processes below PID, each listed after its own descendants.
descendants() {
	local c
	for c in $(ps -o pid= --ppid "$1" 2>/dev/null || true); do
		descendants "$c"
		echo "$c"
	done
}

stop_tree() {
	local pids p left
	pids="$(descendants "$1") $1"
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	for _ in $(seq 1 50); do
		left=
		for p in $pids; do alive "$p" && left=1; done
		[ -n "$left" ] || return 0
		sleep 0.2
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}
