#!/usr/bin/env bash
# The full-size kill loop of issue 7: four writer processes SIGKILLed at random moments, 200 kills on local
# disk and 200 on radosgw (KILL_LOOP_KILLS overrides), with the checks of test/faults/kill-loop.test.ts
# after every kill. Starts its own radosgw. The test output goes to stderr; stdout gets a markdown table:
#   bash scripts/kill-loop.sh            (about 10 minutes on a 2-vCPU machine)
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/rgw.sh check || { echo "Ceph radosgw is not installed: run scripts/setup.sh (or npm test) first" >&2; exit 1; }
[ -d node_modules ] || npm ci >&2

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kill-loop.XXXXXX")
trap 'bash scripts/rgw.sh down "$WORK/rgw"; rm -rf "$WORK"' EXIT
RGW_ENDPOINT=$(bash scripts/rgw.sh up "$WORK/rgw")
export RGW_ENDPOINT
export KILL_LOOP_KILLS=${KILL_LOOP_KILLS:-200}
export KILL_LOOP_REPORT="$WORK/figures.jsonl"

status=0
node --import tsx --test --test-reporter=spec test/faults/kill-loop.test.ts >&2 || status=$?

node - "$KILL_LOOP_REPORT" <<'JS'
const rows = require('node:fs').readFileSync(process.argv[2], 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(v < 10 ? 1 : 0)} ms` : 'n/a');
console.log(`Kill loop, ${new Date().toISOString().slice(0, 10)}, ${require('node:os').cpus().length} CPUs, Node ${process.version}: 4 writer processes, SIGKILL at random moments.\n`);
console.log('| backend | kills | killed mid-flush | turns acknowledged | turns found | max time the next writer waited | median recovery | result |');
console.log('|---|---:|---:|---:|---:|---:|---:|---|');
for (const r of rows)
	console.log(`| ${r.backend} | ${r.kills} | ${r.midFlush} | ${r.acknowledged} | ${r.found} | ${ms(r.maxMs)} | ${ms(r.medianMs)} | ${r.failure ? `FAILED: ${r.failure.replace(/\|/g, '\\|')}` : 'pass'} |`);
console.log('\n"Turns acknowledged": flushes that resolved (the writers\' and, after the last kill of each round, a fresh');
console.log('writer\'s); after every kill each of them was found exactly once. "Turns found" also counts turns stored');
console.log('just before their writer died, unacknowledged. "Max time the next writer waited" / "median recovery": after');
console.log('each kill, the time until the next turn was stored, by the first surviving writer to store a turn begun');
console.log('after the kill, or by a fresh writer after the last kill of a round (limit 1 s).');
JS
exit $status
