// Capture: one stride (one execution's outputs for one conversation) appended to the session's log,
// which is all a capture writes as a rule: the lexical index reads a log's newest messages from the
// log itself (log-folding.ts). The log keeps at most SEAL_AT messages inline; older ones go to
// write-once blocks (and into the lexical index) first, so a capture writes a bounded log however
// much is pending.
import { createHash, randomUUID } from 'node:crypto';

import { InvalidInputError } from '../errors';
import { validateDerivedId, validateId } from '../keys/ids';
import { checkExpireAfterDays, withRule } from '../store/retention';
import { lexicalChunks, writeBlock } from './capture-log';
import { clockOf, expireSession, isLogExpired } from './expiry';
import type { LexicalManifest, OpenLog } from './lexical/manifest';
import { FOLD_BATCH, longestListed, OPEN_MAX } from './lexical/open-logs';
import { fold, opening, unfold, unfolded } from './log-folding';
import type { BaseParts } from './parts';
import { emptyLog } from './records';
import type { CapturedMessage, SealedRange, SessionLog } from './records';
import { configure } from './settings';
import { SEAL_AT, SEAL_AT_BYTES } from './types';
import type { CaptureInput, CaptureMessageInput, CaptureResult } from './types';
import type { IndexedChunk } from './vector-segment';

/** Recent captures a log remembers, to recognise a retried execution capturing the same again. */
const RECENT_RUNS = 16;
/** The most bytes of one message's metadata, as JSON. */
export const MAX_METADATA_BYTES = 4096;

function checkMetadata(value: unknown, at: string): Record<string, unknown> | undefined {
	if (value === undefined) return undefined;
	if (typeof value !== 'object' || value === null || Array.isArray(value))
		throw new InvalidInputError(at, 'must be an object');
	let json: string;
	try {
		json = JSON.stringify(value);
	} catch {
		throw new InvalidInputError(at, 'must be plain JSON');
	}
	if (Buffer.byteLength(json, 'utf8') > MAX_METADATA_BYTES)
		throw new InvalidInputError(at, `must be at most ${MAX_METADATA_BYTES} bytes as JSON`);
	return JSON.parse(json) as Record<string, unknown>;
}

/** The stride's messages, checked: `texts` then `messages`, empty texts left out. */
function strideOf(input: CaptureInput): CaptureMessageInput[] {
	const texts = input.texts ?? [];
	if (!Array.isArray(texts) || texts.some((t) => typeof t !== 'string'))
		throw new InvalidInputError('texts', 'must be an array of strings');
	const messages = input.messages ?? [];
	if (!Array.isArray(messages)) throw new InvalidInputError('messages', 'must be an array');
	const all = [
		...texts.map((text) => ({ text })),
		...messages.map((m, i) => {
			if (typeof m?.text !== 'string')
				throw new InvalidInputError(`messages[${i}].text`, 'must be a string');
			if (m.role !== undefined && typeof m.role !== 'string')
				throw new InvalidInputError(`messages[${i}].role`, 'must be a string');
			return {
				text: m.text,
				role: m.role,
				metadata: checkMetadata(m.metadata, `messages[${i}].metadata`),
			};
		}),
	];
	return all.filter((m) => m.text.trim() !== '');
}

function digestOf(stride: readonly CaptureMessageInput[]): string {
	return createHash('sha256')
		.update(JSON.stringify(stride.map((m) => [m.text, m.role ?? null, m.metadata ?? null])))
		.digest('hex');
}

/** One capture, checked and prepared: its messages get their IDs and time before any write. */
interface Stride {
	sessionId: string;
	/** Expire After (days) the log stores (see CaptureInput.expireAfterDays). */
	expireAfterDays?: number;
	runId: string;
	userId?: string;
	messages: CaptureMessageInput[];
	ids: string[];
	now: string;
	digest: string;
}

/** Whether this run's stride is in the log already (a retried execution). */
function capturedBefore(log: SessionLog, stride: Stride) {
	const { runId, digest, messages } = stride;
	if (log.runs?.some((r) => r.run_id === runId && r.digest === digest)) return true;
	// Logs written before runs were recorded: compare the run's inline messages.
	const ofRun = log.messages.filter((m) => m.run_id === runId);
	return ofRun.length === messages.length && ofRun.every((m, i) => m.text === messages[i].text);
}

