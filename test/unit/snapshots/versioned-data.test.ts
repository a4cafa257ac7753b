// Versioned data on local disk: every operation, write-once versions, constant-cost saves, typed errors
// with nothing written, JSON Schema, housekeeping, and lossless export/import of a whole conversation.
import assert from 'node:assert/strict';
import { readFileSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	appPrefixes,
	BranchExistsError,
	branchKey,
	clearDocumentCache,
	ConflictError,
	ConversationExistsError,
	ConversationMemory,
	conversationMemoryKey,
	CorruptDocumentError,
	DataTooLargeError,
	deleteConversationMemory,
	DocumentStore,
	exportConversation,
	exportDocument,
	importConversation,
	InvalidExportError,
	InvalidIdError,
	InvalidInputError,
	InvalidOptionError,
	InvalidSchemaError,
	listConversationKeys,
	LocalDiskStorage,
	MAX_DATA_BYTES,
	NodeMemory,
	NotJsonError,
	parseKey,
	pruneMemory,
	SchemaViolationError,
	UnknownBranchError,
	UnknownVersionError,
	versionCounterKey,
	VersionConflictError,
	VersionedData,
	versionedDataPrefix,
	versionKey,
} from '../../../src/internal';
import type { MemoryStorage, VersionRecord } from '../../../src/internal';
import { InstrumentedStorage, tempDir, tempDisk } from '../../support/storages';
import { storedObjects, storedUnder, toxicity } from './support';

const DAY = 86_400_000;

function setup(extra: { schema?: unknown; keyPrefix?: string; conversationId?: string } = {}) {
	const root = tempDir();
	const disk = new LocalDiskStorage({ root });
	const storage = new InstrumentedStorage(disk);
	const vd = new VersionedData({
		storage,
		appId: 'wf',
		conversationId: extra.conversationId ?? 'c1',
		...extra,
	});
	return { root, disk, storage, vd };
}

async function saveMany(
	vd: VersionedData,
	n: number,
	branch = 'main',
	from = 0,
): Promise<VersionRecord[]> {
	const out = [];
	for (let i = from; i < from + n; i++)
		out.push(await vd.saveVersion({ data: toxicity(i), summary: `edit ${i}`, branch }));
	return out;
}

/** Runs `fn`, which must throw `type`, and checks that storage holds exactly what it held before. */
async function refusedUnchanged<E>(
	storage: MemoryStorage,
	fn: () => Promise<unknown>,
	type: new (...args: never[]) => E,
	check?: (error: E) => void,
): Promise<void> {
	const before = await storedObjects(storage);
	await assert.rejects(fn, (error: unknown) => {
		assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
		check?.(error as E);
		return true;
	});
	assert.deepEqual(await storedObjects(storage), before, 'nothing was written');
}

describe('VersionedData: saving and reading', () => {
	it('saves versions 1, 2, 3 with parents, and reads them back', async () => {
		const { vd } = setup();
		assert.equal(await vd.getCurrent(), null, 'an empty conversation has no current version');
		const v1 = await vd.saveVersion({
			data: toxicity(0),
			summary: 'Initial data',
			messageId: 'm-1',
		});
		const v2 = await vd.saveVersion({ data: toxicity(1), summary: 'Changed category' });
		const v3 = await vd.saveVersion({ data: [1, 'two', null], summary: 'Replaced by a list' });
		assert.deepEqual(
			[v1, v2, v3].map((v) => [v.version, v.parent]),
			[
				[1, null],
				[2, 1],
				[3, 2],
			],
		);
		assert.equal(v1.message_id, 'm-1');
		assert.equal(v2.message_id, undefined);
		assert.ok(!Number.isNaN(Date.parse(v1.created_at)));
		assert.deepEqual((await vd.getCurrent())?.data, [1, 'two', null]);
		assert.deepEqual((await vd.getVersion(1)).data, toxicity(0));
		assert.equal((await vd.getVersion(2)).summary, 'Changed category');
		// Any JSON value is data: scalars too.
		for (const data of [null, 0, -1.5, '', 'text', true, {}, []]) {
			const v = await vd.saveVersion({ data, summary: `scalar ${JSON.stringify(data)}` });
			clearDocumentCache();
			assert.deepEqual((await vd.getVersion(v.version)).data, data);
		}
	});

	it('stores a version as one readable JSON object, the head and counter as tiny documents', async () => {
		const { root, vd } = setup();
		await vd.saveVersion({ data: { a: 1 }, summary: 'first', messageId: 'turn-1' });
		const file = (key: string) => readFileSync(path.join(root, key), 'utf8');
		const version = JSON.parse(file('versioned_data/wf/c1/versions/0000000001.json'));
		assert.deepEqual(Object.keys(version), [
			'version',
			'parent',
			'summary',
			'created_at',
			'message_id',
			'data',
		]);
		assert.deepEqual(version.data, { a: 1 });
		const head = JSON.parse(file('versioned_data/wf/c1/branches/main.json'));
		assert.deepEqual(Object.keys(head), ['branch', 'version', 'updated_at']);
		assert.equal(head.version, 1);
		assert.deepEqual(JSON.parse(file('versioned_data/wf/c1/counter.json')), { next: 2 });
	});

	it("returns frozen records and never freezes or keeps the caller's data", async () => {
		const { vd } = setup();
		const data = { list: [1, 2], nested: { x: 1 } };
		const v = await vd.saveVersion({ data, summary: 's' });
		assert.ok(!Object.isFrozen(data) && !Object.isFrozen(data.list));
		data.nested.x = 99;
		assert.deepEqual((await vd.getVersion(v.version)).data, { list: [1, 2], nested: { x: 1 } });
		assert.ok(Object.isFrozen(v) && Object.isFrozen(v.data));
		const copy = structuredClone((await vd.getCurrent())?.data) as { list: number[] };
		copy.list.push(3);
		await vd.saveVersion({ data: copy, summary: 'appended 3' });
		assert.deepEqual((await vd.getCurrent())?.data, { list: [1, 2, 3], nested: { x: 1 } });
	});

	it('costs the same at 1 and at 60 versions: no listing, three reads and three writes', async () => {
		const { vd, storage } = setup();
		const cost = async (i: number) => {
			const before = { ...storage.calls };
			await vd.saveVersion({ data: toxicity(i), summary: `edit ${i}` });
			const save = {
				get: storage.calls.get - before.get,
				put: storage.calls.put - before.put,
				list: storage.calls.list - before.list,
			};
			const mid = { ...storage.calls };
			await vd.getCurrent();
			return {
				save,
				current: { get: storage.calls.get - mid.get, list: storage.calls.list - mid.list },
			};
		};
		await cost(0);
		const early = await cost(1);
		await saveMany(vd, 58, 'main', 2);
		const late = await cost(60);
		assert.deepEqual(late, early);
		assert.deepEqual(early.save, { get: 2, put: 3, list: 0 });
		assert.deepEqual(early.current, { get: 1, list: 0 });
		clearDocumentCache();
		const before = storage.calls.get;
		await vd.getCurrent();
		assert.equal(storage.calls.get - before, 2, 'cold: the head and the version');
	});
});

