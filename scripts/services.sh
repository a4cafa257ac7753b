#!/usr/bin/env bash
# Real PostgreSQL and Redis from Debian for tests and benchmarks: private instances in a directory of
# your choice, on free loopback ports, no systemd, no passwords, bounded lifetimes.
#
#   services.sh install            installs what `check` finds missing (apt-get; root)
#   services.sh check              exit 0 when every program below is installed (postgres, initdb,
#                                  pg_isready, psql of the newest PostgreSQL; redis-server, redis-cli;
#                                  the user postgres); else names each missing file and its package
#   services.sh pg-up DIR [PORT]   initdb a cluster in DIR/data (as user postgres when run as root: initdb
#                                  refuses root; if postgres cannot reach DIR, DIR/data links to a private
#                                  directory in $TMPDIR), start it on 127.0.0.1:PORT (default: free) with
#                                  trust auth, create database $SERVICES_PG_DB (default "app");
#                                  prints   postgresql://postgres@127.0.0.1:PORT/DB
#                                  and writes DIR/pg.env (PGHOST PGPORT PGUSER PGDATABASE, shell syntax)
#   services.sh pg-info DIR        prints "127.0.0.1 PORT postgres DB" of a running cluster
#   services.sh pg-createdb DIR NAME   one more database in the cluster (e.g. n8n's own, for queue mode)
#   services.sh psql DIR [ARGS...] psql against the cluster's database (as user postgres, over TCP)
#   services.sh pg-down DIR        fast shutdown, then SIGKILL of whatever is left of its process group
#   services.sh redis-up DIR [PORT]    redis-server on 127.0.0.1:PORT (default: a free port), no
#                                  persistence (no RDB, no AOF), working dir DIR; prints 127.0.0.1:PORT
#   services.sh redis-info DIR     prints 127.0.0.1:PORT of a running server
#   services.sh redis-cli DIR [ARGS...]  redis-cli against it
#   services.sh redis-down DIR     SHUTDOWN NOSAVE, then SIGKILL of its process group
#
# Every server runs as `setsid timeout $SERVICES_LIFETIME …` (default 7200 s): its own process group
# (recorded in DIR/pg.pid or DIR/redis.pid), which `*-down` kills as a whole, and which dies by itself
# when the lifetime runs out even if nobody calls `*-down`. Both listen on 127.0.0.1 only (Postgres has no
# Unix socket: connect with -h 127.0.0.1, e.g. through `services.sh psql`). `pg-down` deletes the data too
# (SERVICES_KEEP_DATA=1 keeps them). Diagnostics go to stderr, results to stdout;
# logs are DIR/postgres.log and DIR/redis.log.
# Knobs (env): SERVICES_LIFETIME (7200), SERVICES_PG_DB (app), SERVICES_PG_OPTS (extra `-c name=value`
#   arguments for postgres, e.g. "-c fsync=off"), SERVICES_BOOT_TIMEOUT (60 s).
# Postgres keeps its defaults (fsync and synchronous_commit on), so benchmarks see a real durable store.
set -euo pipefail

LIFETIME=${SERVICES_LIFETIME:-7200}
BOOT_TIMEOUT=${SERVICES_BOOT_TIMEOUT:-60}
PG_DB=${SERVICES_PG_DB:-app}

die() { echo "services.sh: $*" >&2; exit 1; }
usage() { sed -n '2,33p' "$0" >&2; exit 2; }

# The newest PostgreSQL major installed from Debian's packages (/usr/lib/postgresql/<ver>/bin).
pg_bin() {
	local v
	v=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -n 1)
	[ -n "$v" ] && [ -x "/usr/lib/postgresql/$v/bin/postgres" ] || return 1
	echo "/usr/lib/postgresql/$v/bin"
}
# shellcheck source=scripts/need.sh
. "$(dirname "${BASH_SOURCE[0]}")/need.sh"

# What the commands below run, each from the package that ships it (scripts/need.sh).
services_needs() {
	local bin major
	if bin=$(pg_bin); then
		major=$(basename "$(dirname "$bin")")
		need_file "postgresql-$major" "$bin/postgres" "$bin/initdb"
		need_file "postgresql-client-$major" "$bin/psql" "$bin/pg_isready"
		id postgres >/dev/null 2>&1 || need_add "postgresql-common" "no user postgres"
	else
		need_add postgresql "no PostgreSQL server in /usr/lib/postgresql/<major>/bin/postgres"
	fi
	need_file redis-server /usr/bin/redis-server
	need_file redis-tools /usr/bin/redis-cli
	need_file procps /usr/bin/pgrep /usr/bin/ps
	need_file util-linux /usr/bin/setpriv
}
have_pg() { pg_bin >/dev/null; }
have_redis() { [ -x /usr/bin/redis-server ] && [ -x /usr/bin/redis-cli ]; }