/** The stride's messages as the log stores them, numbered from `first`. */
function messagesAt(stride: Stride, first: number): CapturedMessage[] {
	return stride.messages.map((m, i) => ({
		seq: first + i,
		id: stride.ids[i],
		run_id: stride.runId,
		text: m.text,
		created_at: stride.now,
		...(stride.userId !== undefined ? { user_id: stride.userId } : {}),
		...(m.role !== undefined ? { role: m.role } : {}),
		...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
	}));
}

const bytesOf = (messages: readonly CapturedMessage[]) =>
	messages.reduce((n, m) => n + Buffer.byteLength(m.text, 'utf8'), 0);

/**
 * Seals the log's inline messages into a write-once block, and puts those the lexical index does not
 * hold into it (`folding`), side by side, with the listing `list` asks for; or only lists. Returns the
 * block and the lexical manifest as stored, when written.
 */
async function sealAndList(
	p: BaseParts,
	log: SessionLog,
	seal: boolean,
	list: OpenLog | undefined,
	folding: IndexedChunk[],
): Promise<[SealedRange | undefined, LexicalManifest | undefined]> {
	return Promise.all([
		seal ? writeBlock(p, log.session_id, log.messages) : undefined,
		folding.length > 0 || list
			? p
					.lexical()
					.add(folding, list ? { open: [list] } : {})
					.then((m) => m.doc)
			: undefined,
	]);
}

/**
 * Appends a stride to a session's log, in one compare-and-swap. Before it: the lexical index lists
 * the log when this capture opens it (or adds a user to it), and a full log seals its inline
 * messages first; neither happens on most captures. Returns the log, what it stored, and open logs
 * to fold when the manifest lists too many.
 */
async function append(
	p: BaseParts,
	stride: Stride,
	expiredAt?: Date,
): Promise<{ log: SessionLog; stored: CapturedMessage[]; crowded: string[]; expired?: true }> {
	const { sessionId, runId, now } = stride;
	let expired = false;
	const key = p.logKey(sessionId);
	const written: SealedRange[] = [];
	const folded: Array<{ log: string; chunks: IndexedChunk[] }> = [];
	let stored: CapturedMessage[] = [];
	let manifest: LexicalManifest | undefined;
	const result = await p.logs.update(
		key,
		async (cur) => {
			const log = cur.version === null ? emptyLog(sessionId, now) : cur.doc;
			stored = [];
			// Judged on the version this swap is conditioned on, not on a copy this process kept.
			expired = expiredAt !== undefined && cur.version !== null && isLogExpired(log, expiredAt);
			if (expired || stride.messages.length === 0 || capturedBefore(log, stride)) return undefined;
			stored = messagesAt(stride, log.next_seq);
			const { state, list } = opening(log, stride.userId);
			let { sealed, messages } = log;
			const full = messages.length + stored.length > SEAL_AT;
			const seal =
				messages.length > 0 && (full || bytesOf(messages) + bytesOf(stored) > SEAL_AT_BYTES);
			const folding = seal
				? lexicalChunks(p, sessionId, unfolded(log.messages, state.through))
				: [];
			folded.push({ log: log.created_at, chunks: folding });
			const [block, listed] = await sealAndList(p, log, seal, list, folding);
			manifest = listed ?? manifest;
			if (block) {
				written.push(block);
				sealed = [...sealed, block];
				messages = [];
			}
			const next: SessionLog = {
				...log,
				next_seq: log.next_seq + stored.length,
				updated_at: now,
				sealed,
				messages: [...messages, ...stored],
				runs: [...(log.runs ?? []), { run_id: runId, digest: stride.digest }].slice(-RECENT_RUNS),
				lexical: { ...state, through: Math.max(state.through, block?.last ?? 0) },
			};
			delete next.captured_at;
			// A rule counts from the last capture, which only a log with a rule records.
			const ruled = withRule(next, stride.expireAfterDays);
			return ruled.expire_after_days === undefined ? ruled : { ...ruled, captured_at: now };
		},
		p.logs.lastKnown(key),
	);
	const log = result.current.version === null ? emptyLog(sessionId, '') : result.current.doc;
	await dropLosingAttempts(p, sessionId, log, written, folded);
	const open = manifest?.open ?? [];
	const crowded = open.length > OPEN_MAX ? longestListed(open, FOLD_BATCH, sessionId) : [];
	if (expired) return { log, stored: [], crowded: [], expired: true };
	return { log, stored: result.written ? stored : [], crowded };
}

