// Caches that outlive what they cache, on local disk and on Ceph radosgw: after an overwriting import,
// a delete, a forget or a regenerate, every reader sees the new state at once — a reader in this
// process that warmed its caches first, a new storage object on the same folder or bucket, and a
// long-lived reader in another process with caches of its own. Rollback never resurrects old data.
// Retention too: what Prune Expired or Keep Last N Versions deleted is never served from a cache.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';

import {
	ConversationMemory,
	deleteConversationMemory,
	exportConversation,
	importConversation,
	LocalDiskStorage,
	DAY_MS,
	MemoryBase,
	pruneExpired,
	S3Storage,
	UnknownVersionError,
	VersionedData,
} from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { TestEmbedder } from '../support/embeddings';
import { RGW_CREDENTIALS, rgwStorage } from '../support/rgw';
import type { WorkerBackend } from '../support/rgw';
import { tempDir } from '../support/storages';

const READER = path.resolve(__dirname, '../support/cache-reader.ts');
const bytes = { encoding: 'utf8-bytes', count: (t: string) => Buffer.byteLength(t) };

interface Backend {
	storage: MemoryStorage;
	/** Another storage object on the same folder or bucket (a second node, a second workflow). */
	twin: () => MemoryStorage;
	worker: WorkerBackend;
}

const backends: { name: string; make: () => Promise<Backend> }[] = [
	{
		name: 'local disk',
		make: async () => {
			const root = tempDir('cache-inval');
			return {
				storage: new LocalDiskStorage({ root }),
				twin: () => new LocalDiskStorage({ root }),
				worker: { backend: 'disk', root },
			};
		},
	},
	{
		name: 'radosgw',
		make: async () => {
			const s3 = await rgwStorage();
			return {
				storage: s3,
				twin: () =>
					new S3Storage({
						bucket: s3.bucket,
						endpoint: s3.endpoint,
						forcePathStyle: true,
						credentials: RGW_CREDENTIALS,
					}),
				worker: { backend: 's3', endpoint: s3.endpoint, bucket: s3.bucket },
			};
		},
	},
];

/** A reader in another process: one JSON command in, one JSON answer out. */
class Reader {
	private readonly child: ChildProcessWithoutNullStreams;
	private readonly answers: Array<(line: string) => void> = [];

	constructor(worker: WorkerBackend) {
		this.child = spawn(process.execPath, ['--import', 'tsx', READER, JSON.stringify(worker)]);
		createInterface({ input: this.child.stdout }).on('line', (line) =>
			this.answers.shift()?.(line),
		);
	}

	async ask(command: Record<string, unknown>): Promise<{ ok?: unknown; error?: string }> {
		const answer = new Promise<string>((resolve) => this.answers.push(resolve));
		this.child.stdin.write(`${JSON.stringify(command)}\n`);
		return JSON.parse(await answer) as { ok?: unknown; error?: string };
	}

	stop(): void {
		this.child.kill();
	}
}

const readers: Reader[] = [];
after(() => readers.forEach((r) => r.stop()));

async function saveAll(vd: VersionedData, datas: unknown[]) {
	for (const [i, data] of datas.entries()) await vd.saveVersion({ data, summary: `save ${i + 1}` });
}

/** What every reader says of conversation "c": current data, versions 1–3, history, exported data. */
async function views(b: Backend, reader: Reader, warm: VersionedData) {
	const fresh = new VersionedData({ storage: b.twin(), appId: 'wf', conversationId: 'c' });
	const local = async (vd: VersionedData) => ({
		current: (await vd.getCurrent())?.data ?? null,
		versions: await Promise.all(
			[1, 2, 3].map((n) =>
				vd.getVersion(n).then(
					(r) => r.data,
					(e: Error) => e.name,
				),
			),
		),
		history: (await vd.history()).entries.map((e) => `${e.version}:${e.summary}`),
		exported: (await vd.exportConversation()).versionedData.versions.map((v) => v.data),
	});
	const remote = async () => ({
		current: (await reader.ask({ op: 'current', conversationId: 'c' })).ok,
		versions: await Promise.all(
			[1, 2, 3].map(async (n) => {
				const a = await reader.ask({ op: 'version', conversationId: 'c', n });
				return a.error ?? a.ok;
			}),
		),
		history: (await reader.ask({ op: 'history', conversationId: 'c' })).ok,
		exported: (await reader.ask({ op: 'export', conversationId: 'c' })).ok,
	});
	return { warm: await local(warm), fresh: await local(fresh), other: await remote() };
}