describe('VersionedData: write-once versions', () => {
	it('a second write of a stored version number fails, and the stored bytes stay', async () => {
		const { disk, vd } = setup();
		await vd.saveVersion({ data: { a: 1 }, summary: 'first' });
		const key = versionKey('wf', 'c1', 1);
		const before = await disk.get(key);
		await assert.rejects(
			disk.put(key, Buffer.from('{"version":1}'), { ifVersion: null }),
			ConflictError,
		);
		const store = new DocumentStore(disk, {
			decode: () => 0,
			encode: () => Buffer.alloc(0),
			empty: () => 0,
		});
		await assert.rejects(store.create(key, Buffer.from('{"other":true}'), {}), ConflictError);
		assert.deepEqual((await disk.get(key))?.body, before?.body);
	});

	it('a save never overwrites: with the counter gone it steps past the taken numbers', async () => {
		const { disk, root, vd, storage } = setup();
		await saveMany(vd, 3);
		const before = await storedObjects(disk, versionedDataPrefix('wf', 'c1') + 'versions/');
		unlinkSync(path.join(root, versionCounterKey('wf', 'c1')));
		await vd.branch('side', 1);
		const v = await vd.saveVersion({ data: 'side', summary: 'on side', branch: 'side' });
		assert.equal(v.version, 4, 'numbers 2 and 3 were taken: stepped forward');
		assert.equal(v.parent, 1);
		const after = await storedObjects(disk, versionedDataPrefix('wf', 'c1') + 'versions/');
		for (const [k, bytes] of before) assert.equal(after.get(k), bytes, `${k} unchanged`);
		// Far behind (more than 16 taken numbers): one listing finds the highest, then it lands.
		await saveMany(vd, 30);
		unlinkSync(path.join(root, versionCounterKey('wf', 'c1')));
		const lists = storage.calls.list;
		const w = await vd.saveVersion({ data: 'side 2', summary: 'on side again', branch: 'side' });
		assert.equal(w.version, 35);
		assert.equal(w.parent, 4);
		assert.equal(storage.calls.list - lists, 1);
		assert.deepEqual(
			JSON.parse(Buffer.from((await disk.get(versionCounterKey('wf', 'c1')))!.body).toString()),
			{ next: 36 },
		);
	});
});

