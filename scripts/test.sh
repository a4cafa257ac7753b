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
# Per version, one shared n8n (test/support/shared-n8n.ts, on port +25) serves the e2e and editor test
# files (E2E_SHARED_N8N): each joins it with its own workflows, credentials and memory folder instead of
# booting an n8n of its own; files that restart n8n, set up users or test the harness start their own.
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

# The tests' temporary folders (n8n user folders, storage roots) go under one folder per run, deleted
# when the run ends, so runs do not fill /tmp.
if [ "$suite" = unit ]; then
	TMPDIR=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-unit.XXXXXX")
	chmod 1777 "$TMPDIR"
	export TMPDIR
	trap 'rm -rf "$TMPDIR"' EXIT
	run "unit" test/unit/**/*.test.ts
	exit 0
fi
if [ "$suite" = storage ]; then bash scripts/setup.sh apt; else bash scripts/setup.sh; fi

mkdir -p .artifacts
WORK=$(mktemp -d "${TMPDIR:-/tmp}/llm-memory-test.XXXXXX") # radosgw, the tarball and its installs
RGW_DIR=$WORK/rgw
mkdir -p "$RGW_DIR" "$WORK/tmp"
# Like /tmp: services running as their own users (PostgreSQL) make and reach folders in it.
chmod 711 "$WORK" && chmod 1777 "$WORK/tmp"
export TMPDIR=$WORK/tmp
stop_shared_n8n() { # n8n_suites stops each shared n8n; this is for a run that is interrupted
	local h
	for h in "$WORK"/shared-n8n-*/; do
		if [ -f "$h/shared-n8n.json" ]; then node --import tsx test/support/shared-n8n.ts down "$h" || true; fi
	done
}
trap 'stop_shared_n8n >/dev/null 2>&1 || true; bash scripts/rgw.sh down "$RGW_DIR"; cp -r "$RGW_DIR/log" .artifacts/rgw-log 2>/dev/null || true; rm -rf "$WORK"' EXIT
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

# The shared n8n of one n8n version (test/support/shared-n8n.ts): one n8n that the e2e and editor test
# files share, each file with its own workflows, credentials and memory folder. `up` prints a line; on
# failure the files start n8n of their own (and the run fails).
shared_n8n() {
	local cmd=$1 v=$2 log=$3 dir=$WORK/shared-n8n-$2 start=$SECONDS
	if [ "$cmd" = up ]; then
		unset E2E_SHARED_N8N
		if node --import tsx test/support/shared-n8n.ts up "$dir" >>"$log" 2>&1; then
			export E2E_SHARED_N8N=$dir
			echo "== n8n $v shared by the e2e and editor suites: up in $((SECONDS - start)) s"
		else
			echo "== n8n $v shared by the e2e and editor suites: FAILED to start after $((SECONDS - start)) s (each test file starts its own; output follows when every version is done)"
			return 1
		fi
	else
		[ -d "$dir" ] || return 0
		node --import tsx test/support/shared-n8n.ts down "$dir" >>"$log" 2>&1 || true
		mkdir -p ".artifacts/shared-n8n-$v" && cp "$dir/n8n/n8n.log" ".artifacts/shared-n8n-$v/n8n.log" 2>/dev/null || true
		unset E2E_SHARED_N8N
	fi
}

# One n8n version's suites in order, on ports from $2 up, their output into $3; a line per suite here.
# The e2e and editor suites share the version's shared n8n (port +25); queue mode boots its own cluster.
n8n_suites() {
	local v=$1 port=$2 log=$3 rc=0 entry label dir start
	export N8N_VERSION=$v E2E_N8N_PORT=$port E2E_FAKE_LLM_PORT=$((port + 3)) QUEUE_N8N_PORT=$((port + 4))
	export UI_N8N_PORT=$((port + 30)) UI_MANAGER_N8N_PORT=$((port + 33)) UI_PANELS_N8N_PORT=$((port + 36))
	export E2E_SHARED_N8N_PORT=$((port + 25))
	shared_n8n up "$v" "$log" || rc=1
	for entry in "end to end (real n8n $v)|test/e2e" "editor (n8n $v, headless Chromium)|test/ui" \
		"queue mode (n8n $v: main + 2 workers, PostgreSQL, Redis, radosgw)|test/queue"; do
		label=${entry%|*} dir=${entry#*|}
		[ "$dir" = test/queue ] && shared_n8n down "$v" "$log"
		start=$SECONDS
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
