#!/usr/bin/env bash
# The product: a real n8n (the newest supported, 2.40.7 on Node 24; N8N_VERSION=2.8.4 for the older one)
# with this package installed, local-disk memory, and the example chat workflow
# (examples/chat-with-memory.json) imported and published. Prints the ports and the chat URL, then runs
# until Ctrl-C (or SIGINT / SIGTERM to npm or to this script), which stops everything it started.
#   Usage: npm ci && npm start
#
# Model (any OpenAI-compatible endpoint):
#   LLM_BASE_URL  e.g. https://api.openai.com/v1     LLM_API_KEY   the key     LLM_MODEL  default gpt-4o-mini
# Without LLM_BASE_URL the offline demo model server starts instead (it answers by echoing your message
# and how many history messages it received, which makes the memory visible).
# Ports (all on 127.0.0.1): N8N_PORT (5678), N8N_RUNNERS_BROKER_PORT (n8n's task broker) and
#   DEMO_MODEL_PORT (the demo model). The last two are chosen free when not given (from N8N_PORT + 1 and
#   from 5801 up); every port given is checked before anything starts, and a clash names the port, the
#   variable and the process holding it.
# Other knobs: LLM_MEMORY_HOME (n8n user folder, default ~/.local/share/n8n-nodes-llm-memory),
#   N8N_VERSION (see scripts/n8n.sh).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
# shellcheck source=scripts/start-helpers.sh
. scripts/start-helpers.sh
N8N=scripts/n8n.sh
HOME_DIR=${LLM_MEMORY_HOME:-$HOME/.local/share/n8n-nodes-llm-memory}
WORKFLOW=examples/chat-with-memory.json

[ -d node_modules ] || { echo "Run 'npm ci' first (see README)." >&2; exit 1; }

PORT=${N8N_PORT:-5678}
want_port N8N_PORT "$PORT" "n8n (editor and webhooks)"
[ -z "${N8N_RUNNERS_BROKER_PORT:-}" ] || want_port N8N_RUNNERS_BROKER_PORT "$N8N_RUNNERS_BROKER_PORT" "n8n's task broker"
DEMO_PORT=
if [ -z "${LLM_BASE_URL:-}" ] && [ -n "${DEMO_MODEL_PORT:-}" ]; then
	want_port DEMO_MODEL_PORT "$DEMO_MODEL_PORT" "the demo model server"
	DEMO_PORT=$DEMO_MODEL_PORT
fi
BROKER_PORT=${N8N_RUNNERS_BROKER_PORT:-}
[ -n "$BROKER_PORT" ] || pick_port BROKER_PORT $((PORT + 1)) "n8n's task broker"
[ -n "${LLM_BASE_URL:-}" ] || [ -n "$DEMO_PORT" ] || pick_port DEMO_PORT 5801 "the demo model server"
echo "Ports: n8n $PORT, n8n task broker $BROKER_PORT${DEMO_PORT:+, demo model $DEMO_PORT}"

WORKFLOW_ID=$(node -p "require('./$WORKFLOW').id")
WEBHOOK_ID=$(node -p "require('./$WORKFLOW').nodes.find(n => n.webhookId).webhookId")
mkdir -p "$HOME_DIR"
SETUP_LOG=$HOME_DIR/setup.log
: >"$SETUP_LOG"

# Everything started here is stopped on exit, however it comes: the setup step under way (with what it
# started), n8n with its task runner, and the demo model.
step_pid= n8n_started= demo_pid=
cleanup() {
	trap '' INT TERM # a second Ctrl-C must not cut the cleanup short
	[ -z "$step_pid" ] || stop_tree "$step_pid"
	[ -z "$n8n_started" ] || bash $N8N stop "$HOME_DIR" || true
	[ -z "$demo_pid" ] || stop_tree "$demo_pid"
}
trap cleanup EXIT
trap 'echo "Stopping …" >&2; exit 0' INT TERM

# Runs a setup step in the background and waits for it: bash runs a trap only after a foreground command
# ends, but interrupts `wait` at once, so a signal stops the setup without delay. The step's chatter goes
# to setup.log (its end is shown if the step fails), its output to stdout.
quiet() {
	local rc=0
	"$@" 2>>"$SETUP_LOG" &
	step_pid=$!
	wait "$step_pid" || rc=$?
	step_pid=
	[ "$rc" = 0 ] || { tail -n 40 "$SETUP_LOG" >&2; echo "setup failed; full log: $SETUP_LOG" >&2; exit 1; }
}

N8N_VERSION=$(bash $N8N version)
export N8N_VERSION
echo "Preparing n8n $N8N_VERSION (installed once into ${N8N_INSTALL_DIR:-~/.cache/n8n-nodes-llm-memory}; about 6 minutes the first time) …"
quiet bash $N8N install >/dev/null
echo "Building and installing n8n-nodes-llm-memory into $HOME_DIR/.n8n/nodes …"
rm -rf "$HOME_DIR/package"
quiet bash $N8N pack "$HOME_DIR/package" >"$HOME_DIR/package.path"
quiet bash $N8N prepare "$HOME_DIR" "$(cat "$HOME_DIR/package.path")"