describe('VersionedData: history, diff, rollback, branches', () => {
	it('pages history newest first by parent pointers, one read per entry', async () => {
		const { vd, storage } = setup();
		await saveMany(vd, 7);
		clearDocumentCache();
		const gets = storage.calls.get;
		const p1 = await vd.history({ limit: 3 });
		assert.equal(storage.calls.get - gets, 1 + 3, 'the head, then one read per entry');
		assert.deepEqual(
			p1.entries.map((e) => e.version),
			[7, 6, 5],
		);
		assert.equal(p1.nextBefore, 5);
		const p2 = await vd.history({ limit: 3, before: p1.nextBefore as number });
		assert.deepEqual(
			p2.entries.map((e) => e.version),
			[4, 3, 2],
		);
		const p3 = await vd.history({ limit: 3, before: p2.nextBefore as number });
		assert.deepEqual(
			p3.entries.map((e) => e.version),
			[1],
		);
		assert.equal(p3.nextBefore, null);
		const e = p1.entries[0];
		assert.equal(e.summary, 'edit 6');
		assert.equal(e.parent, 6);
		assert.equal(e.size, Buffer.byteLength(JSON.stringify(toxicity(6))));
		assert.deepEqual(Object.keys(e).sort(), ['created_at', 'parent', 'size', 'summary', 'version']);
		assert.deepEqual((await vd.history()).entries.length, 7);
		assert.deepEqual(await vd.history({ branch: 'main', limit: 1, before: 1 }), {
			branch: 'main',
			entries: [],
			nextBefore: null,
		});
		const empty = setup().vd;
		assert.deepEqual(await empty.history(), { branch: 'main', entries: [], nextBefore: null });
	});

	it('diffs two versions as a JSON Patch with readable lines', async () => {
		const { vd } = setup();
		await vd.saveVersion({ data: { inci: 'WATER', category: 'PERFUME' }, summary: 'Initial' });
		await vd.saveVersion({
			data: { inci: 'WATER', category: 'FRAGRANCE', tags: ['x'] },
			summary: 'Category',
		});
		const d = await vd.diff(1, 2);
		assert.deepEqual(d, {
			from: 1,
			to: 2,
			patch: [
				{ op: 'replace', path: '/category', value: 'FRAGRANCE' },
				{ op: 'add', path: '/tags', value: ['x'] },
			],
			summary: ['replaced /category: "PERFUME" → "FRAGRANCE"', 'added /tags: ["x"]'],
		});
		assert.deepEqual((await vd.diff(2, 1)).summary, [
			'replaced /category: "FRAGRANCE" → "PERFUME"',
			'removed /tags (was ["x"])',
		]);
		assert.deepEqual((await vd.diff(2, 2)).patch, []);
		await assert.rejects(vd.diff(1, 9), UnknownVersionError);
	});

	it('rolls back by saving a new version equal to an old one; nothing is deleted', async () => {
		const { vd } = setup();
		await saveMany(vd, 3);
		const r = await vd.rollback(1);
		assert.deepEqual([r.version, r.parent, r.summary], [4, 3, 'Rolled back to v1']);
		assert.deepEqual(r.data, toxicity(0));
		assert.deepEqual((await vd.getCurrent())?.version, 4);
		assert.deepEqual(
			(await vd.history()).entries.map((e) => e.version),
			[4, 3, 2, 1],
		);
		assert.deepEqual((await vd.getVersion(3)).data, toxicity(2));
		await assert.rejects(vd.rollback(99), UnknownVersionError);
	});

	it('branches from any version; numbers stay unique across branches', async () => {
		const { vd, storage } = setup();
		await saveMany(vd, 3);
		const head = await vd.branch('experiment', 2);
		assert.equal(head.branch, 'experiment');
		assert.equal(head.version, 2);
		assert.equal((await vd.getCurrent('experiment'))?.version, 2);
		const numbers: number[] = [];
		for (let i = 0; i < 4; i++) {
			numbers.push(
				(await vd.saveVersion({ data: i, summary: `e${i}`, branch: 'experiment' })).version,
			);
			numbers.push((await vd.saveVersion({ data: i, summary: `m${i}` })).version);
		}
		assert.deepEqual(numbers, [4, 5, 6, 7, 8, 9, 10, 11]);
		assert.deepEqual(
			(await vd.history({ branch: 'experiment' })).entries.map((e) => e.version),
			[10, 8, 6, 4, 2, 1],
		);
		assert.deepEqual(
			(await vd.history()).entries.map((e) => e.version),
			[11, 9, 7, 5, 3, 2, 1],
		);
		assert.deepEqual(
			(await vd.listBranches()).map((b) => [b.branch, b.version]),
			[
				['experiment', 10],
				['main', 11],
			],
		);
		const r = await vd.rollback(3, 'experiment');
		assert.equal(r.parent, 10);
		assert.deepEqual(r.data, toxicity(2));
		await refusedUnchanged(storage, () => vd.branch('experiment', 1), BranchExistsError);
		await refusedUnchanged(storage, () => vd.branch('main', 1), BranchExistsError);
		await refusedUnchanged(storage, () => vd.branch('other', 77), UnknownVersionError);
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: 1, summary: 's', branch: 'nope' }),
			UnknownBranchError,
		);
		await assert.rejects(vd.getCurrent('nope'), UnknownBranchError);
		await assert.rejects(vd.history({ branch: 'nope' }), UnknownBranchError);
	});

	it('concurrent saves in one process land one after another (linear history)', async () => {
		const { vd } = setup();
		await Promise.all(
			Array.from({ length: 20 }, (_, i) => vd.saveVersion({ data: { i }, summary: `s${i}` })),
		);
		const h = await vd.history({ limit: 100 });
		assert.deepEqual(
			h.entries.map((e) => e.version),
			Array.from({ length: 20 }, (_, i) => 20 - i),
		);
		assert.deepEqual(
			h.entries.map((e) => e.summary).sort(),
			Array.from({ length: 20 }, (_, i) => `s${i}`).sort(),
		);
	});

	it('expectedVersion: saves only on the expected version, else VersionConflictError and nothing written', async () => {
		const { vd, storage } = setup();
		await vd.saveVersion({ data: 1, summary: 'a', expectedVersion: null });
		await vd.saveVersion({ data: 2, summary: 'b', expectedVersion: 1 });
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: 3, summary: 'c', expectedVersion: 1 }),
			VersionConflictError,
			(e) => {
				assert.equal(e.expectedVersion, 1);
				assert.equal(e.currentVersion, 2);
				assert.equal(e.branch, 'main');
			},
		);
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: 3, summary: 'c', expectedVersion: null }),
			VersionConflictError,
		);
		await refusedUnchanged(
			storage,
			() => vd.rollback(1, 'main', { expectedVersion: 1 }),
			VersionConflictError,
		);
		assert.equal((await vd.rollback(1, 'main', { expectedVersion: 2 })).version, 3);
	});
});

