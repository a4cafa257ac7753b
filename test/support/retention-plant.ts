// What the retention tests plant, at a fixed time T0 with the engine's clock (nothing sleeps): in
// workflow "wf", conversation "old" expires after 1 day (chat memory in both scopes, long enough to
// have sealed segments; versioned data; Memory Base captures with vectors), conversation "live" after
// 30 days, and "kept" has no rule. Shared by the unit tests and the storage tests (disk, radosgw).
import assert from 'node:assert/strict';

import {
	ConflictError,
	ConversationMemory,
	DAY_MS,
	MemoryBase,
	NodeMemory,
	VersionedData,
} from '../../src/internal';
import type {
	DeleteOptions,
	GetOptions,
	MemoryOptions,
	MemoryStorage,
	PutOptions,
} from '../../src/internal';
import { TestEmbedder } from './embeddings';
import { storageHolds } from './forget-plant';

export const T0 = new Date('2026-03-01T08:00:00.000Z');
/** T0 plus `days`. */
export const at = (days: number): Date => new Date(T0.getTime() + days * DAY_MS);
export const OLD = 'Expired-Secret-7781';
export const LIVE = 'Live-Fact-2290';

const bytes = { encoding: 'utf8-bytes', count: (t: string) => Buffer.byteLength(t) };
/** Small log limits, so a few turns seal older messages into write-once segments. */
const SMALL = { tailMessages: 4, keepMessages: 2, minMessages: 1 };

/** A chat memory of "wf" on the engine's clock `now` (Conversation scope, or a node's). */
export function chat(
	storage: MemoryStorage,
	conversationId: string,
	now: Date,
	extra: Partial<MemoryOptions> & { nodeId?: string } = {},
): ConversationMemory | NodeMemory {
	const options: MemoryOptions = {
		storage,
		tokenCounter: bytes,
		log: SMALL,
		now: () => now,
		...extra,
	};
	return extra.nodeId
		? new NodeMemory('wf', conversationId, extra.nodeId, options)
		: new ConversationMemory('wf', conversationId, options);
}

export async function say(memory: ConversationMemory | NodeMemory, text: string, n = 1) {
	for (let i = 0; i < n; i++) {
		await memory.addMessages({ userContent: `${text} (${i})`, assistantContent: `noted ${i}` });
		await memory.flush();
	}
}

/** The contents a model would get from a memory now. */
export async function history(memory: ConversationMemory | NodeMemory): Promise<string[]> {
	return (await memory.getHistoryPromptMessages({})).messages.map((m) => String(m.content));
}

export function data(storage: MemoryStorage, conversationId: string, now: Date): VersionedData {
	return new VersionedData({ storage, appId: 'wf', conversationId, now: () => now });
}

export function base(storage: MemoryStorage, now: Date): MemoryBase {
	return new MemoryBase({
		storage,
		baseId: 'wf',
		embedder: new TestEmbedder(),
		threshold: 1,
		now: () => now,
	});
}

/** Everything the module comment lists, written at T0. */
export async function plant(storage: MemoryStorage): Promise<void> {
	await say(chat(storage, 'old', T0, { expireAfterDays: 1 }), `old chat ${OLD}`, 6);
	await say(chat(storage, 'old', T0, { expireAfterDays: 1, nodeId: 'n1' }), `node ${OLD}`);
	await say(chat(storage, 'live', T0, { expireAfterDays: 30 }), `live chat ${LIVE}`);
	await say(chat(storage, 'kept', T0), 'no rule here');
	for (const [conversation, days, text] of [
		['old', 1, OLD],
		['live', 30, LIVE],
	] as const)
		for (let i = 1; i <= 3; i++)
			await data(storage, conversation, T0).saveVersion({
				data: { text, i },
				summary: `save ${i}`,
				expireAfterDays: days,
			});
	const b = base(storage, T0);
	await b.capture({ sessionId: 'old', runId: 'r1', texts: [`paint ${OLD}`], expireAfterDays: 1 });
	await b.capture({
		sessionId: 'live',
		runId: 'r2',
		texts: [`paint ${LIVE}`],
		expireAfterDays: 30,
	});
}

/** What "live" and "kept" still give at `now`, each read its own way. */
export async function liveIntact(storage: MemoryStorage, now: Date): Promise<void> {
	assert.equal((await history(chat(storage, 'live', now))).length, 2);
	assert.match((await history(chat(storage, 'live', now)))[0], new RegExp(LIVE));
	assert.equal((await history(chat(storage, 'kept', now))).length, 2);
	assert.deepEqual((await data(storage, 'live', now).getCurrent())?.data, { text: LIVE, i: 3 });
	const hits = await base(storage, now).search('paint', { allUsers: true, k: 10 });
	assert.deepEqual(
		hits.map((h) => h.sessionId),
		['live'],
	);
}

/** Nothing of "old" is stored any more: no key of it, and no byte holds its secret. */
export async function oldGone(storage: MemoryStorage, raw: MemoryStorage = storage): Promise<void> {
	const keys = (await storage.list('')).map((o) => o.key);
	assert.deepEqual(
		keys.filter((k) => /\/old(\.|\/|$)/.test(k)),
		[],
		'no object of the expired conversation',
	);
	assert.equal(await storageHolds(raw, OLD), false, 'no stored byte holds the expired text');
}

/**
 * A storage that runs a test's step at an exact moment of a sweep: right after a listing of a prefix,
 * or right before a conditional delete of a key (after the object was judged), once each.
 */
export class Interleaved implements MemoryStorage {
	private afterList: Array<{ match: (prefix: string) => boolean; run: () => Promise<void> }> = [];
	private beforeDelete: Array<{ match: (key: string) => boolean; run: () => Promise<void> }> = [];
	/** Conditional deletes refused because the object changed, by key. */
	readonly refused: string[] = [];

	constructor(readonly inner: MemoryStorage) {}

	onAfterList(match: (prefix: string) => boolean, run: () => Promise<void>): void {
		this.afterList.push({ match, run });
	}

	onBeforeDelete(match: (key: string) => boolean, run: () => Promise<void>): void {
		this.beforeDelete.push({ match, run });
	}

	describe(): string {
		return this.inner.describe();
	}

	identity(): string {
		return this.inner.identity?.() ?? this.inner.describe();
	}

	get: MemoryStorage['get'] = ((key: string, options?: GetOptions) =>
		this.inner.get(key, options as GetOptions)) as MemoryStorage['get'];

	put(key: string, body: Uint8Array, options?: PutOptions) {
		return this.inner.put(key, body, options);
	}

	async delete(key: string, options?: DeleteOptions): Promise<void> {
		const i = this.beforeDelete.findIndex((h) => options?.ifVersion && h.match(key));
		if (i >= 0) await this.beforeDelete.splice(i, 1)[0].run();
		try {
			await this.inner.delete(key, options);
		} catch (error) {
			if (error instanceof ConflictError) this.refused.push(key);
			throw error;
		}
	}

	async list(prefix: string) {
		const listed = await this.inner.list(prefix);
		const i = this.afterList.findIndex((h) => h.match(prefix));
		if (i >= 0) await this.afterList.splice(i, 1)[0].run();
		return listed;
	}

	sweep(prefix: string, olderThanMs: number) {
		return this.inner.sweep?.(prefix, olderThanMs) ?? Promise.resolve([]);
	}
}
