// Child process for the Memory Base storage tests: captures strides, syncs a session of one base, or
// searches it.
//   memory-base-worker.ts <config-json>
// config: { backend: 'disk'|'s3', root?, endpoint?, bucket?, action: 'capture'|'sync'|'search',
//           sessions, strides?, threshold?, embedDelayMs?, hang?, leaseMs?, tag, startAt?, barrier?,
//           userId?, crashOn?, queries? }
// Prints { captured, syncs, skipped, errors } (capture) or { result } / { error: name, message } (sync)
// or { hits: [[text of each hit] per query] } (search, lexical, in the user's scope or every user's).
// With `hang`, embedding never answers: the process holds the sync's lock until it is killed.
// With `crashOn` (a session), the process kills itself (SIGKILL) right before writing that session's
// capture log; each capture acknowledged before is printed at once as a line `ACK <text>`.
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

import { fakeEmbedding } from '../../demo/model-server';
import { MemoryBase, SyncRunningError } from '../../src/internal';
import type { Embedder, MemoryStorage, PutOptions } from '../../src/internal';
import { waitUntil, workerStorage } from './rgw';
import type { WorkerBackend } from './rgw';

interface Config extends WorkerBackend {
	action: 'capture' | 'sync' | 'search';
	sessions: string[];
	strides?: number;
	threshold?: number;
	embedDelayMs?: number;
	hang?: boolean;
	leaseMs?: number;
	tag: string;
	/** Wall-clock time (ms) to start at. */
	startAt?: number;
	/**
	 * A folder: the worker writes ready-<tag> there once set up, then starts when "go" appears. Every
	 * worker then starts at once however long the others took to load (a fixed startAt is missed
	 * under load, and a late worker finds the work already done).
	 */
	barrier?: string;
	userId?: string;
	crashOn?: string;
	queries?: string[];
}

async function startTogether(): Promise<void> {
	if (!config.barrier) {
		await waitUntil(config.startAt ?? 0);
		return;
	}
	writeFileSync(path.join(config.barrier, `ready-${config.tag}`), '');
	while (!existsSync(path.join(config.barrier, 'go'))) await new Promise((r) => setTimeout(r, 10));
}

const config = JSON.parse(process.argv[2]) as Config;

/** The backend, killing this process right before it writes the capture log of `crashOn`. */
function storageOf(): MemoryStorage {
	const inner = workerStorage(config);
	if (config.crashOn === undefined) return inner;
	const crashKey = `/sessions/${config.crashOn}/log.json`;
	return new Proxy(inner, {
		get(target, prop) {
			if (prop === 'put')
				return (key: string, body: Uint8Array, options?: PutOptions) => {
					if (key.endsWith(crashKey)) process.kill(process.pid, 'SIGKILL');
					return target.put(key, body, options);
				};
			const value: unknown = Reflect.get(target, prop);
			return typeof value === 'function' ? value.bind(target) : value;
		},
	});
}

const embedder: Embedder = {
	async embedDocuments(texts) {
		if (config.hang) {
			process.stdout.write('HOLDING\n');
			await new Promise(() => {});
		}
		if (config.embedDelayMs) await new Promise((r) => setTimeout(r, config.embedDelayMs));
		return texts.map((t) => fakeEmbedding(t, 64));
	},
	async embedQuery(text) {
		return fakeEmbedding(text, 64);
	},
};

(async () => {
	const base = new MemoryBase({
		storage: storageOf(),
		baseId: 'wf',
		embedder,
		threshold: config.threshold ?? 5,
		leaseMs: config.leaseMs ?? 10_000,
		maxAttempts: 100,
	});
	await startTogether();
	if (config.action === 'sync') {
		try {
			const result = await base.sync({ sessionId: config.sessions[0] });
			process.stdout.write(JSON.stringify({ result }));
		} catch (error) {
			const e = error as Error;
			process.stdout.write(JSON.stringify({ error: e.constructor.name, message: e.message }));
		}
		return;
	}
	if (config.action === 'search') {
		const scope = config.userId !== undefined ? { userId: config.userId } : { allUsers: true };
		const hits: string[][] = [];
		for (const q of config.queries ?? [])
			hits.push((await base.search(q, { ...scope, k: 3, mode: 'lexical' })).map((h) => h.text));
		process.stdout.write(JSON.stringify({ hits }));
		return;
	}
	let captured = 0;
	let syncs = 0;
	let skipped = 0;
	const errors: string[] = [];
	for (let j = 0; j < (config.strides ?? 10); j++) {
		const sessionId = config.sessions[j % config.sessions.length];
		const text = `${config.tag} stride ${j} about topic${config.tag}${j}`;
		const r = await base.capture({
			sessionId,
			userId: config.userId,
			runId: `${config.tag}-${j}`,
			texts: [text],
		});
		if (config.crashOn !== undefined) process.stdout.write(`ACK ${text}\n`);
		captured += r.captured;
		if (r.sync) syncs++;
		if (r.syncError instanceof SyncRunningError) skipped++;
		else if (r.syncError) errors.push(r.syncError.message);
	}
	process.stdout.write(JSON.stringify({ captured, syncs, skipped, errors }));
})().catch((e: unknown) => {
	process.stderr.write(`${(e as Error).stack}\n`);
	process.exit(1);
});