describe('VersionedData: bad input is refused by name, with nothing written', () => {
	const cyclic: Record<string, unknown> = { a: 1 };
	cyclic.self = cyclic;
	const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
	const notJson: [string, unknown, RegExp][] = [
		['undefined', undefined, /the value is undefined/],
		['an undefined member', { a: { b: undefined } }, /"\/a\/b" is undefined/],
		['a function', { f: () => 1 }, /"\/f" is a function/],
		['NaN', { n: [NaN] }, /"\/n\/0" is NaN/],
		['Infinity', { n: Infinity }, /is Infinity/],
		['-Infinity', -Infinity, /is -Infinity/],
		['a BigInt', { n: 10n }, /is a BigInt/],
		['a cycle', cyclic, /"\/self" refers back/],
		['a Date', { d: new Date(0) }, /"\/d" is a Date object/],
		['a Map', new Map(), /is a Map object/],
		['a sparse array', sparse, /hole at index 1/],
		['a symbol', { s: Symbol('x') }, /is a symbol/],
		['symbol keys', { [Symbol('k')]: 1 }, /symbol keys/],
		['an escaped key path', { 'a/b': { '~': undefined } }, /"\/a~1b\/~0" is undefined/],
	];
	for (const [name, data, pattern] of notJson)
		it(`data: ${name}`, async () => {
			const { vd, storage } = setup();
			await vd.saveVersion({ data: 'before', summary: 'existing' });
			await refusedUnchanged(
				storage,
				() => vd.saveVersion({ data, summary: 's' }),
				NotJsonError,
				(e) => {
					assert.equal(e.field, 'data');
					assert.match(e.message, pattern);
				},
			);
		});

	it('data deeper than 1,000 levels', async () => {
		const { vd, storage } = setup();
		let deep: unknown = 1;
		for (let i = 0; i < 1500; i++) deep = [deep];
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: deep, summary: 's' }),
			NotJsonError,
			(e) => assert.match(e.message, /deeper than 1000/),
		);
	});

	it(`data larger than ${MAX_DATA_BYTES} bytes as JSON`, async () => {
		const { vd, storage } = setup();
		const exact = 'x'.repeat(MAX_DATA_BYTES - 2); // "…" quotes make it exactly the limit
		assert.equal((await vd.saveVersion({ data: exact, summary: 'at the limit' })).version, 1);
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: `${exact}y`, summary: 's' }),
			DataTooLargeError,
			(e) => {
				assert.equal(e.field, 'data');
				assert.equal(e.bytes, MAX_DATA_BYTES + 1);
				assert.equal(e.limit, MAX_DATA_BYTES);
			},
		);
		// Multi-byte characters count as their UTF-8 bytes.
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: 'é'.repeat(MAX_DATA_BYTES / 2), summary: 's' }),
			DataTooLargeError,
		);
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: ['x'.repeat(4 * MAX_DATA_BYTES)], summary: 's' }),
			DataTooLargeError,
			(e) => assert.match(e.message, /at least/),
		);
	});

	it('summary: missing, empty, blank, not text, too long', async () => {
		const { vd, storage } = setup();
		for (const summary of [undefined, '', '   \n', 5, null, 'x'.repeat(4097)])
			await refusedUnchanged(
				storage,
				() => vd.saveVersion({ data: 1, summary } as never),
				InvalidInputError,
				(e) => assert.equal(e.field, 'summary'),
			);
		await refusedUnchanged(storage, () => vd.saveVersion(undefined as never), InvalidInputError);
	});

	it('branch names: like IDs, at most 100 bytes', async () => {
		const { vd, storage } = setup();
		await vd.saveVersion({ data: 1, summary: 's' });
		for (const branch of ['', 'a/b', 'x\ny', '..', '.', 'a\\b', 'x'.repeat(101), 'bad\u0000', 7])
			for (const fn of [
				() => vd.saveVersion({ data: 1, summary: 's', branch } as never),
				() => vd.branch(branch as never, 1),
				() => vd.getCurrent(branch as never),
				() => vd.history({ branch } as never),
			])
				await refusedUnchanged(storage, fn, InvalidIdError, (e) => assert.equal(e.field, 'branch'));
		assert.equal((await vd.branch('x'.repeat(100), 1)).version, 1);
		assert.equal((await vd.branch('feature-1.2_é', 1)).version, 1);
	});

	it('version numbers, expectedVersion, messageId, limit', async () => {
		const { vd, storage } = setup();
		await vd.saveVersion({ data: 1, summary: 's' });
		for (const n of [0, -1, 1.5, NaN, '1', 1e11])
			await refusedUnchanged(
				storage,
				() => vd.getVersion(n as never),
				InvalidInputError,
				(e) => assert.equal(e.field, 'version'),
			);
		await refusedUnchanged(
			storage,
			() => vd.getVersion(2),
			UnknownVersionError,
			(e) => assert.equal(e.version, 2),
		);
		for (const expectedVersion of [0, 1.5, '1'])
			await refusedUnchanged(
				storage,
				() => vd.saveVersion({ data: 1, summary: 's', expectedVersion } as never),
				InvalidInputError,
				(e) => assert.equal(e.field, 'expectedVersion'),
			);
		for (const messageId of ['a/b', 5, 'x'.repeat(300)])
			await refusedUnchanged(
				storage,
				() => vd.saveVersion({ data: 1, summary: 's', messageId } as never),
				InvalidIdError,
				(e) => assert.equal(e.field, 'message_id'),
			);
		for (const limit of [0, 1001, 2.5])
			await assert.rejects(
				vd.history({ limit }),
				(e: unknown) => e instanceof InvalidInputError && e.field === 'limit',
			);
		await assert.rejects(
			vd.history({ before: 0 }),
			(e: unknown) => e instanceof InvalidInputError && e.field === 'before',
		);
	});

	it('IDs and options are checked when constructed', () => {
		const storage = tempDisk();
		assert.throws(
			() => new VersionedData({ storage, appId: 'a/b', conversationId: 'c' }),
			InvalidIdError,
		);
		assert.throws(
			() => new VersionedData({ storage, appId: 'a', conversationId: '' }),
			InvalidIdError,
		);
		assert.throws(
			() => new VersionedData({ storage, appId: 'a', conversationId: 'c', keyPrefix: '../x' }),
			InvalidIdError,
		);
		assert.throws(
			() => new VersionedData({ storage, appId: 'a', conversationId: 'c', maxAttempts: 0 }),
			InvalidOptionError,
		);
	});

	it('unreadable stored objects are errors naming the key, never empty', async () => {
		const { vd, root } = setup();
		await saveMany(vd, 2);
		writeFileSync(path.join(root, versionKey('wf', 'c1', 1)), '{"version":1,');
		clearDocumentCache();
		await assert.rejects(
			vd.getVersion(1),
			(e: unknown) => e instanceof CorruptDocumentError && e.key.endsWith('0000000001.json'),
		);
		await assert.rejects(vd.history(), CorruptDocumentError);
		writeFileSync(
			path.join(root, versionKey('wf', 'c1', 1)),
			JSON.stringify({
				version: 3,
				parent: null,
				summary: 's',
				created_at: new Date().toISOString(),
				data: 1,
			}),
		);
		clearDocumentCache();
		await assert.rejects(vd.getVersion(1), /says it is version 3/);
		unlinkSync(path.join(root, versionKey('wf', 'c1', 2)));
		clearDocumentCache();
		await assert.rejects(vd.getCurrent(), /points to version 2, which does not exist/);
		writeFileSync(
			path.join(root, branchKey('wf', 'c1', 'main')),
			'{"branch":"other","version":1,"updated_at":"2026-01-01T00:00:00Z"}',
		);
		await assert.rejects(vd.getCurrent(), /head of branch "other"/);
		await assert.rejects(vd.saveVersion({ data: 1, summary: 's' }), CorruptDocumentError);
	});
});