if [ -z "${LLM_BASE_URL:-}" ]; then
	echo "No LLM_BASE_URL given: using the offline demo model server on port $DEMO_PORT (no real model)."
	recheck_ports "$DEMO_PORT"
	node --import tsx demo/model-server.ts --port "$DEMO_PORT" >"$HOME_DIR/demo-model.log" 2>&1 &
	demo_pid=$!
	LLM_BASE_URL=http://127.0.0.1:$DEMO_PORT/v1
	LLM_API_KEY=demo
else
	echo "Model endpoint: $LLM_BASE_URL (model ${LLM_MODEL:-gpt-4o-mini})"
fi

# n8n encrypts credentials with this key; keep one per installation so restarts can read them.
[ -s "$HOME_DIR/encryption-key" ] || node -e "process.stdout.write(require('crypto').randomBytes(24).toString('hex'))" >"$HOME_DIR/encryption-key"
export E2E_N8N_ENCRYPTION_KEY
E2E_N8N_ENCRYPTION_KEY=$(cat "$HOME_DIR/encryption-key")

# The credential and workflow, with the model endpoint filled in. The key never reaches the terminal.
LLM_BASE_URL=$LLM_BASE_URL LLM_API_KEY=${LLM_API_KEY:-} LLM_MODEL=${LLM_MODEL:-gpt-4o-mini} node - "$HOME_DIR" "$WORKFLOW" <<'JS'
const fs = require('fs'), path = require('path');
const [dir, wfFile] = process.argv.slice(2);
const wf = JSON.parse(fs.readFileSync(wfFile, 'utf8'));
for (const n of wf.nodes) if (n.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi') n.parameters.model.value = process.env.LLM_MODEL;
const cred = { id: 'llmMemoryModel01', name: 'Chat model endpoint', type: 'openAiApi',
	data: { apiKey: process.env.LLM_API_KEY || 'none', url: process.env.LLM_BASE_URL, header: false } };
fs.writeFileSync(path.join(dir, 'start-credential.json'), JSON.stringify([cred]), { mode: 0o600 });
fs.writeFileSync(path.join(dir, 'start-workflow.json'), JSON.stringify(wf));
JS
echo "Importing and publishing $WORKFLOW, starting n8n on port $PORT …"
quiet bash $N8N import "$HOME_DIR" "$HOME_DIR/start-credential.json" "$HOME_DIR/start-workflow.json" >/dev/null
rm -f "$HOME_DIR/start-credential.json" "$HOME_DIR/import-credentials.json"
quiet bash $N8N publish "$HOME_DIR" "$WORKFLOW_ID" >/dev/null

[ -z "$demo_pid" ] || alive "$demo_pid" ||
	{ cat "$HOME_DIR/demo-model.log" >&2; echo "the demo model server exited; log: $HOME_DIR/demo-model.log" >&2; exit 1; }
recheck_ports "$PORT" "$BROKER_PORT"
n8n_started=1
quiet env E2E_N8N_LIFETIME=0 E2E_N8N_BROKER_PORT="$BROKER_PORT" bash $N8N start "$HOME_DIR" "$PORT" >/dev/null
CHAT_URL="http://127.0.0.1:$PORT/webhook/$WEBHOOK_ID/chat"
quiet bash $N8N wait-webhook "$CHAT_URL" "$HOME_DIR" >/dev/null
quiet bash $N8N wait-ready "http://127.0.0.1:$PORT/" "$HOME_DIR" >/dev/null # the editor, a moment later

cat <<EOF

  n8n is running with LLM with Memory (memory on local disk: $HOME_DIR/.n8n/llm-memory)

  Chat URL:  $CHAT_URL
             Reload the chat page: the conversation comes back (the Chat Trigger loads it
             from the LLM Memory Store), and the next answer still sees every message.
  Editor:    http://127.0.0.1:$PORT/   (create the owner account on first visit)

  Try it from a terminal:
    curl -s -X POST $CHAT_URL -H 'Content-Type: application/json' \\
      -d '{"action":"sendMessage","sessionId":"demo","chatInput":"Hello, my name is Ada"}'

  Press Ctrl-C to stop. n8n log: $HOME_DIR/n8n.log
EOF
# Waits in `wait` (not a foreground sleep) so that a signal is handled at once.
while alive "$(cat "$HOME_DIR/n8n.pid" 2>/dev/null || echo 0)"; do
	if [ -n "$demo_pid" ] && ! alive "$demo_pid"; then
		echo "The demo model server stopped; see $HOME_DIR/demo-model.log" >&2
		exit 1
	fi
	sleep 1 &
	step_pid=$!
	wait "$step_pid" || true
	step_pid=
done
echo "n8n stopped; see $HOME_DIR/n8n.log" >&2
