#!/usr/bin/env bash
# `npm test`: installs what is missing, builds, lints, type-checks, then runs every suite:
#   unit, storage contract (local disk + Ceph radosgw), concurrency, crash, in-process n8n engine,
#   end to end on a real n8n 2.8.4, and the editor in headless Chromium.
# One radosgw serves all suites. Screenshots and logs land in .artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
npm run build
npm run lint
npx tsc -p tsconfig.test.json

mkdir -p .artifacts
RGW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-rgw.XXXXXX")
trap 'bash scripts/rgw.sh down "$RGW_DIR"; cp -r "$RGW_DIR/log" .artifacts/rgw-log 2>/dev/null || true; rm -rf "$RGW_DIR"' EXIT
RGW_ENDPOINT=$(bash scripts/rgw.sh up "$RGW_DIR")
export RGW_ENDPOINT

run() { echo "== $1"; shift; node --import tsx --test --test-reporter=spec "$@"; }
run "unit" test/unit/*.test.ts
run "storage: contract, locks, S3 probe, concurrency, crash" test/storage/*.test.ts
run "n8n engine (in-process WorkflowExecute)" test/engine/*.test.ts
run "end to end (real n8n 2.8.4)" test/e2e/*.test.ts
run "editor (headless Chromium)" test/ui/*.test.ts
