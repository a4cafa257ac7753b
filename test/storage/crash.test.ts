// A writer killed (SIGKILL) in the middle of a flush leaves the previous document intact and readable,
// and the next writer is not wedged by what it left behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { decodeDocument, LocalDiskStorage, TokenBufferMemory } from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { freezeMidWrite } from '../support/faults';
import { ensureRgw, rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';

const WORKER = path.resolve(__dirname, '../support/append-worker.ts');
const KEY = 'conversation_memory/wf/race.json';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startWriter(config: object): {
	child: ChildProcess;
	flushed: Set<number>;
	flushing: number[];
} {
	const child = spawn(process.execPath, [
		'--import',
		'tsx',
		WORKER,
		JSON.stringify({ turns: 0, tag: 'w', forever: true, bigBytes: 300_000, ...config }),
	]);
	const state = { child, flushed: new Set<number>(), flushing: [] as number[] };
	let buf = '';
	child.stdout!.on('data', (d: Buffer) => {
		buf += d.toString();
		const lines = buf.split('\n');
		buf = lines.pop() as string;
		for (const line of lines) {
			const [word, n] = line.split(' ');
			if (word === 'flushed') state.flushed.add(Number(n));
			if (word === 'flushing') state.flushing.push(Number(n));
		}
	});
	return state;
}

async function killed(child: ChildProcess) {
	child.kill('SIGKILL');
	if (child.exitCode === null && child.signalCode === null)
		await new Promise((r) => child.on('exit', r));
}

/** Every turn reported flushed is stored, in full; the one in flight is either all there or absent. */
async function assertIntact(storage: MemoryStorage, flushed: Set<number>, tag = 'w') {
	const got = await storage.get(KEY);
	assert.ok(got, 'document still exists');
	const doc = decodeDocument(KEY, got.body); // throws if torn
	const mine = doc.messages.filter(
		(m) => m.role === 'assistant' && m.message_id.startsWith(`${tag}-`),
	);
	const ids = new Set(mine.map((m) => Number(m.message_id.split('-')[1])));
	for (const n of flushed)
		assert.ok(ids.has(n), `turn ${n} was flushed before the kill and must survive`);
	for (const m of mine) assert.equal(m.content.length, 300_000, 'no torn message');
	return doc;
}

async function nextWriterSucceeds(storage: MemoryStorage) {
	const t = Date.now();
	const m = new TokenBufferMemory('wf', 'race', { storage, retryBaseMs: 1 });
	const before = (await m.messages()).length;
	await m.addMessages({ userContent: 'after the crash', assistantContent: 'still fine' });
	assert.equal((await m.flush()).written, true);
	assert.equal(
		(await new TokenBufferMemory('wf', 'race', { storage }).messages()).length,
		before + 2,
	);
	return Date.now() - t;
}

describe('crash mid-flush', () => {
	it('local disk: SIGKILL while the temp file is being written', async () => {
		const root = tempDir();
		const storage = new LocalDiskStorage({ root, lockTimeoutMs: 5000 });
		const dir = path.join(root, 'conversation_memory/wf');
		for (let round = 0; round < 3; round++) {
			const w = startWriter({ backend: 'disk', root, tag: `w${round}` });
			for (let i = 0; i < 5000 && w.flushed.size === 0; i++) await sleep(2);
			assert.ok(w.flushed.size > 0, 'writer got going');
			// Freeze the writer the moment a temp file appears; it is mid-flush if the file is still there.
			const caught = await freezeMidWrite(w.child, dir);
			assert.ok(caught, 'caught the writer mid-flush');
			await killed(w.child);
			assert.ok(
				readdirSync(dir).some((f) => f.endsWith('.lock')),
				'the dead writer left its lock behind',
			);
			assert.ok(
				readdirSync(dir).some((f) => f.endsWith('.tmp')),
				'and its half-written temp file',
			);
			await assertIntact(storage, w.flushed, `w${round}`);
			const ms = await nextWriterSucceeds(storage);
			assert.ok(ms < 2000, `next writer not wedged (${ms} ms)`);
		}
	});

	it('radosgw: SIGKILL during a large conditional PUT', async () => {
		const s3 = await rgwStorage();
		for (const delayMs of [0, 5, 15, 30]) {
			const w = startWriter({
				backend: 's3',
				endpoint: s3.endpoint,
				bucket: s3.bucket,
				tag: `d${delayMs}`,
			});
			for (let i = 0; i < 3000 && !(w.flushed.size > 0 && w.flushing.length > w.flushed.size); i++)
				await sleep(1);
			await sleep(delayMs);
			await killed(w.child);
			await assertIntact(s3, w.flushed, `d${delayMs}`);
			await nextWriterSucceeds(s3);
		}
	});
});

after(async () => (await ensureRgw()).stop());
