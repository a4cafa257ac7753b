/**
 * Timings of every execution an n8n saved, read from its SQLite database after the fact (so reading costs
 * the measured turns nothing): the execution's start and stop, and each node's run times, sub-nodes
 * included (n8n records a run of a memory or model sub-node per call: a memory's load and its save are two
 * runs). Uses n8n's own Node, `sqlite3` and `flatted` (no extra dependency). Call it after `stop()` or
 * while n8n runs (read-only).
 */
import path from 'node:path';

import { runWithN8nModules } from './n8n-executions';

export interface ExecutionTiming {
	id: number;
	workflowId: string;
	status: string;
	/** stoppedAt − startedAt, ms. */
	ms: number;
	/** Node name → executionTime of each of its runs, ms. */
	nodes: Record<string, number[]>;
	/** Characters of the saved run data (n8n's flatted JSON), what n8n wrote to its database for this execution. */
	dataChars: number;
}

const READ = `
const [db] = process.argv.slice(1);
const sqlite3 = require('sqlite3');
const { parse } = require('flatted');
const conn = new sqlite3.Database(db, sqlite3.OPEN_READONLY);
const time = (t) => (t ? Date.parse(String(t).replace(' ', 'T') + (/[zZ]|[+-]\\d\\d:?\\d\\d$/.test(String(t)) ? '' : 'Z')) : NaN);
const out = [];
conn.each(
	'SELECT e.id, e.workflowId, e.status, e.startedAt, e.stoppedAt, d.data FROM execution_entity e LEFT JOIN execution_data d ON d.executionId = e.id ORDER BY e.id',
	(err, row) => {
		if (err) { console.error(err.message); process.exit(2); }
		const nodes = {};
		try {
			const runData = (row.data ? parse(row.data) : {})?.resultData?.runData ?? {};
			for (const [name, runs] of Object.entries(runData)) nodes[name] = (runs ?? []).map((r) => Number(r?.executionTime ?? 0));
		} catch {}
		out.push({ id: row.id, workflowId: row.workflowId, status: row.status, ms: time(row.stoppedAt) - time(row.startedAt), nodes, dataChars: row.data ? row.data.length : 0 });
	},
	(err) => {
		if (err) { console.error(err.message); process.exit(2); }
		process.stdout.write(JSON.stringify(out));
		conn.close();
	},
);`;

/** Every saved execution of the n8n in `userFolder`, oldest first. */
export async function executionTimings(userFolder: string): Promise<ExecutionTiming[]> {
	const db = path.join(userFolder, '.n8n/database.sqlite');
	const out = await runWithN8nModules(READ, [db], `reading executions from ${db}`);
	return JSON.parse(out) as ExecutionTiming[];
}