free_port() {
	node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# True while PID runs (a zombie counts as gone: PID 1 here may not reap orphans promptly).
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && st=${st// /} && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
group_alive() { pgrep -g "$1" >/dev/null 2>&1; }

# Stops the process group whose leader pid is in FILE: SIGNAL first (the server's own clean shutdown),
# up to 15 s for it to go, then SIGKILL to the whole group. Removes FILE.
stop_group() {
	local file=$1 sig=$2 pid
	[ -f "$file" ] || return 0
	pid=$(cat "$file")
	if [ -n "$pid" ]; then
		kill "-$sig" -- "-$pid" 2>/dev/null || true
		for _ in $(seq 1 75); do group_alive "$pid" || break; sleep 0.2; done
		kill -KILL -- "-$pid" 2>/dev/null || true
	fi
	rm -f "$file"
}

# Runs a command as user postgres when we are root (initdb and postgres refuse root), else as ourselves.
# setpriv execs the command (no extra process), so `timeout` signals postgres itself.
AS_PG=()
[ "$(id -u)" = 0 ] && AS_PG=(setpriv --reuid=postgres --regid=postgres --init-groups --)
as_pg() { "${AS_PG[@]}" "$@"; }

# Deletes the cluster's files: DIR/data, or the private directory it links to.
remove_data() {
	local dir=$1
	if [ -f "$dir/pg.datadir" ]; then rm -rf "$(cat "$dir/pg.datadir")"; rm -f "$dir/pg.datadir"; fi
	rm -rf "$dir/data"
}

pg_port() { [ -f "$1/pg.port" ] || die "no PostgreSQL cluster running in $1 (run: $0 pg-up $1)"; cat "$1/pg.port"; }
pg_dbname() { cat "$1/pg.db" 2>/dev/null || echo "$PG_DB"; }
run_psql() {
	local dir=$1; shift
	"$(pg_bin)/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$(pg_port "$dir")" -U postgres "$@"
}

pg_up() {
	local dir=$1 port=${2:-} bin data user
	have_pg || die "PostgreSQL is not installed (run: $0 install)"
	bin=$(pg_bin)
	mkdir -p "$dir"
	dir=$(realpath "$dir")
	data=$dir/data
	if [ -f "$dir/pg.pid" ] && group_alive "$(cat "$dir/pg.pid")"; then die "PostgreSQL already running in $dir"; fi
	remove_data "$dir"
	rm -f "$dir/pg.pid" "$dir/pg.port" "$dir/pg.env"
	user=$(id -un)
	if [ "$(id -u)" = 0 ]; then
		user=postgres
		id postgres >/dev/null 2>&1 || die "no user postgres (the Debian package creates it: $0 install)"
		mkdir -p "$data"
		chown postgres: "$data"
		if ! as_pg test -w "$data" -a -x "$data"; then
			# DIR sits below a directory that others cannot search (mktemp -d makes 0700 ones): keep the
			# cluster in a private directory of user postgres instead, linked from DIR/data.
			rmdir "$data"
			data=$(mktemp -d "${TMPDIR:-/tmp}/services-pg.XXXXXX")
			chown postgres: "$data"
			echo "$data" >"$dir/pg.datadir"
			ln -s "$data" "$dir/data"
		fi
	fi
	as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ tail -n 20 "$dir/initdb.log" >&2; die "initdb failed (log $dir/initdb.log)"; }
	# Loopback TCP only, trusted (no Unix socket at all: nothing in /var/run/postgresql, no path-length limit).
	printf '%s\n' 'host all all 127.0.0.1/32 trust' >"$data/pg_hba.conf"
	local attempt ok=0
	for attempt in 1 2 3; do
		[ -n "$port" ] || port=$(free_port)
		port_busy "$port" && { [ -n "${2:-}" ] && die "port $port is already in use"; port=; continue; }
		# timeout -s INT: PostgreSQL's fast shutdown (TERM would wait for every client to leave).
		# shellcheck disable=SC2086  # SERVICES_PG_OPTS is a list of arguments
		setsid timeout -s INT -k 30 "$LIFETIME" "${AS_PG[@]}" "$bin/postgres" -D "$data" \
			-c listen_addresses=127.0.0.1 -c port="$port" -c unix_socket_directories='' \
			-c max_connections=200 -c logging_collector=off ${SERVICES_PG_OPTS:-} \
			>>"$dir/postgres.log" 2>&1 </dev/null &
		echo $! >"$dir/pg.pid"
		local deadline=$((SECONDS + BOOT_TIMEOUT))
		while [ $SECONDS -lt $deadline ]; do
			if "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres; then ok=1; break; fi
			alive "$(cat "$dir/pg.pid")" || break
			sleep 0.2
		done
		[ $ok = 1 ] && break
		stop_group "$dir/pg.pid" KILL
		# Someone else took the port between our pick and postgres's bind: pick again (not a given port).
		if [ -z "${2:-}" ] && grep -q 'could not bind\|Address already in use' "$dir/postgres.log"; then port=; continue; fi
		break
	done
	[ $ok = 1 ] || { tail -n 20 "$dir/postgres.log" >&2; die "PostgreSQL did not start (log $dir/postgres.log)"; }
	echo "$port" >"$dir/pg.port"
	echo "$PG_DB" >"$dir/pg.db"
	[ "$PG_DB" = postgres ] || run_psql "$dir" -d postgres -c "CREATE DATABASE \"$PG_DB\"" >&2
	printf 'PGHOST=127.0.0.1\nPGPORT=%s\nPGUSER=postgres\nPGDATABASE=%s\n' "$port" "$PG_DB" >"$dir/pg.env"
	echo "PostgreSQL $("$bin/postgres" -V | awk '{print $3}') ready on 127.0.0.1:$port (data $data, runs as $user)" >&2
	echo "postgresql://postgres@127.0.0.1:$port/$PG_DB"
}

redis_port() { [ -f "$1/redis.port" ] || die "no redis-server running in $1 (run: $0 redis-up $1)"; cat "$1/redis.port"; }

redis_up() {
	local dir=$1 port=${2:-}
	have_redis || die "redis-server is not installed (run: $0 install)"
	mkdir -p "$dir"
	dir=$(realpath "$dir")
	if [ -f "$dir/redis.pid" ] && group_alive "$(cat "$dir/redis.pid")"; then die "redis-server already running in $dir"; fi
	rm -f "$dir/redis.pid" "$dir/redis.port"
	local attempt ok=0
	for attempt in 1 2 3; do
		[ -n "$port" ] || port=$(free_port)
		port_busy "$port" && { [ -n "${2:-}" ] && die "port $port is already in use"; port=; continue; }
		# No RDB snapshots, no AOF: nothing is ever written to disk; DIR is its working directory only.
		setsid timeout "$LIFETIME" redis-server --bind 127.0.0.1 --port "$port" --protected-mode yes \
			--save '' --appendonly no --dir "$dir" --daemonize no --logfile "$dir/redis.log" \
			>>"$dir/redis.log" 2>&1 </dev/null &
		echo $! >"$dir/redis.pid"
		local deadline=$((SECONDS + BOOT_TIMEOUT))
		while [ $SECONDS -lt $deadline ]; do
			if [ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" = PONG ]; then ok=1; break; fi
			alive "$(cat "$dir/redis.pid")" || break
			sleep 0.1
		done
		[ $ok = 1 ] && break
		stop_group "$dir/redis.pid" KILL
		if [ -z "${2:-}" ] && grep -q 'Address already in use' "$dir/redis.log" 2>/dev/null; then port=; continue; fi
		break
	done
	[ $ok = 1 ] || { tail -n 20 "$dir/redis.log" >&2 || true; die "redis-server did not start (log $dir/redis.log)"; }
	echo "$port" >"$dir/redis.port"
	echo "redis-server $(redis-server --version | sed -n 's/.*v=\([0-9.]*\).*/\1/p') ready on 127.0.0.1:$port (dir $dir)" >&2
	echo "127.0.0.1:$port"
}

cmd=${1:-}; shift || true
case "$cmd" in
install)
	services_needs
	need_ok && exit 0
	need_install services.sh || exit 1
	# A first install brings the server's major only now: check its programs too.
	need_reset
	services_needs
	need_install services.sh
	;;
check)
	services_needs
	need_ok || { need_say services.sh; exit 1; }
	;;