describe('VersionedData: JSON Schema', () => {
	const schema = {
		type: 'object',
		required: ['inci', 'category'],
		properties: {
			inci: { type: 'string', minLength: 1 },
			category: { enum: ['PERFUME', 'FRAGRANCE', 'OTHERS'] },
			noael: { type: 'number', minimum: 0 },
		},
		additionalProperties: false,
	};

	it('saves valid data; refuses a violation with every error (path and message), nothing written', async () => {
		const { vd, storage } = setup({ schema });
		await vd.saveVersion({ data: { inci: 'WATER', category: 'PERFUME' }, summary: 'ok' });
		await refusedUnchanged(
			storage,
			() =>
				vd.saveVersion({
					data: { inci: '', category: 'SOAP', noael: -1, extra: 1 },
					summary: 'bad',
				}),
			SchemaViolationError,
			(e) => {
				assert.deepEqual(e.errors.map((x) => x.path).sort(), ['', '/category', '/inci', '/noael']);
				assert.ok(e.errors.some((x) => x.path === '/category' && /allowed values/.test(x.message)));
				assert.ok(e.errors.some((x) => x.path === '' && /"extra"/.test(x.message)));
				assert.match(e.message, /\/noael: must be >= 0/);
			},
		);
		await refusedUnchanged(
			storage,
			() => vd.saveVersion({ data: { inci: 'W' }, summary: 'bad' }),
			SchemaViolationError,
			(e) => assert.match(e.errors[0].message, /required property 'category'/),
		);
		// A rollback to data the schema refuses is refused the same way.
		const loose = new VersionedData({ storage, appId: 'wf', conversationId: 'c1' });
		await loose.saveVersion({ data: { free: true }, summary: 'no schema' });
		await refusedUnchanged(storage, () => vd.rollback(2), SchemaViolationError);
	});

	it('an invalid schema is a clear error when constructed', () => {
		const storage = tempDisk();
		const make = (s: unknown) => () =>
			new VersionedData({ storage, appId: 'a', conversationId: 'c', schema: s });
		assert.throws(
			make({ type: 'nonsense' }),
			(e: unknown) => e instanceof InvalidSchemaError && /type/.test(e.message),
		);
		assert.throws(
			make({ type: 'object', requried: ['a'] }),
			(e: unknown) => e instanceof InvalidSchemaError && /requried/.test(e.message),
		);
		assert.throws(make(5), InvalidSchemaError);
		assert.throws(make({ $ref: 'https://example.com/schema.json' }), InvalidSchemaError);
		assert.throws(make({ $schema: 'http://json-schema.org/draft-04/schema#' }), /not supported/);
		assert.throws(make({ minimum: () => 1 }), InvalidSchemaError);
	});

	it('draft 2020-12 and boolean schemas; "format" is an annotation', async () => {
		const { storage } = setup();
		const tuple = new VersionedData({
			storage,
			appId: 'wf',
			conversationId: 'tuple',
			schema: {
				$schema: 'https://json-schema.org/draft/2020-12/schema',
				prefixItems: [{ type: 'string' }],
				items: false,
			},
		});
		await tuple.saveVersion({ data: ['a'], summary: 'ok' });
		await assert.rejects(
			tuple.saveVersion({ data: ['a', 'b'], summary: 'bad' }),
			SchemaViolationError,
		);
		const none = new VersionedData({ storage, appId: 'wf', conversationId: 'f', schema: false });
		await assert.rejects(none.saveVersion({ data: 1, summary: 's' }), SchemaViolationError);
		const fmt = new VersionedData({
			storage,
			appId: 'wf',
			conversationId: 'g',
			schema: { type: 'string', format: 'email' },
		});
		await fmt.saveVersion({ data: 'not an email', summary: 's' });
	});
});

