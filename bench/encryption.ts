/**
 * Encryption benchmark (not a test): a chat turn (load + thread + truncate, append, flush) on a
 * conversation of 1,000 stored messages, plain against encrypted (AES-256-GCM through EncryptedStorage),
 * on local disk and on radosgw, warm and cold, rounds interleaved so machine noise hits both alike.
 * Prints the medians and their ratio (target ≤ 1.15×). Needs RGW_ENDPOINT or starts its own radosgw.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import {
	clearDocumentCache,
	EncryptedStorage,
	LocalDiskStorage,
	parseEncryptionKey,
	TokenBufferMemory,
} from '../src/internal';
import type { MemoryStorage } from '../src/internal';
import { rgwStorage } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { loadLine, machineLine, median } from './stats';

const SIZE = 1_000;
const ROUNDS = Number(process.env.ENCRYPTION_BENCH_ROUNDS ?? 40);
const f = (x: number) => x.toFixed(2);
const text = (i: number) =>
	`turn ${i}: the customer asked about order ${10_000 + i} and the delivery window for next week`;

async function seed(storage: MemoryStorage, id: string) {
	const m = new TokenBufferMemory('bench', id, { storage, model: 'gpt-4o' });
	for (let i = 0; i < SIZE / 2; i++)
		await m.addMessages({ userContent: text(i), assistantContent: text(i + 1) });
	await m.flush();
}

async function turn(storage: MemoryStorage, id: string, round: number, cold: boolean) {
	if (cold) clearDocumentCache();
	const t0 = performance.now();
	const m = new TokenBufferMemory('bench', id, { storage, model: 'gpt-4o' });
	await m.getHistoryPromptMessages({ maxTokenLimit: 2000 });
	await m.addMessages({ userContent: text(round), assistantContent: text(round + 1) });
	await m.flush();
	return performance.now() - t0;
}

async function main() {
	const key = parseEncryptionKey(randomBytes(32).toString('base64'));
	const backends: Array<[string, MemoryStorage]> = [
		['local disk', new LocalDiskStorage({ root: tempDir('bench-encryption') })],
		['radosgw (S3)', await rgwStorage()],
	];
	const cells: Array<{
		backend: string;
		mode: string;
		storage: MemoryStorage;
		id: string;
		warm: number[];
		cold: number[];
	}> = [];
	for (const [backend, inner] of backends)
		for (const [mode, storage] of [
			['plain', inner],
			['encrypted', new EncryptedStorage(inner, { current: key })],
		] as const) {
			const id = `enc-${mode}`;
			await seed(storage, id);
			cells.push({ backend, mode, storage, id, warm: [], cold: [] });
		}
	for (const c of cells) await turn(c.storage, c.id, -1, false);
	for (let r = 0; r < ROUNDS; r++)
		for (const c of cells) {
			c.cold.push(await turn(c.storage, c.id, r, true));
			c.warm.push(await turn(c.storage, c.id, r, false));
		}
	console.log('## Encryption at rest');
	console.log(machineLine(loadLine()));
	console.log(
		`\n### A chat turn on ${SIZE.toLocaleString('en')} stored messages, plain against encrypted (median of ${ROUNDS} interleaved turns, ms)\n`,
	);
	console.log('| storage | cache | plain | encrypted | **encrypted : plain** |');
	console.log('|---|---|---:|---:|---:|');
	for (const [backend] of backends)
		for (const cache of ['warm', 'cold'] as const) {
			const [plain, enc] = ['plain', 'encrypted'].map((mode) =>
				median(cells.find((c) => c.backend === backend && c.mode === mode)![cache]),
			);
			console.log(`| ${backend} | ${cache} | ${f(plain)} | ${f(enc)} | **${f(enc / plain)}×** |`);
		}
}

main().then(
	() => process.exit(0),
	(error) => {
		console.error(error);
		process.exit(1);
	},
);
