// A base's life cycle: Regenerate (rebuild the index from the capture logs), Delete (everything of the
// base), Forget (one conversation, for good). Each holds the locks it needs, so no sync runs meanwhile.
import { InvalidOptionError, MemoryBaseDeletingError, SyncRunningError } from '../errors';
import { knowledgeBaseMetadataKey, knowledgeBasePrefix, memoryBasePrefix } from './keys';
import { validateId } from '../keys/ids';
import { sleep } from '../common/sleep';
import type { HeldLease } from '../store/lease';
import { heldLocks, locked } from '../store/lease-locks';
import type { Parts } from '../store/lease-locks';
import { documentStored, forEachKey } from '../store/storage';
import { capturedChunks, chunksOf, lexicalChunks, readLog, readMessages } from './capture-log';
import { FOLD_BATCH, settle } from './log-folding';
import { BaseIndexes } from './base-indexes';
import { runningError } from './parts';
import { beginRefill, endRefill, refillWords } from './refill';
import { beginMove, copyVectors } from './upgrade';
import type { ExternalIndex } from '../indexes';
import type { BaseParts } from './parts';
import type { SessionLog } from './records';
import { configure, ensureKnowledgeBase, markLexical } from './settings';
import { ingest, SyncTally } from './sync';
import type { DeleteResult, ForgetResult, SyncResult } from './types';

/** Chunks per lexical add when a whole base is re-indexed. */
const LEXICAL_BATCH = 4096;

/**
 * Rebuilds the knowledge base from the capture log (the node's Regenerate): with every lock held,
 * resets each session's cursor (and raises its epoch, so no older sync can move it), deletes the
 * index, then syncs every session from the start. Interrupted, it leaves cursors at or below what
 * is indexed, so the next sync or Regenerate carries on.
 */
export async function regenerate(p: BaseParts): Promise<SyncResult> {
	const config = await p.config();
	if (config?.deleting) throw new MemoryBaseDeletingError(p.baseId);
	return locked(p.locks, undefined, 'regenerate', async (sessions, leases) => {
		const kbId = config?.kb_id ?? (await configure(p)).kb_id;
		await ensureKnowledgeBase(p, kbId);
		// A base in an older layout is rebuilt into the current one (upgrade.ts: moving meanwhile); the
		// base-wide index is refilled from the partitions, once (refill.ts).
		const indexes = await beginMove(p);
		const vectorsMove = indexes.kind === 'moving' || indexes.wide === 'building';
		await beginRefill(p, indexes);
		const lexical = await rebuildLexical(p, indexes, sessions);
		await refillWords(p, indexes);
		// Without an embedding model only the lexical index can be rebuilt; the vectors stay as they
		// are (copied into the partitions and the base-wide index when the base moves).
		if (!p.options.embedder) {
			if (indexes.kind === 'moving' && !p.external()) await copyVectors(indexes);
			await endRefill(p, indexes, vectorsMove);
			return lexical;
		}
		const embedder = p.embedder('Regenerate');
		const external = p.external();
		await resetCursors(p, sessions, external);
		if (!external) await clearVectors(indexes);
		await p.metadata.update(knowledgeBaseMetadataKey(kbId, p.keyPrefix), (cur) =>
			cur.version === null
				? undefined
				: { ...cur.doc, dimensions: null, updated_at: new Date().toISOString() },
		);
		const tally = new SyncTally(p.baseId);
		for await (const s of sessions) {
			const lease = leases.whole ?? (leases.parts.get(s) as HeldLease);
			tally.add(await ingest(p, s, kbId, embedder, lease, async () => indexes));
		}
		await endRefill(p, indexes, true);
		return tally.done;
	});
}

/** Empties every vector index of the base (a moved single one keeps its marker). */
async function clearVectors(indexes: BaseIndexes): Promise<void> {
	const single = indexes.singleVectors().manifestKey;
	for (const index of await indexes.allVectors())
		if (indexes.kind !== 'moving' || index.manifestKey !== single) await index.clear();
	if (indexes.kind === 'moving') await indexes.singleVectors().retire();
}

/**
 * The lexical index anew from every session's capture log (every lock held): emptied in one swap per
 * index that keeps its open logs, then each log's messages added and the log settled (closed when
 * nothing newer came, listed when still open).
 */
