#!/usr/bin/env bash
# `npm test`: installs what is missing, builds, lints, type-checks, then runs every suite:
#   unit, storage contract (local disk + Ceph radosgw), concurrency, crash, fault injection (test/faults),
#   in-process n8n workflow, then end to end on a real n8n, the editor in headless Chromium and queue
#   mode (main + 2 workers, PostgreSQL, Redis), each once per n8n version of the matrix
#   (`scripts/n8n.sh versions`: 2.8.4 on Node 20 and 2.40.7 on Node 24; N8N_VERSIONS overrides).
# One radosgw serves all suites. Screenshots and logs land in .artifacts/.
#   scripts/test.sh           everything (npm test, and CI)
#   scripts/test.sh unit      the unit suite only: no services, under a minute (npm run test:unit)
#   scripts/test.sh storage   storage, concurrency, crash and fault injection on disk and radosgw (npm run test:storage)
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-all}
shopt -s globstar
run() { echo "== $1"; shift; node --import tsx --test --test-reporter=spec "$@"; }

if [ "$suite" = unit ]; then run "unit" test/unit/**/*.test.ts; exit 0; fi
if [ "$suite" = storage ]; then bash scripts/setup.sh apt; else bash scripts/setup.sh; fi
npm run build
npm run lint
npm run format:check
npx tsc -p tsconfig.test.json

mkdir -p .artifacts
RGW_DIR=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-rgw.XXXXXX")
trap 'bash scripts/rgw.sh down "$RGW_DIR"; cp -r "$RGW_DIR/log" .artifacts/rgw-log 2>/dev/null || true; rm -rf "$RGW_DIR"' EXIT
RGW_ENDPOINT=$(bash scripts/rgw.sh up "$RGW_DIR")
export RGW_ENDPOINT

[ "$suite" = storage ] || run "unit" test/unit/**/*.test.ts
run "storage: contract, locks, S3 probe, concurrency, crash, sealing" test/storage/*.test.ts
run "fault injection: kill loop, restart lock, radosgw outage, disk full, concurrency, hostile input" test/faults/*.test.ts
[ "$suite" = storage ] && exit 0
run "n8n workflow (in-process WorkflowExecute)" test/workflow/*.test.ts
versions=${N8N_VERSIONS:-$(bash scripts/n8n.sh versions)}
for v in $versions; do N8N_VERSION=$v run "end to end (real n8n $v)" test/e2e/*.test.ts; done
for v in $versions; do N8N_VERSION=$v run "editor (n8n $v, headless Chromium)" test/ui/*.test.ts; done
for v in $versions; do
	N8N_VERSION=$v run "queue mode (n8n $v: main + 2 workers, PostgreSQL, Redis, radosgw)" test/queue/*.test.ts
done
