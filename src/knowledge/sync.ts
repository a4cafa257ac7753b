// Sync: what a session captured past its cursor goes into the knowledge base, then the cursor moves,
// last, and only if nobody moved it meanwhile. Failures leave the cursor: the retry re-ingests from it
// and its chunks replace their earlier copies (chunk IDs derive from message IDs).
import { FirstListed } from '../common/first-of';
import { MemoryBaseDeletingError, SyncCancelledError } from '../errors';
import { normaliseRows, SEGMENT_MAX_VECTORS } from '../indexes';
import type { IndexedChunk } from '../indexes';
import { validateId } from '../keys/ids';
import type { HeldLease } from '../store/lease';
import { locked } from '../store/lease-locks';
import { compareFolders } from '../store/storage';
import { BaseIndexes } from './base-indexes';
import { chunksOf, lexicalChunks, mergeProcessed, readMessages } from './capture-log';
import type { BaseParts } from './parts';
import { emptyLog } from './records';
import type { CapturedMessage, SealedRange, SessionLog } from './records';
import { noteClosed } from './closings';
import { foldedTo, foldListed, unfolded } from './log-folding';
import { configure, ensureKnowledgeBase, recordDimensions } from './settings';
import { upgradeIfIdle } from './upgrade';
import type { Embedder, SessionSyncResult, SyncResult } from './types';

/** Conversations a whole-base result lists one by one, at most; the rest are counted. */
export const LISTED_SESSIONS = 1000;

/**
 * A sync's result as it goes: every conversation counted, the first LISTED_SESSIONS in folder order
 * listed, whatever order the walk met them in (a result of 100,000 conversations would hold them all).
 */
export class SyncTally {
	private messages = 0;
	private chunks = 0;
	private readonly listed = new FirstListed<SessionSyncResult>(LISTED_SESSIONS, (a, b) =>
		compareFolders(a.sessionId, b.sessionId),
	);

	constructor(private readonly baseId: string) {}

	add(s: SessionSyncResult): void {
		this.listed.push(s);
		this.messages += s.messages;
		this.chunks += s.chunks;
	}

	get done(): SyncResult {
		const { baseId, messages, chunks, listed } = this;
		return { baseId, sessions: listed.sorted(), messages, chunks, conversations: listed.count };
	}
}

/**
 * Ingests what is pending, whatever the threshold: one session, or every session of the base.
 * SyncRunningError when a sync of that session, or of the whole base, is running.
 */
export async function sync(
	p: BaseParts,
	options: { sessionId?: string } = {},
): Promise<SyncResult> {
	const sessionId =
		options.sessionId === undefined ? undefined : validateId('session_id', options.sessionId);
	const embedder = p.embedder('Sync');
	const read = await p.config();
	if (read?.deleting) throw new MemoryBaseDeletingError(p.baseId);
	// A base in an older layout is upgraded before its first sync writes (upgrade.ts).
	const config = await upgradeIfIdle(p, read);
	const operation = sessionId === undefined ? 'sync of the whole base' : 'sync';
	return locked(p.locks, sessionId, operation, async (sessions, leases) => {
		const kbId = config?.kb_id ?? (await configure(p)).kb_id;
		await ensureKnowledgeBase(p, kbId);
		// A whole-base sync also folds the open logs, so searches read none until captures open them.
		if (sessionId === undefined) await foldListed(p);
		const tally = new SyncTally(p.baseId);
		for await (const s of sessions)
			tally.add(
				await ingest(p, s, kbId, embedder, leases.whole ?? (leases.parts.get(s) as HeldLease)),
			);
		return tally.done;
	});
}

/** Between batches: the lock is still ours, and the base is not being deleted with cancellation. */
async function checkpoint(p: BaseParts, sessionId: string, lease: HeldLease): Promise<void> {
	lease.check();
	const config = await p.config();
	if (config?.deleting?.mode === 'cancel') throw new SyncCancelledError(p.baseId, sessionId);
}

