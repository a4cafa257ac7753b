#!/usr/bin/env bash
# `npm test`: installs what is missing, builds and packs the package once, lints, checks formatting and
# types, then runs every suite:
#   unit, storage contract (local disk + Ceph radosgw), concurrency, crash, fault injection (test/faults),
#   in-process n8n workflow, then end to end on a real n8n, the editor in headless Chromium and queue
#   mode (main + 2 workers, PostgreSQL, Redis), each once per n8n version of the matrix
#   (`scripts/n8n.sh versions`: 2.8.4 on Node 20 and 2.40.7 on Node 24; N8N_VERSIONS overrides).
# The n8n versions run side by side, each its three suites in order on ports of its own (from
# TEST_PORT_BASE, 5900: 40 per version); TEST_SERIAL=1 runs them one after the other. A line per suite
# shows as it ends; the suites' output is printed once every version is done (and kept in .artifacts/).
# Every e2e, editor and queue test file installs the one tarball packed here (E2E_TARBALL): npm installs
# it once per Node version (N8N_NODES_CACHE), and each n8n user folder gets a copy; so do the builds of
# `npm start` in test/e2e/start.test.ts, which pack the same bytes. One radosgw serves all suites.
# Screenshots and logs land in .artifacts/.
#   scripts/test.sh           everything (npm test, and CI)
#   scripts/test.sh unit      the unit suite only: no services, about two minutes (npm run test:unit)
#   scripts/test.sh storage   storage, concurrency, crash and fault injection on disk and radosgw (npm run test:storage)
#   scripts/test.sh n8n       end to end, editor and queue mode on every n8n version, nothing else
set -euo pipefail
cd "$(dirname "$0")/.."
suite=${1:-all}
shopt -s globstar
run() { echo "== $1"; shift; node --import tsx --test --test-reporter=spec "$@"; }

if [ "$suite" = unit ]; then run "unit" test/unit/**/*.test.ts; exit 0; fi
if [ "$suite" = storage ]; then bash scripts/setup.sh apt; else bash scripts/setup.sh; fi

mkdir -p .artifacts
WORK=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-test.XXXXXX") # radosgw, the tarball and its installs
RGW_DIR=$WORK/rgw
mkdir -p "$RGW_DIR"
trap 'bash scripts/rgw.sh down "$RGW_DIR"; cp -r "$RGW_DIR/log" .artifacts/rgw-log 2>/dev/null || true; rm -rf "$WORK"' EXIT
if [ "$suite" = storage ]; then
	npm run build
else
	E2E_TARBALL=$(bash scripts/n8n.sh pack "$WORK/pack") # npm run build + npm pack
	N8N_NODES_CACHE=$WORK/installs                        # scripts/n8n.sh prepare: one npm install per Node
	export E2E_TARBALL N8N_NODES_CACHE
fi
if [ "$suite" != n8n ]; then
	npm run lint
	npm run format:check
	npx tsc -p tsconfig.test.json
fi

RGW_ENDPOINT=$(bash scripts/rgw.sh up "$RGW_DIR")
export RGW_ENDPOINT

if [ "$suite" != n8n ]; then
	[ "$suite" = storage ] || run "unit" test/unit/**/*.test.ts
	run "storage: contract, locks, S3 probe, concurrency, crash, sealing" test/storage/*.test.ts
	run "fault injection: kill loop, restart lock, radosgw outage, disk full, concurrency, hostile input" test/faults/*.test.ts
	[ "$suite" = storage ] && exit 0
	run "n8n workflow (in-process WorkflowExecute)" test/workflow/*.test.ts
fi

# One n8n version's suites in order, on ports from $2 up, their output into $3; a line per suite here.
n8n_suites() {
	local v=$1 port=$2 log=$3 rc=0 entry label dir start
	export N8N_VERSION=$v E2E_N8N_PORT=$port E2E_FAKE_LLM_PORT=$((port + 3)) QUEUE_N8N_PORT=$((port + 4))
	export UI_N8N_PORT=$((port + 30)) UI_MANAGER_N8N_PORT=$((port + 33)) UI_PANELS_N8N_PORT=$((port + 36))
	for entry in "end to end (real n8n $v)|test/e2e" "editor (n8n $v, headless Chromium)|test/ui" \
		"queue mode (n8n $v: main + 2 workers, PostgreSQL, Redis, radosgw)|test/queue"; do
		label=${entry%|*} dir=${entry#*|} start=$SECONDS
		if run "$label" "$dir"/*.test.ts >>"$log" 2>&1; then
			echo "== $label: passed in $((SECONDS - start)) s"
		else
			rc=1
			echo "== $label: FAILED after $((SECONDS - start)) s (its output follows when every version is done)"
		fi
	done
	return $rc
}
versions=${N8N_VERSIONS:-$(bash scripts/n8n.sh versions)}
port=${TEST_PORT_BASE:-5900} pids=() rc=0
for v in $versions; do
	log=.artifacts/n8n-$v.log
	: >"$log"
	if [ -n "${TEST_SERIAL:-}" ]; then
		n8n_suites "$v" "$port" "$log" || rc=1
	else
		n8n_suites "$v" "$port" "$log" &
		pids+=($!)
	fi
	port=$((port + 40))
done
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
for v in $versions; do cat ".artifacts/n8n-$v.log"; done
exit $rc