describe('Versioned data in housekeeping', () => {
	it('parses the new keys; appPrefixes covers them', () => {
		assert.deepEqual(parseKey('versioned_data/wf/c1/versions/0000000012.json'), {
			kind: 'version',
			appId: 'wf',
			conversationId: 'c1',
			version: 12,
		});
		assert.deepEqual(parseKey('p/versioned_data/wf/c1/branches/main.json', 'p'), {
			kind: 'branch',
			appId: 'wf',
			conversationId: 'c1',
			branch: 'main',
		});
		assert.deepEqual(parseKey('versioned_data/wf/c1/counter.json'), {
			kind: 'version_counter',
			appId: 'wf',
			conversationId: 'c1',
		});
		for (const bad of [
			'versioned_data/wf/c1/versions/12.json',
			'versioned_data/wf/c1/versions/0000000000.json',
			'versioned_data/wf/c1/branches/.json',
			'versioned_data/wf/c1/other.json',
			'versioned_data/wf/c1/versions/x/0000000001.json',
		])
			assert.equal(parseKey(bad), undefined, bad);
		assert.ok(appPrefixes('wf', 'p').includes('p/versioned_data/wf/'));
		assert.equal(versionKey('wf', 'c1', 7, 'p'), 'p/versioned_data/wf/c1/versions/0000000007.json');
		assert.throws(() => versionKey('wf', 'c1', 0), InvalidIdError);
	});

	it("deleteConversationMemory removes the conversation's versioned data with its chat memory, heads first", async () => {
		const { disk } = setup();
		const chat = new ConversationMemory('wf', 'c1', { storage: disk, model: 'gpt-4o-mini' });
		await chat.addMessages({ userContent: 'hi', assistantContent: 'hello' });
		await chat.flush();
		const vd = new VersionedData({ storage: disk, appId: 'wf', conversationId: 'c1' });
		const other = new VersionedData({ storage: disk, appId: 'wf', conversationId: 'c2' });
		await saveMany(vd, 3);
		await vd.branch('b', 1);
		await saveMany(other, 2);
		const listed = (await listConversationKeys(disk, 'wf', 'c1')).map((o) => parseKey(o.key)?.kind);
		assert.deepEqual(listed, [
			'conversation',
			'branch',
			'branch',
			'version_counter',
			'version',
			'version',
			'version',
		]);
		const deleted = await deleteConversationMemory(disk, 'wf', 'c1');
		assert.equal(deleted.length, 7);
		assert.deepEqual(await listConversationKeys(disk, 'wf', 'c1'), []);
		assert.equal(await vd.getCurrent(), null);
		assert.equal((await other.getCurrent())?.version, 2, 'another conversation is untouched');
	});

	it('pruneMemory deletes versioned data untouched for N days, as a whole; keeps it while the chat is live', async () => {
		const { disk, root } = setup({ keyPrefix: 'hk' });
		const a = new VersionedData({
			storage: disk,
			appId: 'wf',
			conversationId: 'old',
			keyPrefix: 'hk',
		});
		const b = new VersionedData({
			storage: disk,
			appId: 'wf',
			conversationId: 'chatting',
			keyPrefix: 'hk',
		});
		await saveMany(a, 3);
		await saveMany(b, 2);
		const soon = await pruneMemory(disk, { olderThanDays: 1, keyPrefix: 'hk' });
		assert.deepEqual(soon.deleted, []);
		// Two days later, conversation "chatting" has a new chat turn: its versioned data stays.
		const later = new Date(Date.now() + 2 * DAY);
		const chat = new ConversationMemory('wf', 'chatting', {
			storage: disk,
			model: 'gpt-4o-mini',
			keyPrefix: 'hk',
		});
		await chat.addMessages({ userContent: 'hi', assistantContent: 'hello' });
		await chat.flush();
		const chatFile = path.join(root, conversationMemoryKey('wf', 'chatting', 'hk'));
		utimesSync(chatFile, later, later); // written "two days later"
		const dry = await pruneMemory(disk, {
			olderThanDays: 1,
			keyPrefix: 'hk',
			now: later,
			dryRun: true,
		});
		assert.equal(dry.deleted.length, 5);
		assert.equal((await a.getCurrent())?.version, 3, 'a dry run deletes nothing');
		const real = await pruneMemory(disk, {
			olderThanDays: 1,
			keyPrefix: 'hk',
			now: later,
			appId: 'wf',
		});
		assert.deepEqual(
			real.deleted.map((k) => parseKey(k, 'hk')?.kind),
			['branch', 'version_counter', 'version', 'version', 'version'],
		);
		assert.deepEqual(await storedObjects(disk, versionedDataPrefix('wf', 'old', 'hk')), new Map());
		assert.equal((await b.getCurrent())?.version, 2);
	});
});