/** Embeds chunks in batches and hands them to the index; returns when the index confirmed them all. */
async function embedAll(
	p: BaseParts,
	sessionId: string,
	kbId: string,
	chunks: IndexedChunk[],
	embedder: Embedder,
	lease: HeldLease,
	open: () => Promise<BaseIndexes>,
): Promise<void> {
	const external = p.external();
	const indexes = external ? undefined : await open();
	let dims: number | undefined;
	let held: IndexedChunk[] = [];
	let heldRows: number[][] = [];
	const flush = async () => {
		if (held.length === 0) return;
		await indexes?.addVectors(held, heldRows);
		held = [];
		heldRows = [];
	};
	for (let i = 0; i < chunks.length; i += p.batchSize) {
		await checkpoint(p, sessionId, lease);
		const batch = chunks.slice(i, i + p.batchSize);
		let rows: number[][];
		try {
			rows = await embedder.embedDocuments(batch.map((c) => c.text));
		} catch (error) {
			// What was embedded is kept (the retry replaces it: same chunk IDs); the cursor stays.
			await flush().catch(() => {});
			throw error;
		}
		const checked = normaliseRows(rows, batch.length, dims); // count, dimensions, numbers
		dims ??= checked.length / batch.length;
		if (i === 0) await recordDimensions(p, kbId, dims);
		if (external) await external.add(batch, rows);
		else {
			held.push(...batch);
			heldRows.push(...rows);
			if (held.length >= SEGMENT_MAX_VECTORS) await flush();
		}
	}
	await flush();
}

/**
 * Whether the log still holds what a merge covered as it was: the blocks it replaces, and its inline
 * part still inline (a capture meanwhile may have sealed it into a block of its own).
 */
function stillMergeable(d: SessionLog, merged: { block: SealedRange; replaces: SealedRange[] }) {
	const keys = new Set(d.sealed.map((b) => b.key));
	if (!merged.replaces.every((b) => keys.has(b.key))) return false;
	const inlineFrom = merged.replaces.length
		? merged.replaces[merged.replaces.length - 1].last + 1
		: merged.block.first;
	if (inlineFrom > merged.block.last) return true;
	return d.messages[0]?.seq === inlineFrom && d.messages.some((m) => m.seq === merged.block.last);
}

/** The log with its cursor moved to `to`, and `merged` swapped in for the blocks it replaces. */
function advanced(
	d: SessionLog,
	to: number,
	last: CapturedMessage,
	merged: { block: SealedRange; replaces: SealedRange[] } | undefined,
	now: string,
	from: number,
): SessionLog {
	let { sealed, messages } = d;
	if (merged && stillMergeable(d, merged)) {
		const gone = new Set(merged.replaces.map((b) => b.key));
		const at = d.sealed.findIndex((b) => gone.has(b.key));
		sealed = d.sealed.filter((b) => !gone.has(b.key));
		sealed.splice(at < 0 ? sealed.length : at, 0, merged.block);
		messages = d.messages.filter((m) => m.seq > merged.block.last);
	}
	return {
		...d,
		cursor: to,
		cursor_message_id: last.id,
		total_processed: d.total_processed + (to - from),
		last_sync_at: now,
		updated_at: now,
		sealed,
		messages,
		// The lexical index holds them now (added before this swap): a merge may seal them. With nothing
		// captured since the sync began the log closes in this swap (no capture slips between); the
		// base-wide index unlists it with this process's next write of it (closings.ts).
		...foldedTo(d, to, true),
	};
}

/**
 * One session's sync, its lock held. Takes the range (cursor, last captured] at its start; messages
 * captured meanwhile wait for the next sync. Only once the index confirmed every chunk is the cursor
 * moved (one compare-and-swap of the log, the last write), and only if nobody moved it meanwhile.
 * `open` gives the indexes it writes to (Regenerate's defer the base-wide index: refill.ts).
 */
