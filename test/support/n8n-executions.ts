/**
 * Read what n8n saved of an execution (run data per node, errors, sub-node input/output panes) straight
 * from the instance's SQLite database, with n8n's own `sqlite3` and `flatted` modules and its own Node
 * binary (no extra dependency, no owner account or API key needed); or parse the run data n8n's REST
 * API answers with, with the same `flatted`.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';

import { ensureN8n, runScript } from './n8n-harness';
import type { N8nInstance } from './n8n-harness';

type Json = Record<string, any>;

const READ = `
const [db, id] = process.argv.slice(1);
const sqlite3 = require('sqlite3');
const { parse } = require('flatted');
const conn = new sqlite3.Database(db, sqlite3.OPEN_READONLY);
conn.get('SELECT data FROM execution_data WHERE executionId = ?', [id], (err, row) => {
	if (err) { console.error(err.message); process.exit(2); }
	process.stdout.write(row ? JSON.stringify(parse(row.data)) : 'null');
	conn.close();
});`;

const UNFLATTEN = `
let s = '';
process.stdin.on('data', (d) => (s += d)).on('end', () => process.stdout.write(JSON.stringify(require('flatted').parse(s))));`;

/**
 * Runs a script with the Node of N8N_VERSION and n8n's own modules on its require path; resolves to
 * its stdout. `input` goes to its stdin.
 */
export async function runWithN8nModules(
	script: string,
	args: string[],
	what: string,
	input?: string,
): Promise<string> {
	const [dir, node] = await Promise.all([ensureN8n(), runScript(['node'])]);
	return await new Promise<string>((resolve, reject) => {
		const child = execFile(
			node,
			['-e', script, ...args],
			{
				env: { ...process.env, NODE_PATH: path.join(dir, 'node_modules') },
				maxBuffer: 512 * 1024 * 1024,
				timeout: 300_000,
			},
			(err, stdout, stderr) =>
				err ? reject(new Error(`${what}: ${stderr || err.message}`)) : resolve(stdout),
		);
		child.stdin?.end(input ?? '');
	});
}

/** The saved run data of an execution (IRunExecutionData), or undefined when it is not saved (yet). */
export async function executionData(
	n8n: N8nInstance,
	executionId: string,
): Promise<Json | undefined> {
	const db = path.join(n8n.userFolder, '.n8n/database.sqlite');
	const out = await runWithN8nModules(READ, [db, executionId], `reading execution ${executionId}`);
	const data = JSON.parse(out) as Json | null;
	return data ?? undefined;
}

/** Run data as n8n's REST API gives it (`data` of GET /rest/executions/:id: flatted JSON), parsed. */
export async function unflatten(text: string): Promise<Json> {
	return JSON.parse(await runWithN8nModules(UNFLATTEN, [], 'parsing run data', text)) as Json;
}

/** The executions of a workflow that n8n's event log reports as finished, oldest first. */
export function finishedExecutions(
	n8n: N8nInstance,
	workflowId: string,
): Array<{ executionId: string; success: boolean; payload: Json }> {
	return n8n
		.events()
		.filter(
			(e) =>
				(e.eventName === 'n8n.workflow.success' || e.eventName === 'n8n.workflow.failed') &&
				e.payload?.workflowId === workflowId,
		)
		.map((e) => ({
			executionId: String(e.payload.executionId),
			success: e.eventName === 'n8n.workflow.success',
			payload: e.payload,
		}));
}

/**
 * What a sub-node logged on its panes: one entry per logged call, with the JSON of its input pane and of
 * its output pane (or the error it showed), in the order n8n recorded them.
 */
export function subNodeLog(
	data: Json,
	nodeName: string,
	connectionType: string,
): Array<{ input?: Json; output?: Json; error?: Json }> {
	const runs: Json[] = data?.resultData?.runData?.[nodeName] ?? [];
	return runs.map((run) => ({
		input: run.inputOverride?.[connectionType]?.[0]?.[0]?.json,
		output: run.data?.[connectionType]?.[0]?.[0]?.json,
		...(run.error ? { error: run.error } : {}),
	}));
}

/** Polls until fn returns a value (n8n writes its event log and execution data just after it answers). */
export async function waitFor<T>(
	fn: () => T | undefined | Promise<T | undefined>,
	timeoutMs = 10_000,
): Promise<T> {
	for (const end = Date.now() + timeoutMs; ;) {
		const value = await fn();
		if (value !== undefined) return value;
		if (Date.now() > end) throw new Error('timed out waiting');
		await new Promise((r) => setTimeout(r, 100));
	}
}

const failedEvents = (n8n: N8nInstance, workflowId: string) =>
	n8n
		.events()
		.filter((e) => e.eventName === 'n8n.workflow.failed' && e.payload?.workflowId === workflowId);

/** How many executions of a workflow n8n's event log has recorded as failed. */
export function failureCount(n8n: N8nInstance, workflowId: string): number {
	return failedEvents(n8n, workflowId).length;
}

/** The payload (errorMessage, lastNodeExecuted, …) of the latest failure after the first `since`. */
export async function failedSince(
	n8n: N8nInstance,
	workflowId: string,
	since: number,
): Promise<Json> {
	for (const end = Date.now() + 10_000; ;) {
		const failed = failedEvents(n8n, workflowId).slice(since);
		if (failed.length) return failed[failed.length - 1].payload;
		if (Date.now() > end) throw new Error('no failed execution logged');
		await new Promise((r) => setTimeout(r, 100));
	}
}