async function rebuildLexical(
	p: BaseParts,
	indexes: BaseIndexes,
	sessions: Parts,
): Promise<SyncResult> {
	const since = new Date().toISOString();
	for (const index of await indexes.allLexical())
		if (index.manifestKey !== indexes.single().manifestKey || indexes.kind === 'single')
			await index.reset();
	const out = new SyncTally(p.baseId);
	const logs: SessionLog[] = [];
	for await (const s of sessions) {
		const { log } = await readLog(p, s);
		const all = await readMessages(p, log, 1, log.next_seq - 1);
		const chunks = lexicalChunks(p, s, all);
		for (let i = 0; i < chunks.length; i += LEXICAL_BATCH)
			await indexes.addLexical(chunks.slice(i, i + LEXICAL_BATCH));
		logs.push(log);
		if (logs.length >= FOLD_BATCH) await settle(p, logs.splice(0), indexes);
		out.add({
			sessionId: s,
			messages: all.length,
			chunks: chunks.length,
			from: log.cursor,
			cursor: log.cursor,
			totalProcessed: log.total_processed,
			lastSyncAt: log.last_sync_at,
			pending: log.next_seq - 1 - log.cursor,
		});
	}
	await settle(p, logs, indexes);
	// Captures since `since` went into the index as they came: it holds everything from now on.
	await markLexical(p, since);
	return out.done;
}

/** Chunk IDs a connected store is asked to remove at once. */
const REMOVE_BATCH = 4096;

/**
 * Removals from a connected store (or none), REMOVE_BATCH chunk IDs at a time: a whole base's would
 * be millions. `done` removes the rest.
 */
function batchedRemoval(external: ExternalIndex | undefined) {
	const ids: string[] = [];
	return {
		add: async (more: string[]) => {
			ids.push(...more);
			if (external && ids.length >= REMOVE_BATCH) await external.remove(ids.splice(0));
		},
		done: async () => {
			if (external) await external.remove(ids.splice(0));
		},
	};
}

/**
 * Sets every session's cursor to 0 (epoch + 1); a connected store is asked to remove the chunks the
 * sessions had ingested, a batch at a time.
 */
async function resetCursors(
	p: BaseParts,
	sessions: Parts,
	external: ExternalIndex | undefined,
): Promise<void> {
	const kbId = await p.knowledgeBaseId();
	const removal = batchedRemoval(external);
	for await (const s of sessions) {
		const result = await p.logs.update(p.logKey(s), (cur) =>
			cur.version === null
				? undefined
				: {
						...cur.doc,
						cursor: 0,
						cursor_message_id: null,
						total_processed: 0,
						epoch: cur.doc.epoch + 1,
						updated_at: new Date().toISOString(),
					},
		);
		if (external && result.current.version !== null) {
			const log = result.current.doc;
			const all = await readMessages(p, log, 1, log.next_seq - 1);
			await removal.add(chunksOf(p, kbId, s, all).map((c) => c.id));
		}
	}
	await removal.done();
}

/**
 * Deletes everything of the base: configuration, capture logs, cursors, its knowledge base and index
 * (and its vectors in a connected store that can delete). A running sync is cancelled at its next
 * batch (mode "cancel", the default) or waited for (mode "wait"), up to `timeoutMs`; then every lock
 * is taken so none starts, and objects are deleted configuration first.
 */
