/**
 * A base's folder of conversations on local disk (not a test): prints a markdown table. The folder
 * holds one folder per conversation, 100,000 at 100,000 users: what a page of them (Status, List
 * Captured Messages) and a walk of every one (a whole-base lock, Sync Now, Delete) cost and hold.
 * A synthetic folder of SESSION_FOLDERS conversations (100000), each with its capture log only, made
 * once under SESSION_FOLDERS_ROOT (a temp folder; kept when given, so that runs of two trees compare on
 * one folder). Each row runs SESSION_FOLDERS_ROUNDS times (5), timed alone, then again for the most it
 * held beyond the caches (heldDuring): p50 and most.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { clearAllCaches, LocalDiskStorage, MemoryBase } from '../src/internal';
import { HashEmbedder, heldDuring, ms, n, size } from './scale';
import { loadLine, machineLine, median } from './stats';

if (!(globalThis as { gc?: unknown }).gc) {
	setFlagsFromString('--expose-gc');
	(globalThis as { gc?: unknown }).gc = runInNewContext('gc');
}

const COUNT = Number(process.env.SESSION_FOLDERS ?? 100_000);
const ROUNDS = Number(process.env.SESSION_FOLDERS_ROUNDS ?? 5);
const BASE = 'folders';

function made(root: string): void {
	const dir = path.join(root, 'memory_base', BASE, 'sessions');
	const marker = path.join(root, `.made-${COUNT}`);
	if (existsSync(marker)) return;
	for (let i = 0; i < COUNT; i++) {
		const at = path.join(dir, `chat-user-${i}`);
		mkdirSync(at, { recursive: true });
		writeFileSync(path.join(at, 'log.json'), '{}');
	}
	writeFileSync(marker, '');
}

async function main(): Promise<void> {
	const root =
		process.env.SESSION_FOLDERS_ROOT ?? mkdtempSync(path.join(tmpdir(), 'session-folders-'));
	made(root);
	const storage = new LocalDiskStorage({ root });
	const base = new MemoryBase({ storage, baseId: BASE, embedder: new HashEmbedder() });
	const prefix = `memory_base/${BASE}/sessions/`;
	const rows: Array<[string, () => Promise<string>]> = [
		[
			'a page of 100 conversations, halfway (Status)',
			async () =>
				`${(await storage.listFolders(prefix, { after: `chat-user-${COUNT >> 1}`, limit: 101 })).length} folders`,
		],
		[
			'every conversation, page by page (a whole-base walk)',
			async () => {
				let count = 0;
				for await (const page of base.sessionPages()) count += page.length;
				return `${n(count)} conversations`;
			},
		],
	];
	console.log(`\n${machineLine()}; ${loadLine()}; ${n(COUNT)} conversation folders, local disk\n`);
	console.log('| listing | p50 | most held beyond the caches | found |');
	console.log('|---|---:|---:|---|');
	for (const [name, run] of rows) {
		const times: number[] = [];
		let held = 0;
		let found = '';
		for (let r = 0; r < ROUNDS; r++) {
			// Timed alone, then run again for what it holds (the samples collect garbage as it runs).
			clearAllCaches();
			const t = performance.now();
			found = await run();
			times.push(performance.now() - t);
			clearAllCaches();
			held = Math.max(held, (await heldDuring(run)).held);
		}
		console.log(`| ${name} | ${ms(median(times))} | ${size(held)} | ${found} |`);
	}
}

void main();