export async function ingest(
	p: BaseParts,
	sessionId: string,
	kbId: string,
	embedder: Embedder,
	lease: HeldLease,
	open: () => Promise<BaseIndexes> = () => BaseIndexes.open(p),
): Promise<SessionSyncResult> {
	const key = p.logKey(sessionId);
	const start = await p.logs.read(key);
	const log = start.version === null ? emptyLog(sessionId, new Date().toISOString()) : start.doc;
	const from = log.cursor;
	const to = log.next_seq - 1;
	const result = (messages: number, chunks: number, after: SessionLog): SessionSyncResult => ({
		sessionId,
		messages,
		chunks,
		from,
		cursor: after.cursor,
		totalProcessed: after.total_processed,
		lastSyncAt: after.last_sync_at,
		pending: after.next_seq - 1 - after.cursor,
	});
	if (to <= from) return result(0, 0, log);
	const messages = await readMessages(p, log, from + 1, to);
	const chunks = chunksOf(p, kbId, sessionId, messages);
	await embedAll(p, sessionId, kbId, chunks, embedder, lease, open);
	// The unfolded ones into the lexical index's manifest (a search read them from the log until now),
	// so the log may seal them. A log without a lexical state gets all of them again (its captures
	// indexed them before their numbers were final). Idempotent: a chunk's copy replaces the earlier one.
	const lexical = unfolded(messages, log.lexical?.through ?? 0);
	// Its listings then say the manifests hold it up to `to`: a search reads them once (open-sources.ts).
	const s = log.lexical;
	const listed = s?.open
		? [{ session_id: sessionId, gen: s.gen, through: to, users: s.users, anon: s.anon }]
		: [];
	if (lexical.length > 0)
		await (
			await open()
		).addLexical(lexicalChunks(p, sessionId, lexical), {
			moved: listed,
		});
	// Every chunk is confirmed by the index. The cursor goes last, if the lock is still ours.
	await checkpoint(p, sessionId, lease);
	await lease.confirm();
	const merged = await mergeProcessed(p, sessionId, log, to);
	const { after, moved } = await moveCursor(p, log, to, messages[messages.length - 1], merged);
	await dropUnlisted(p, after, merged);
	return moved ? result(messages.length, chunks.length, after) : result(0, 0, after);
}

/**
 * The cursor swap: the log with its cursor at `to`, if nobody moved it since `log` was read (else
 * `moved` is false and nothing is written). A log it closed is unlisted later (closings.ts).
 */
async function moveCursor(
	p: BaseParts,
	log: SessionLog,
	to: number,
	last: CapturedMessage,
	merged: { block: SealedRange; replaces: SealedRange[] } | undefined,
): Promise<{ after: SessionLog; moved: boolean }> {
	const sessionId = log.session_id;
	let moved = true;
	let before: SessionLog = log;
	const now = new Date().toISOString();
	const committed = await p.logs.update(p.logKey(sessionId), (cur) => {
		if (cur.version === null) throw new SyncCancelledError(p.baseId, sessionId);
		if (cur.doc.epoch !== log.epoch || cur.doc.cursor !== log.cursor) {
			moved = false;
			return undefined;
		}
		before = cur.doc;
		return advanced(cur.doc, to, last, merged, now, log.cursor);
	});
	const after = committed.current.doc;
	if (moved && before.lexical?.open && after.lexical?.open === false)
		noteClosed(p, { session_id: sessionId, gen: after.lexical.gen });
	return { after, moved };
}

/** After the swap: the blocks a merge replaced are gone from the log, or the merge's block is unused. */
async function dropUnlisted(
	p: BaseParts,
	after: SessionLog,
	merged: { block: SealedRange; replaces: SealedRange[] } | undefined,
): Promise<void> {
	if (!merged) return;
	const listed = new Set(after.sealed.map((b) => b.key));
	const unused = listed.has(merged.block.key) ? merged.replaces : [merged.block];
	for (const b of unused)
		if (!listed.has(b.key)) await p.blocks.deleteWriteOnce(b.key).catch(() => {});
}