export async function deleteBase(
	p: BaseParts,
	options: { mode?: 'wait' | 'cancel'; timeoutMs?: number } = {},
): Promise<DeleteResult> {
	const mode = options.mode ?? 'cancel';
	if (mode !== 'wait' && mode !== 'cancel')
		throw new InvalidOptionError('mode', 'must be "wait" or "cancel"');
	const timeoutMs = options.timeoutMs ?? p.leaseMs + 5000;
	const kbId = await p.knowledgeBaseId();
	const marked = await p.configs.update(p.configKey, (cur) =>
		cur.version === null
			? undefined
			: {
					...cur.doc,
					deleting: { since: new Date().toISOString(), mode },
					updated_at: new Date().toISOString(),
				},
	);
	const unmark = () =>
		p.configs
			.update(p.configKey, (cur) => {
				if (cur.version === null || !cur.doc.deleting) return undefined;
				const rest = { ...cur.doc };
				delete rest.deleting;
				return rest;
			})
			.catch(() => undefined);
	const deadline = Date.now() + timeoutMs;
	let waitedFor = 0;
	// After the first look, only the locks found held are read again: a sync starting later refuses
	// the marked base, and one that slipped in between is found when the lock is taken (every lease
	// then read again).
	let watched: string[] | undefined;
	for (let first = true; ; first = false) {
		const running = await heldLocks(p.locks, watched);
		if (first) waitedFor = running.length;
		watched = running.flatMap((r) => (r.part === null ? [] : [r.part]));
		if (running.length === 0) {
			try {
				const deleted = await locked(p.locks, undefined, 'delete', async (sessions) =>
					deleteAll(p, kbId, sessions),
				);
				return { baseId: p.baseId, deleted, waitedFor };
			} catch (error) {
				if (!(error instanceof SyncRunningError)) {
					if (marked.written) await unmark();
					throw error;
				}
				watched = undefined;
			}
		}
		if (Date.now() > deadline) {
			if (marked.written) await unmark();
			const lease = running[0];
			throw runningError(p, lease?.part ?? null, lease?.lease);
		}
		await sleep(Math.min(250, Math.max(10, deadline - Date.now())));
	}
}

/**
 * The connected store a conversation's vectors are deleted from: the one connected here when the base
 * keeps its vectors in a connected store (its metadata says so once something was embedded), none when
 * it keeps them in its embedded index. A base whose vectors live in a connected store can only forget
 * with a store connected: otherwise its log would go and the store would keep vectors nothing names.
 */
export async function storeToForgetFrom(
	p: BaseParts,
	kbId: string,
): Promise<ExternalIndex | undefined> {
	const meta = await p.metadata.read(knowledgeBaseMetadataKey(kbId, p.keyPrefix));
	const kept = meta.version !== null && meta.doc.dimensions !== null ? meta.doc.vector_store : null;
	if (kept !== 'external') return undefined;
	const external = p.external();
	if (!external)
		throw new InvalidOptionError(
			'vectorStore',
			`memory base "${p.baseId}" keeps its vectors in a connected vector store: forget the conversation from the Memory Base node with that store connected (or connect it to the LLM Memory Manager's Forget User), so its vectors go too`,
		);
	return external;
}

/** How a Forget runs (see forget). */
export interface ForgetOptions {
	storeMustHold?: boolean;
	/**
	 * false: the base-wide indexes' unlisted parts are left for a later sweep (Forget User forgets a
	 * user's conversations one by one and sweeps them with its last one).
	 */
	sweepBaseWide?: boolean;
}

/**
 * Forgets one conversation (the right to be forgotten): its vectors and chunk texts (embedded
 * segments holding them are rewritten without them; a connected store is asked to delete them by
 * ID), then its capture log and sealed blocks. Holds the session's lock, so no sync of it runs
 * meanwhile; a capture that arrives afterwards starts a new log. A connected store that cannot
 * delete (or whose delete fails) is an error before anything is removed, so the log that names its
 * chunks is kept. With `storeMustHold` (Forget User, whose store input may be another base's store),
 * a connected store that holds none of the conversation's chunks, although its log says some were
 * embedded, is an error too: the vectors are elsewhere.
 */
export async function forget(
	p: BaseParts,
	sessionId: string,
	options: ForgetOptions = {},
): Promise<ForgetResult> {
	const id = validateId('session_id', sessionId);
	const config = await p.config();
	const result: ForgetResult = {
		baseId: p.baseId,
		sessionId: id,
		messages: 0,
		vectors: 0,
		lexical: 0,
		deleted: [],
		rewritten: [],
	};
	if (!config) return result;
	const external = await storeToForgetFrom(p, config.kb_id);
	return locked(p.locks, id, 'forget', async () => {
		const captured = await capturedChunks(p, config.kb_id, id);
		result.messages = captured.messages;
		if (external) {
			if (options.storeMustHold) await refuseAnotherStore(p, config.kb_id, id, external);
			const ids = captured.chunkIds;
			if (!(await external.remove(ids, { strict: true })))
				throw new InvalidOptionError(
					'vectorStore',
					'the connected vector store cannot delete by ID, so this conversation cannot be forgotten from it',
				);
			result.vectors = ids.length;
		}
		const indexes = await BaseIndexes.open(p, config);
		const users = captured.users;
		const sweep = { olderThanMs: p.leaseMs, wide: options.sweepBaseWide !== false };
		if (!external) result.vectors = await indexes.forgetVectors(id, users, result, sweep);
		result.lexical = await indexes.forgetLexical(id, users, undefined, result, sweep);
		const folder = p.sessionPrefix(id);
		const lease = p.sessionLeaseKey(id);
		await deleteUnder(p, folder, lease, (key) => result.deleted.push(key));
		// A fold or a seal that read the log before it went may have put its chunks back meanwhile (it
		// takes out again what it put back once it finds the log gone, which it may not have yet).
		result.lexical += await indexes.forgetLexical(id, users, undefined, result);
		result.rewritten = [...new Set(result.rewritten)];
		return result;
	});
}