for (const backend of backends)
	describe(`caches on ${backend.name}: delete and overwrite are seen at once`, () => {
		it('cache defect 1: an overwriting import replaces versions whose numbers overlap, for every reader', async () => {
			const b = await backend.make();
			const reader = new Reader(b.worker);
			readers.push(reader);
			const vd = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'c' });
			await saveAll(vd, [{ old: 1 }, { old: 2 }, { old: 3 }]);
			const other = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'd' });
			await saveAll(other, [{ new: 1 }, { new: 2 }]);
			const before = await views(b, reader, vd); // every cache is warm now
			assert.deepEqual(before.other.current, { old: 3 });
			const value = await exportConversation(b.storage, 'wf', 'd');
			await vd.importConversation(value, { overwrite: true });
			const expected = {
				current: { new: 2 },
				versions: [{ new: 1 }, { new: 2 }, 'UnknownVersionError'],
				history: ['2:save 2', '1:save 1'],
				exported: [{ new: 1 }, { new: 2 }],
			};
			const seen = await views(b, reader, vd);
			assert.deepEqual(seen.warm, expected, 'this process, warm caches');
			assert.deepEqual(seen.fresh, expected, 'a new storage object on the same place');
			assert.deepEqual(seen.other, expected, 'another process');
			// Rollback reads what is stored now: it never writes the replaced data back.
			assert.deepEqual((await vd.rollback(1)).data, { new: 1 });
			assert.deepEqual((await reader.ask({ op: 'rollback', conversationId: 'c', n: 2 })).ok, {
				new: 2,
			});
			const all = (await vd.exportConversation()).versionedData.versions.map((v) => v.data);
			assert.deepEqual(all, [{ new: 1 }, { new: 2 }, { new: 1 }, { new: 2 }]);
		});

		it('cache defect 1, by the free function: importConversation(value, { overwrite }) as well', async () => {
			const b = await backend.make();
			const vd = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'c' });
			await saveAll(vd, [{ a: 1 }, { a: 2 }]);
			await vd.getVersion(1);
			await vd.getCurrent();
			const donor = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'x' });
			await saveAll(donor, [{ b: 1 }, { b: 2 }]);
			const value = await exportConversation(b.storage, 'wf', 'x');
			await importConversation(b.storage, 'wf', value, { conversationId: 'c', overwrite: true });
			assert.deepEqual((await vd.getVersion(1)).data, { b: 1 });
			assert.deepEqual((await vd.getCurrent())?.data, { b: 2 });
		});

		it('cache defect 2: after a delete, no reader finds a version, and rollback refuses', async () => {
			const b = await backend.make();
			const reader = new Reader(b.worker);
			readers.push(reader);
			const vd = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'c' });
			await saveAll(vd, [{ secret: 1 }, { secret: 2 }]);
			await views(b, reader, vd);
			await deleteConversationMemory(b.storage, 'wf', 'c');
			assert.equal(await vd.getCurrent(), null);
			await assert.rejects(vd.getVersion(1), UnknownVersionError);
			await assert.rejects(vd.getVersion(2), UnknownVersionError);
			const fresh = new VersionedData({ storage: b.twin(), appId: 'wf', conversationId: 'c' });
			await assert.rejects(fresh.getVersion(1), UnknownVersionError);
			assert.equal(
				(await reader.ask({ op: 'version', conversationId: 'c', n: 1 })).error,
				'UnknownVersionError',
			);
			assert.equal((await reader.ask({ op: 'current', conversationId: 'c' })).ok, null);
			await assert.rejects(vd.rollback(1), UnknownVersionError);
			assert.equal(
				(await reader.ask({ op: 'rollback', conversationId: 'c', n: 1 })).error,
				'UnknownVersionError',
			);
			assert.deepEqual(await b.storage.list('versioned_data/'), [], 'nothing written back');
			// Saved again, numbers are reused: every reader sees the new data under them.
			await saveAll(vd, [{ fresh: 1 }]);
			assert.deepEqual((await vd.getVersion(1)).data, { fresh: 1 });
			assert.deepEqual((await reader.ask({ op: 'version', conversationId: 'c', n: 1 })).ok, {
				fresh: 1,
			});
		});

		it('chat memory: a deleted conversation started again shows only the new turns, everywhere', async () => {
			const b = await backend.make();
			const reader = new Reader(b.worker);
			readers.push(reader);
			// Small log limits so the old conversation has sealed segments too.
			const memory = () =>
				new ConversationMemory('wf', 'c', {
					storage: b.storage,
					tokenCounter: bytes,
					log: { tailMessages: 4, keepMessages: 2, minMessages: 1 },
				});
			const m = memory();
			for (let i = 0; i < 6; i++) {
				await m.addMessages({
					userContent: `old question ${i}`,
					assistantContent: `old answer ${i}`,
				});
				await m.flush();
			}
			assert.equal(
				((await reader.ask({ op: 'history-messages', conversationId: 'c' })).ok as string[]).length,
				12,
			);
			await deleteConversationMemory(b.storage, 'wf', 'c');
			const again = memory();
			await again.addMessages({ userContent: 'new question', assistantContent: 'new answer' });
			await again.flush();
			const expected = ['new question', 'new answer'];
			assert.deepEqual(
				(await m.getHistoryPromptMessages({})).messages.map((x) => x.content),
				expected,
			);
			assert.deepEqual(
				(await reader.ask({ op: 'history-messages', conversationId: 'c' })).ok,
				expected,
			);
		});

		it('retention: what Prune Expired and Keep Last N Versions delete is gone for every reader, warm caches included', async () => {
			const b = await backend.make();
			const reader = new Reader(b.worker);
			readers.push(reader);
			// Written now with a one-day rule; the sweep runs two days later (its clock).
			const memory = new ConversationMemory('wf', 'e', {
				storage: b.storage,
				tokenCounter: bytes,
				expireAfterDays: 1,
			});
			await memory.addMessages({ userContent: 'expiring question', assistantContent: 'answer' });
			await memory.flush();
			const vd = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'e' });
			for (const i of [1, 2])
				await vd.saveVersion({ data: { i }, summary: `s${i}`, expireAfterDays: 1 });
			const embedder = new TestEmbedder();
			const base = new MemoryBase({ storage: b.storage, baseId: 'kb', embedder, threshold: 1 });
			await base.capture({
				sessionId: 'e',
				runId: 'r1',
				texts: ['expiring paint'],
				expireAfterDays: 1,
			});
			await base.capture({ sessionId: 'f', runId: 'r2', texts: ['lasting paint'] });
			// Every cache warm, here and in the other process.
			assert.equal((await memory.getHistoryPromptMessages({})).messages.length, 2);
			assert.deepEqual((await vd.getVersion(1)).data, { i: 1 });
			assert.equal(
				((await reader.ask({ op: 'history-messages', conversationId: 'e' })).ok as string[]).length,
				2,
			);
			assert.deepEqual((await reader.ask({ op: 'version', conversationId: 'e', n: 1 })).ok, {
				i: 1,
			});
			const search = async () =>
				((await reader.ask({ op: 'search', baseId: 'kb', query: 'paint' })).ok as string[]).sort();
			assert.deepEqual(await search(), ['expiring paint', 'lasting paint']);
			const r = await pruneExpired(b.storage, { now: new Date(Date.now() + 2 * DAY_MS) });
			assert.deepEqual(
				[r.chatMemory.ids, r.versionedData.ids, r.captures.ids],
				[['wf/e'], ['wf/e'], ['kb/e']],
			);
			assert.deepEqual((await memory.getHistoryPromptMessages({})).messages, []);
			assert.equal(await vd.getCurrent(), null);
			await assert.rejects(vd.getVersion(1), UnknownVersionError);
			assert.deepEqual((await reader.ask({ op: 'history-messages', conversationId: 'e' })).ok, []);
			assert.equal((await reader.ask({ op: 'current', conversationId: 'e' })).ok, null);
			assert.equal(
				(await reader.ask({ op: 'version', conversationId: 'e', n: 1 })).error,
				'UnknownVersionError',
			);
			assert.deepEqual(await search(), ['lasting paint']);
			// Keep Last N Versions: a version read (and cached) everywhere, then cut.
			const kept = new VersionedData({ storage: b.storage, appId: 'wf', conversationId: 'k' });
			await kept.saveVersion({ data: 'first', summary: 's1' });
			assert.equal((await reader.ask({ op: 'version', conversationId: 'k', n: 1 })).ok, 'first');
			await kept.saveVersion({ data: 'second', summary: 's2', keepLastVersions: 1 });
			await assert.rejects(kept.getVersion(1), UnknownVersionError);
			assert.equal(
				(await reader.ask({ op: 'version', conversationId: 'k', n: 1 })).error,
				'UnknownVersionError',
			);
			assert.deepEqual((await reader.ask({ op: 'history', conversationId: 'k' })).ok, ['2:s2']);
		});

		it('Memory Base: forget, delete and regenerate are seen by searches in this and another process', async () => {
			const b = await backend.make();
			const reader = new Reader(b.worker);
			readers.push(reader);
			const embedder = new TestEmbedder();
			const base = new MemoryBase({ storage: b.storage, baseId: 'kb', embedder, threshold: 1 });
			await base.capture({ sessionId: 'alice', runId: 'r1', texts: ['alice likes teal paint'] });
			await base.capture({ sessionId: 'bob', runId: 'r2', texts: ['bob likes red paint'] });
			const search = async (sessionId?: string) =>
				(
					await base.search('likes paint', {
						k: 10,
						...(sessionId ? { sessionId } : { allUsers: true }),
					})
				)
					.map((h) => h.text)
					.sort();
			const remote = async (sessionId?: string) =>
				(
					(await reader.ask({ op: 'search', baseId: 'kb', query: 'likes paint', sessionId }))
						.ok as string[]
				).sort();
			assert.deepEqual(await remote(), ['alice likes teal paint', 'bob likes red paint']);
			await base.forget('alice');
			await base.capture({
				sessionId: 'alice',
				runId: 'r3',
				texts: ['alice now likes green paint'],
			});
			const afterForget = ['alice now likes green paint', 'bob likes red paint'];
			assert.deepEqual(await search(), afterForget);
			assert.deepEqual(await remote(), afterForget);
			await base.delete();
			const again = new MemoryBase({ storage: b.storage, baseId: 'kb', embedder, threshold: 1 });
			await again.capture({ sessionId: 'carol', runId: 'r4', texts: ['carol likes blue paint'] });
			assert.deepEqual(await search(), ['carol likes blue paint']);
			assert.deepEqual(await remote(), ['carol likes blue paint']);
			await again.capture({ sessionId: 'carol', runId: 'r5', texts: ['carol also paints fences'] });
			await again.regenerate();
			const regenerated = ['carol also paints fences', 'carol likes blue paint'];
			assert.deepEqual(
				(await again.search('paint', { k: 10, allUsers: true })).map((h) => h.text).sort(),
				regenerated,
			);
			assert.deepEqual(
				((await reader.ask({ op: 'search', baseId: 'kb', query: 'paint' })).ok as string[]).sort(),
				regenerated,
			);
		});
	});