/** Cleans up after the attempts of an append that lost their compare-and-swap. */
async function dropLosingAttempts(
	p: BaseParts,
	sessionId: string,
	log: SessionLog,
	written: readonly SealedRange[],
	folded: ReadonlyArray<{ log: string; chunks: IndexedChunk[] }>,
): Promise<void> {
	// Their blocks are referenced by nothing.
	for (const b of written)
		if (!log.sealed.some((s) => s.key === b.key))
			await p.blocks.deleteWriteOnce(b.key).catch(() => {});
	// What one sealed of a log forgotten since (this capture started a new one) goes again.
	for (const f of folded) if (f.log !== log.created_at) await unfold(p, sessionId, f.chunks);
}

/** Checks a capture's input and prepares its stride (nothing is read or written yet). */
function prepare(input: CaptureInput, now: Date): Stride {
	const sessionId = validateId('session_id', input?.sessionId);
	const runId = validateDerivedId('run_id', String(input?.runId ?? ''));
	const userId = input.userId === undefined ? undefined : validateId('user_id', input.userId);
	const messages = strideOf(input);
	return {
		sessionId,
		runId,
		userId,
		messages,
		ids: messages.map(() => randomUUID()),
		now: now.toISOString(),
		digest: digestOf(messages),
		expireAfterDays: checkExpireAfterDays(input.expireAfterDays),
	};
}

/**
 * Appends one stride (this run's outputs for a session) to the session's capture log, beside a
 * conditional read of the configuration: as a rule one compare-and-swap of a bounded document, and
 * search finds the stride at once (the lexical index reads it from the log). The same run captured
 * again with the same messages (a retried execution) is not added twice. With auto capture on, an embedding model connected and the session's
 * pending count at or above the threshold, the session is then synced by `sync`; a sync that is
 * already running (or fails) leaves the stride pending (see syncError).
 */
export async function capture(
	p: BaseParts,
	input: CaptureInput,
	settings: { threshold?: number; autoCapture?: boolean },
	sync: (sessionId: string) => Promise<CaptureResult['sync']>,
): Promise<CaptureResult> {
	const now = clockOf(p);
	const stride = prepare(input, now);
	// The settings and the log are independent objects: read and written side by side, so a capture
	// costs about one request's time. (A base being deleted refuses the capture either way; a log
	// written meanwhile goes with the base, as the delete lists the sessions after taking their locks.)
	const [config, first] = await Promise.all([
		configure(p, { ...settings, expiring: (stride.expireAfterDays ?? 0) > 0 }),
		append(p, stride, now),
	]);
	let appended = first;
	// Captures past their Expire After go before this one lands, so it starts the log afresh. (A sync
	// of the conversation running right then keeps them, and this capture renews them: rare.)
	if (appended.expired) {
		await expireSession(p, stride.sessionId, now);
		appended = await append(p, stride);
	}
	const { log, stored, crowded } = appended;
	// This capture listed one open log too many: it folds the longest listed. A failed fold loses
	// nothing (the logs stay open and listed) and is tried again by the next capture that lists one.
	if (crowded.length > 0) await fold(p, crowded).catch(() => {});
	const out: CaptureResult = {
		sessionId: stride.sessionId,
		captured: stored.length,
		ids: stored.map((m) => m.id),
		total: log.next_seq - 1,
		pending: log.next_seq - 1 - log.cursor,
		processed: log.total_processed,
		threshold: config.threshold,
		autoCapture: config.auto_capture,
	};
	const canSync = p.options.embedder !== undefined;
	if (!config.auto_capture || !canSync || out.pending < config.threshold) return out;
	try {
		out.sync = await sync(stride.sessionId);
		if (out.sync) {
			out.pending = out.sync.pending;
			out.processed = out.sync.totalProcessed;
		}
	} catch (error) {
		out.syncError = error as Error;
	}
	return out;
}
