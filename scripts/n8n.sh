#!/usr/bin/env bash
# Drive a real n8n 2.8.4 headless: for the end-to-end tests and for `npm start` (no Docker needed).
#
#   n8n.sh install                      install n8n 2.8.4 (or reuse it); prints its dir
#   n8n.sh pack [DEST_DIR]              npm run build + npm pack this repo; prints the .tgz path
#   n8n.sh prepare UF TARBALL           install a community-package tarball into UF/.n8n/nodes
#   n8n.sh import UF FILE...            import credential and workflow JSON files (kind is sniffed)
#   n8n.sh publish UF ID...             activate workflows (must happen before `start`)
#   n8n.sh start UF [PORT]              start n8n in the background; log UF/n8n.log, pid UF/n8n.pid; prints pid
#   n8n.sh wait-webhook URL [UF]        poll URL (GET) until it stops answering 404; with UF, fail fast
#                                       on "Unrecognized node type" in the log or if n8n died
#   n8n.sh stop UF                      SIGTERM n8n (and its task runner), SIGKILL the group after 15 s
#   n8n.sh cli UF ARGS...               any other n8n CLI command (e.g. execute --id=…, list:workflow)
#
# UF is the n8n user folder (n8n keeps its data in UF/.n8n). Diagnostics go to stderr, results to stdout.
# Knobs (env): N8N_INSTALL_DIR, E2E_N8N_PORT (5690), E2E_N8N_BROKER_PORT (PORT+1),
#   E2E_N8N_CLI_BROKER_PORT (PORT+2), E2E_N8N_LIFETIME (1800 s; 0 = no limit), E2E_N8N_BOOT_TIMEOUT (120 s),
#   E2E_N8N_ENCRYPTION_KEY, N8N_LOG_LEVEL.
set -euo pipefail

N8N_VERSION=2.8.4
N8N_INSTALL_DIR=${N8N_INSTALL_DIR:-$HOME/.cache/n8n-nodes-llm-memory/n8n-$N8N_VERSION}
N8N_BIN=$N8N_INSTALL_DIR/node_modules/.bin/n8n
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEFAULT_PORT=${E2E_N8N_PORT:-5690}