describe('export and import of a conversation', () => {
	async function populate(storage: MemoryStorage, conversationId = 'c1') {
		const chat = new ConversationMemory('wf', conversationId, { storage, model: 'gpt-4o-mini' });
		await chat.addMessages({
			userContent: 'set up WATER',
			assistantContent: 'done',
			userFiles: [
				{
					transferMethod: 'local_file',
					data: Buffer.from('PNGDATA'),
					mimeType: 'image/png',
					name: 'a.png',
				},
			],
		});
		await chat.flush();
		const node = new NodeMemory('wf', conversationId, 'node-1', { storage, model: 'gpt-4o-mini' });
		await node.addMessages({ userContent: 'q', assistantContent: 'a' });
		await node.flush();
		const vd = new VersionedData({ storage, appId: 'wf', conversationId });
		await saveMany(vd, 4);
		await vd.branch('what-if', 2);
		await vd.saveVersion({
			data: { 'a/b': ['~', null, 1.25, { é: '😀' }] },
			summary: 'odd keys',
			branch: 'what-if',
			messageId: 'm9',
		});
		await vd.rollback(1);
		return vd;
	}

	it('reproduces every byte of the versioned data and every message, into another conversation', async () => {
		const { disk } = setup();
		await populate(disk);
		const exported = await exportConversation(disk, 'wf', 'c1');
		assert.equal(exported.versionedData.versions.length, 6);
		assert.equal(exported.versionedData.branches.length, 2);
		assert.deepEqual(exported.versionedData.counter, { next: 7 });
		assert.equal(exported.memory?.nodes.length, 1);
		assert.equal(exported.memory?.files.length, 1);
		// Through JSON text, as a file would carry it.
		const text = JSON.stringify(exported);
		const result = await importConversation(disk, 'wf', JSON.parse(text), {
			conversationId: 'copy',
		});
		assert.equal(result.versions, 6);
		assert.equal(result.branches, 2);
		assert.deepEqual(
			await storedUnder(disk, versionedDataPrefix('wf', 'copy')),
			await storedUnder(disk, versionedDataPrefix('wf', 'c1')),
			'every version, head and counter byte for byte',
		);
		const copy = new VersionedData({ storage: disk, appId: 'wf', conversationId: 'copy' });
		assert.equal((await copy.getCurrent())?.version, 6);
		assert.deepEqual(
			(await copy.history({ branch: 'what-if' })).entries.map((e) => e.version),
			[5, 2, 1],
		);
		for (const key of ['conversation_memory/wf/X.json', 'node_memory/wf/X/node-1.json']) {
			const a = await exportDocument(disk, key.replace('X', 'c1'));
			const b = await exportDocument(disk, key.replace('X', 'copy'));
			assert.deepEqual(
				b?.messages.map((m) => ({
					...m,
					files: m.files.map((f) => ({ ...f, key: f.key?.replace('/copy/', '/c1/') })),
				})),
				a?.messages,
			);
		}
		const again = await exportConversation(disk, 'wf', 'copy');
		assert.deepEqual(
			{ ...again, conversationId: 'c1', memory: { ...again.memory, conversationId: 'c1' } },
			exported,
			'exporting the copy gives the same value',
		);
		// The saved chain goes on in the copy exactly where it stopped.
		assert.equal((await copy.saveVersion({ data: 1, summary: 'next' })).version, 7);
	});

	it('import into the same conversation after deleting it; refuses existing data unless overwrite', async () => {
		const { disk, storage } = setup();
		const vd = await populate(disk);
		const exported = await vd.exportConversation();
		const before = await storedObjects(disk, versionedDataPrefix('wf', 'c1'));
		await refusedUnchanged(
			storage,
			() => vd.importConversation(exported),
			ConversationExistsError,
			(e) => {
				assert.equal(e.conversationId, 'c1');
				assert.ok(e.keys.length > 0);
			},
		);
		// Only versioned data there (no chat): still refused.
		const other = new VersionedData({ storage: disk, appId: 'wf', conversationId: 'only-data' });
		await other.saveVersion({ data: 1, summary: 's' });
		await refusedUnchanged(
			storage,
			() => other.importConversation(exported),
			ConversationExistsError,
		);
		const r = await other.importConversation(exported, { overwrite: true });
		assert.ok(r.replaced.some((k) => k.endsWith('only-data/versions/0000000001.json')));
		assert.deepEqual(
			await storedUnder(disk, versionedDataPrefix('wf', 'only-data')),
			await storedUnder(disk, versionedDataPrefix('wf', 'c1')),
		);
		await deleteConversationMemory(disk, 'wf', 'c1');
		await vd.importConversation(exported);
		assert.deepEqual(await storedObjects(disk, versionedDataPrefix('wf', 'c1')), before);
	});

	it('versioned data alone (no chat memory) exports and imports', async () => {
		const { disk } = setup();
		const vd = new VersionedData({ storage: disk, appId: 'wf', conversationId: 'd' });
		await saveMany(vd, 2);
		const e = await vd.exportConversation();
		assert.equal(e.memory, null);
		await importConversation(disk, 'wf2', e);
		assert.deepEqual(
			await storedUnder(disk, versionedDataPrefix('wf2', 'd')),
			await storedUnder(disk, versionedDataPrefix('wf', 'd')),
		);
	});

	it('an inconsistent export is refused before anything is written', async () => {
		const { disk, storage } = setup();
		await populate(disk);
		const good = JSON.parse(JSON.stringify(await exportConversation(disk, 'wf', 'c1')));
		const broken: [string, (e: any) => void, RegExp][] = [
			['format', (e) => (e.format = 'other'), /format/],
			['version', (e) => (e.version = 2), /version/],
			[
				'missing parent',
				(e) => e.versionedData.versions.splice(1, 1),
				/versions\[\d\]\.parent: version 2 is not in the export/,
			],
			[
				'duplicate version',
				(e) => e.versionedData.versions.push(e.versionedData.versions[0]),
				/appears twice/,
			],
			[
				'branch to nowhere',
				(e) => (e.versionedData.branches[0].version = 99),
				/branches\[0\]\.version/,
			],
			[
				'bad branch name',
				(e) => (e.versionedData.branches[0].branch = 'a/b'),
				/branches\[0\]\.branch/,
			],
			['bad record', (e) => delete e.versionedData.versions[0].summary, /versions\[0\]/],
			['no data', (e) => delete e.versionedData.versions[0].data, /versions\[0\]: data/],
			['parent not older', (e) => (e.versionedData.versions[0].parent = 3), /not older/],
			['bad counter', (e) => (e.versionedData.counter = { next: 0 }), /counter/],
			[
				'bad chat memory',
				(e) => (e.memory.conversation.messages[0].role = 'robot'),
				/^Invalid conversation export at memory\.conversation/,
			],
		];
		for (const [name, breakIt, pattern] of broken) {
			const e = structuredClone(good);
			breakIt(e);
			await refusedUnchanged(
				storage,
				() =>
					importConversation(storage, 'wf', e, { conversationId: `x-${name.replace(/ /g, '-')}` }),
				InvalidExportError,
				(err) => assert.match(err.message, pattern, name),
			);
		}
		await refusedUnchanged(
			storage,
			() => importConversation(storage, 'wf', 'nope'),
			InvalidExportError,
		);
	});
});