/** Refuses a connected store that holds none of a conversation its log says was embedded. */
async function refuseAnotherStore(
	p: BaseParts,
	kbId: string,
	sessionId: string,
	external: ExternalIndex,
): Promise<void> {
	const [{ log }, meta] = await Promise.all([
		readLog(p, sessionId),
		p.metadata.read(knowledgeBaseMetadataKey(kbId, p.keyPrefix)),
	]);
	const dims = meta.version === null ? null : meta.doc.dimensions;
	if (log.total_processed === 0 || dims === null) return;
	if (!(await external.holdsAny(dims, sessionId)))
		throw new InvalidOptionError(
			'vectorStore',
			`the connected vector store holds none of conversation "${sessionId}" of memory base "${p.baseId}", which its log says was embedded: connect the store this Memory Base keeps its vectors in (its Memory Base node's), or forget the conversation from that node`,
		);
}

/**
 * Deletes every object under a folder of the base except `keep` (the lease its caller holds), logs
 * before their sealed blocks so a reader never finds a log naming a missing block, then any temporary
 * copies there; `deleted` hears of each key deleted (a base of many conversations deletes millions).
 */
async function deleteUnder(
	p: BaseParts,
	prefix: string,
	keep: string,
	deleted: (key: string) => void,
): Promise<void> {
	const isLog = (key: string) => key.endsWith('/log.json');
	// Two listings of keys alone, page by page: logs, then the rest.
	for (const logs of [true, false])
		await forEachKey(p.storage, prefix, async (key) => {
			if (key === keep || isLog(key) !== logs) return;
			if (logs) await p.logs.delete(key);
			else await p.blocks.deleteWriteOnce(key);
			deleted(key);
		});
	for (const key of (await p.storage.sweep?.(prefix, 0)) ?? []) deleted(key);
}

/** Clears an index; returns how many objects went (its manifest only if it was stored). */
async function cleared(
	p: BaseParts,
	index: { manifestKey: string; clear(): Promise<number> },
): Promise<number> {
	const had = await documentStored(p.storage, index.manifestKey);
	return (await index.clear()) - (had ? 0 : 1);
}

/**
 * Deletes everything of the base but the lease its caller holds (released after); returns how many
 * objects went, that lease included.
 */
async function deleteAll(p: BaseParts, kbId: string, sessions: Parts): Promise<number> {
	let deleted = 0;
	const count = () => void deleted++;
	const external = p.external();
	if (external) {
		const removal = batchedRemoval(external);
		for await (const s of sessions) await removal.add((await capturedChunks(p, kbId, s)).chunkIds);
		await removal.done();
	}
	// Configuration first: a capture or sync that still holds it fails its compare-and-swap.
	await p.configs.delete(p.configKey);
	deleted++;
	deleted += await cleared(p, p.index(kbId));
	deleted += await cleared(p, p.lexical());
	const kbPrefix = knowledgeBasePrefix(kbId, p.keyPrefix);
	await forEachKey(p.storage, kbPrefix, async (key) => {
		await p.metadata.delete(key);
		count();
	});
	await deleteUnder(p, memoryBasePrefix(p.baseId, p.keyPrefix), p.baseLeaseKey, count);
	deleted += ((await p.storage.sweep?.(kbPrefix, 0)) ?? []).length;
	return deleted + 1;
}
