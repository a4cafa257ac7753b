#!/usr/bin/env bash
# The product: a real n8n (the newest supported, 2.40.7 on Node 24; N8N_VERSION=2.8.4 for the older one)
# with this package installed, local-disk memory, and the example chat workflow
# (examples/chat-with-memory.json) imported and published. Prints the chat URL, then runs until Ctrl-C.
#   Usage: npm ci && npm start
#
# Model (any OpenAI-compatible endpoint):
#   LLM_BASE_URL  e.g. https://api.openai.com/v1     LLM_API_KEY   the key     LLM_MODEL  default gpt-4o-mini
# Without LLM_BASE_URL the offline demo model server starts instead (it answers by echoing your message
# and how many history messages it received, which makes the memory visible).
# Other knobs: N8N_PORT (5678), LLM_MEMORY_HOME (n8n user folder, default ~/.local/share/n8n-nodes-llm-memory),
#   N8N_VERSION (see scripts/n8n.sh).
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
N8N=scripts/n8n.sh
PORT=${N8N_PORT:-5678}
HOME_DIR=${LLM_MEMORY_HOME:-$HOME/.local/share/n8n-nodes-llm-memory}
WORKFLOW=examples/chat-with-memory.json
WORKFLOW_ID=$(node -p "require('./$WORKFLOW').id")
WEBHOOK_ID=$(node -p "require('./$WORKFLOW').nodes.find(n => n.webhookId).webhookId")
mkdir -p "$HOME_DIR"
SETUP_LOG=$HOME_DIR/setup.log
: >"$SETUP_LOG"
# Runs a setup step with its chatter in setup.log; shows the log's end if the step fails.
quiet() { "$@" 2>>"$SETUP_LOG" || { tail -n 40 "$SETUP_LOG" >&2; echo "setup failed; full log: $SETUP_LOG" >&2; exit 1; }; }

[ -d node_modules ] || { echo "Run 'npm ci' first (see README)." >&2; exit 1; }
N8N_VERSION=$(bash $N8N version)
export N8N_VERSION
echo "Preparing n8n $N8N_VERSION (installed once into ${N8N_INSTALL_DIR:-~/.cache/n8n-nodes-llm-memory}; about 6 minutes the first time) …"
quiet bash $N8N install >/dev/null
echo "Building and installing n8n-nodes-llm-memory into $HOME_DIR/.n8n/nodes …"
rm -rf "$HOME_DIR/package"
tgz=$(quiet bash $N8N pack "$HOME_DIR/package")
quiet bash $N8N prepare "$HOME_DIR" "$tgz"

demo_pid=
cleanup() {
	bash $N8N stop "$HOME_DIR" || true
	[ -z "$demo_pid" ] || kill "$demo_pid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 0' INT TERM

if [ -z "${LLM_BASE_URL:-}" ]; then
	DEMO_PORT=${DEMO_MODEL_PORT:-5801}
	echo "No LLM_BASE_URL given: using the offline demo model server on port $DEMO_PORT (no real model)."
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

quiet env E2E_N8N_LIFETIME=0 bash $N8N start "$HOME_DIR" "$PORT" >/dev/null
CHAT_URL="http://127.0.0.1:$PORT/webhook/$WEBHOOK_ID/chat"
quiet bash $N8N wait-webhook "$CHAT_URL" "$HOME_DIR" >/dev/null

cat <<EOF

  n8n is running with LLM with Memory (memory on local disk: $HOME_DIR/.n8n/llm-memory)

  Chat URL:  $CHAT_URL
  Editor:    http://127.0.0.1:$PORT/   (create the owner account on first visit)

  Try it from a terminal:
    curl -s -X POST $CHAT_URL -H 'Content-Type: application/json' \\
      -d '{"action":"sendMessage","sessionId":"demo","chatInput":"Hello, my name is Ada"}'

  Press Ctrl-C to stop. n8n log: $HOME_DIR/n8n.log
EOF
while kill -0 "$(cat "$HOME_DIR/n8n.pid" 2>/dev/null || echo 0)" 2>/dev/null; do sleep 1; done
echo "n8n stopped; see $HOME_DIR/n8n.log" >&2
