#!/usr/bin/env bash
# `npm run bench`: the engine benchmark (local disk and radosgw) and the chat-turn latency through a
# real n8n. Prints markdown tables; the README quotes them with date and machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
RGW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-rgw.XXXXXX")
RGW_PORT=$(free_port)
trap 'bash scripts/rgw.sh down "$RGW_DIR"; rm -rf "$RGW_DIR"' EXIT
RGW_MON_PORT=$(free_port) bash scripts/rgw.sh up "$RGW_DIR" "$RGW_PORT" >/dev/null
export RGW_ENDPOINT=http://127.0.0.1:$RGW_PORT
# The AWS SDK warns once per process that its 2027 releases will need Node 22; not relevant to figures.
export NODE_NO_WARNINGS=1
node --import tsx bench/engine.ts
node --import tsx bench/n8n-latency.ts