die() { echo "n8n.sh: $*" >&2; exit 1; }
# True while PID runs (a zombie counts as gone: PID 1 here may not reap orphans promptly).
alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && st=${st// /} && [ -n "$st" ] && [ "${st#Z}" = "$st" ]; }
need_n8n() { [ -x "$N8N_BIN" ] || die "n8n not installed at $N8N_INSTALL_DIR (run: $0 install)"; }

# The one place where n8n's environment is defined. $1 = user folder, $2 = HTTP port, $3 = task-broker port.
n8n_env() {
	local uf=$1 port=$2 broker=$3
	export N8N_USER_FOLDER=$uf N8N_PORT=$port N8N_LISTEN_ADDRESS=127.0.0.1 N8N_HOST=127.0.0.1 N8N_PROTOCOL=http
	export WEBHOOK_URL=http://127.0.0.1:$port/ N8N_EDITOR_BASE_URL=http://127.0.0.1:$port/
	export N8N_RUNNERS_BROKER_PORT=$broker                     # every n8n process needs its own broker port
	export N8N_ENCRYPTION_KEY=${E2E_N8N_ENCRYPTION_KEY:-e2e-fixed-encryption-key-0123456789}
	export DB_TYPE=sqlite EXECUTIONS_MODE=regular GENERIC_TIMEZONE=UTC TZ=UTC
	export N8N_DIAGNOSTICS_ENABLED=false N8N_PERSONALIZATION_ENABLED=false N8N_VERSION_NOTIFICATIONS_ENABLED=false
	export N8N_TEMPLATES_ENABLED=false N8N_HIRING_BANNER_ENABLED=false N8N_SECURE_COOKIE=false
	export N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS=true N8N_LOG_LEVEL=${N8N_LOG_LEVEL:-info} N8N_LOG_OUTPUT=console
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
	if [ -x "$N8N_BIN" ]; then echo "$N8N_INSTALL_DIR"; exit 0; fi
	echo "installing n8n@$N8N_VERSION into $N8N_INSTALL_DIR (about 5 min cold)" >&2
	mkdir -p "$N8N_INSTALL_DIR"
	# xlsx override: n8n-nodes-base points xlsx at cdn.sheetjs.com, which is unreachable here.
	printf '%s\n' "{\"name\":\"n8n-e2e-harness\",\"private\":true,\"dependencies\":{\"n8n\":\"$N8N_VERSION\"},\"overrides\":{\"xlsx\":\"0.18.5\"}}" \
		> "$N8N_INSTALL_DIR/package.json"
	(cd "$N8N_INSTALL_DIR" && timeout 1800 npm install --no-audit --no-fund >&2)
	[ -x "$N8N_BIN" ] || die "install finished but $N8N_BIN is missing"
	echo "$N8N_INSTALL_DIR"
	;;
pack)
	if [ -n "${1:-}" ]; then dest=$1; mkdir -p "$dest"
	else dest=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-pack.XXXXXX"); trap '[ $? = 0 ] || rm -rf "$dest"' EXIT; fi
	(cd "$REPO" && npm run build >&2)
	tgz=$(cd "$REPO" && npm pack --pack-destination "$dest" 2>/dev/null | tail -n 1)
	[ -f "$dest/$tgz" ] || die "npm pack did not produce a tarball in $dest"
	echo "$dest/$tgz"
	;;
prepare)
	uf=$(realpath -m "${1:?usage: prepare USER_FOLDER TARBALL}"); tgz=$(realpath "${2:?tarball}")
	# Community packages live in UF/.n8n/nodes/node_modules; n8n loads them with no DB row.
	mkdir -p "$uf/.n8n/nodes"
	echo '{"name":"installed-nodes","private":true}' > "$uf/.n8n/nodes/package.json"
	(cd "$uf/.n8n/nodes" && timeout 600 npm install "$tgz" --omit=peer --omit=dev --no-audit --no-fund --prefer-offline >&2)
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
wait-webhook)
	url=${1:?usage: wait-webhook URL [USER_FOLDER]}; uf=${2:+$(realpath -m "$2")}
	# Production webhooks register only after "Start Active Workflows", seconds after /healthz is green.
	# Poll with GET: a POST would run the workflow, and OPTIONS always answers 204. GET on a Chat Trigger
	# (hosted chat) returns the chat page without an execution. A path registered only for other methods
	# answers 404 "not registered for GET requests. Did you mean to make a POST request?", which also means
	# "registered" -- but only if GET is not among the suggested methods: mid-activation n8n briefly says
	# "...Did you mean to make a GET request?" for a GET webhook that is not routable yet.
	# With UF we also wait for "Editor is now accessible", logged after every workflow is activated.
	deadline=$((SECONDS + ${E2E_N8N_BOOT_TIMEOUT:-120}))
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
		body=$(curl -s -w '\n%{http_code}' --max-time 5 "$url" || true); code=${body##*$'\n'}
		ready=0
		case "$code" in
		000) ;;
		404) [[ $body == *"not registered for GET requests"* && ${body#*Did you mean} != *GET* ]] && ready=1 ;;
		*) ready=1 ;;
		esac
		if [ $ready = 1 ] && { [ -z "$uf" ] || grep -q 'Editor is now accessible' "$uf/n8n.log"; }; then
			echo "$code"; exit 0
		fi
		if [ $SECONDS -ge $deadline ]; then
			[ -n "$uf" ] && tail -n 30 "$uf/n8n.log" >&2
			die "timed out waiting for $url (last HTTP status $code)"
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
	sed -n '2,20p' "$0" >&2; exit 2
	;;
esac