pg-up) pg_up "${1:?usage: pg-up DIR [PORT]}" "${2:-}" ;;
pg-info)
	dir=${1:?usage: pg-info DIR}
	echo "127.0.0.1 $(pg_port "$dir") postgres $(pg_dbname "$dir")"
	;;
pg-createdb)
	dir=${1:?usage: pg-createdb DIR NAME}; name=${2:?database name}
	run_psql "$dir" -d postgres -c "CREATE DATABASE \"$name\"" >&2
	;;
psql)
	dir=${1:?usage: psql DIR [ARGS...]}; shift
	run_psql "$dir" -d "$(pg_dbname "$dir")" "$@"
	;;
pg-down)
	dir=${1:?usage: pg-down DIR}
	# SIGINT = PostgreSQL's fast shutdown (abort transactions, checkpoint, exit); the group gets it all.
	stop_group "$dir/pg.pid" INT
	rm -f "$dir/pg.port" "$dir/pg.env" "$dir/pg.db"
	# The data go with the server (a test cluster), unless SERVICES_KEEP_DATA=1.
	[ "${SERVICES_KEEP_DATA:-0}" = 1 ] || remove_data "$dir"
	;;
redis-up) redis_up "${1:?usage: redis-up DIR [PORT]}" "${2:-}" ;;
redis-info)
	dir=${1:?usage: redis-info DIR}
	echo "127.0.0.1:$(redis_port "$dir")"
	;;
redis-cli)
	dir=${1:?usage: redis-cli DIR [ARGS...]}; shift
	redis-cli -h 127.0.0.1 -p "$(redis_port "$dir")" "$@"
	;;
redis-down)
	dir=${1:?usage: redis-down DIR}
	if [ -f "$dir/redis.port" ]; then
		timeout 5 redis-cli -h 127.0.0.1 -p "$(cat "$dir/redis.port")" shutdown nosave >/dev/null 2>&1 || true
	fi
	stop_group "$dir/redis.pid" TERM
	rm -f "$dir/redis.port"
	;;
*) usage ;;
esac
