// Capture: one stride (one execution's outputs for one conversation) appended to the session's log,
// which is all a capture writes as a rule: the lexical index reads a log's newest messages from the
// log itself (log-folding.ts). The log keeps at most SEAL_AT messages inline; older ones go to
// write-once blocks (and into the lexical index) first, so a capture writes a bounded log however
// much is pending.
import type { IndexedChunk, LexicalManifest } from '../indexes';
import { BaseIndexes } from './base-indexes';
import { withRule } from '../store/retention';
import { prepare, RECENT_RUNS } from './capture-input';
import type { Run, Stride } from './capture-input';
import { lexicalChunks, writeBlock } from './capture-log';
import { clockOf, expireSession, isLogExpired } from './expiry';
import { entryOf, fold, toFold, opening, unfold, unfolded } from './log-folding';
import type { OpenEntry } from './log-folding';
import type { BaseParts } from './parts';
import { emptyLog } from './records';
import type { CapturedMessage, LexicalState, SealedRange, SessionLog } from './records';
import type { Versioned } from '../store/document-store';
import { configure } from './settings';
import { needsUpgrade, upgradeIfIdle } from './upgrade';
import { SEAL_AT, SEAL_AT_BYTES } from './types';
import type { CaptureInput, CaptureResult } from './types';

/** What `pending` means when no embedding model is connected (see CaptureResult.pendingNote). */
export const PENDING_WITHOUT_EMBEDDER =
	'pending counts messages not yet embedded: with no embedding model connected they are searchable by words already, and are embedded once one is connected (Sync Now, or the next capture past the threshold)';

/** Whether this run's stride is in the log already (a retried execution). */
function capturedBefore(log: SessionLog, stride: Run) {
	const { runId, digest, messages } = stride;
	if (log.runs?.some((r) => r.run_id === runId && r.digest === digest)) return true;
	// Logs written before runs were recorded: compare the run's inline messages.
	const ofRun = log.messages.filter((m) => m.run_id === runId);
	return ofRun.length === messages.length && ofRun.every((m, i) => m.text === messages[i].text);
}

/** When the log last took a capture (older logs: their newest message, or their last write). */
function lastCaptureOf(log: SessionLog): string {
	return (
		log.runs?.at(-1)?.at ?? log.messages.at(-1)?.created_at ?? log.captured_at ?? log.updated_at
	);
}

/** Whether the log holds a run: by its run ID, or by a chat message ID its messages carry. */
function holds(log: SessionLog, run: Run, chatIds: Set<unknown>): boolean {
	return capturedBefore(log, run) || run.messages.some((m) => chatIds.has(m.metadata?.messageId));
}

/**
 * The earlier turns to capture now: newest first back to the first the log holds or one said before
 * its last capture (captured then, or before long-term memory was on). None without a log: a
 * conversation never captured, or forgotten, is not filled from its chat history.
 */
function missing(log: SessionLog | null, earlier: Run[]): Run[] {
	if (!log || earlier.length === 0) return [];
	const last = lastCaptureOf(log);
	const chatIds = new Set(log.messages.map((m) => m.metadata?.messageId).filter((id) => id));
	const out: Run[] = [];
	for (let i = earlier.length - 1; i >= 0; i--) {
		const run = earlier[i];
		if (holds(log, run, chatIds) || (run.saidAt ?? '') <= last) break;
		out.unshift(run);
	}
	return out;
}

/** The runs' messages as the log stores them, numbered from `first`. */
function messagesAt(stride: Stride, runs: Run[], first: number): CapturedMessage[] {
	return runs
		.flatMap((run) => run.messages.map((m, i) => ({ run, m, id: run.ids[i] })))
		.map(({ run, m, id }, i) => ({
			seq: first + i,
			id,
			run_id: run.runId,
			text: m.text,
			created_at: stride.now,
			...(stride.userId !== undefined ? { user_id: stride.userId } : {}),
			...(m.role !== undefined ? { role: m.role } : {}),
			...(m.metadata !== undefined ? { metadata: m.metadata } : {}),
		}));
}

/** The log's users with this capture's (a log from before they were kept keeps none: its messages say). */
function withUser(log: SessionLog, userId: string | undefined): Pick<SessionLog, 'users'> {
	if (log.users === undefined) return {};
	if (userId === undefined || log.users.includes(userId)) return { users: log.users };
	return { users: [...log.users, userId] };
}

const bytesOf = (messages: readonly CapturedMessage[]) =>
	messages.reduce((n, m) => n + Buffer.byteLength(m.text, 'utf8'), 0);

/**
 * Seals the log's inline messages into a write-once block, and puts those the lexical index does not
 * hold into it (`folding`), side by side, with the listing `list` asks for; or only lists. A seal
 * also lists the log as held up to its last sealed message. Returns the block and the lexical
 * manifests as stored, when written.
 */
async function sealAndList(
	p: BaseParts,
	log: SessionLog,
	seal: LexicalState | undefined,
	list: OpenEntry | undefined,
	folding: IndexedChunk[],
): Promise<[SealedRange | undefined, LexicalManifest[] | undefined]> {
	const last = log.messages[log.messages.length - 1]?.seq ?? 0;
	const entry = seal ? entryOf(log.session_id, { ...seal, through: last }, Date.now()) : list;
	const listing = async () =>
		(await BaseIndexes.open(p)).addLexical(folding, entry ? { open: [entry] } : {});
	return Promise.all([
		seal ? writeBlock(p, log.session_id, log.messages) : undefined,
		folding.length > 0 || entry ? listing() : undefined,
	]);
}

/** What the attempts of one append did: kept across compare-and-swap retries. */
interface Attempts {
	runs: Run[];
	stored: CapturedMessage[];
	expired: boolean;
	written: SealedRange[];
	folded: Array<{ log: string; chunks: IndexedChunk[] }>;
	/** The manifests the last attempt wrote (it listed the log, or folded into them). */
	manifests?: LexicalManifest[];
}

/**
 * The log after one attempt of an append (undefined: nothing to write), over the version `cur` the
 * swap is conditioned on: the earlier turns it lacks, then the stride unless the log holds it; a full
 * log seals first, and a log this capture opens is listed first.
 */
async function appended(
	p: BaseParts,
	stride: Stride,
	cur: Versioned<SessionLog>,
	expiredAt: Date | undefined,
	a: Attempts,
): Promise<SessionLog | undefined> {
	const { sessionId, now } = stride;
	const log = cur.version === null ? emptyLog(sessionId, now) : cur.doc;
	a.stored = [];
	// Judged on the version this swap is conditioned on, not on a copy this process kept.
	a.expired = expiredAt !== undefined && cur.version !== null && isLogExpired(log, expiredAt);
	if (a.expired) return undefined;
	a.runs = [
		...missing(cur.version === null ? null : log, stride.earlier),
		...(stride.messages.length === 0 || capturedBefore(log, stride) ? [] : [stride]),
	];
	if (a.runs.length === 0) return undefined;
	a.stored = messagesAt(stride, a.runs, log.next_seq);
	const { state, list } = opening(log, stride.userId);
	let { sealed, messages } = log;
	const full = messages.length + a.stored.length > SEAL_AT;
	const seal =
		messages.length > 0 && (full || bytesOf(messages) + bytesOf(a.stored) > SEAL_AT_BYTES);
	const folding = seal ? lexicalChunks(p, sessionId, unfolded(log.messages, state.through)) : [];
	a.folded.push({ log: log.created_at, chunks: folding });
	const [block, listed] = await sealAndList(p, log, seal ? state : undefined, list, folding);
	a.manifests = listed ?? a.manifests;
	if (block) {
		a.written.push(block);
		sealed = [...sealed, block];
		messages = [];
	}
	const runs = a.runs.map((r) => ({ run_id: r.runId, digest: r.digest, at: now }));
	const next: SessionLog = {
		...log,
		next_seq: log.next_seq + a.stored.length,
		updated_at: now,
		sealed,
		messages: [...messages, ...a.stored],
		runs: [...(log.runs ?? []), ...runs].slice(-RECENT_RUNS),
		lexical: { ...state, through: Math.max(state.through, block?.last ?? 0) },
		...withUser(log, stride.userId),
	};
	delete next.captured_at;
	// A rule counts from the last capture, which only a log with a rule records.
	const ruled = withRule(next, stride.expireAfterDays);
	return ruled.expire_after_days === undefined ? ruled : { ...ruled, captured_at: now };
}

/**
 * Appends a stride (and the earlier turns its log lacks) to a session's log, in one compare-and-swap.
 * Before it: the lexical index lists the log when this capture opens it (or adds a user to it), and a
 * full log seals its inline messages first; neither happens on most captures. Returns the log, what
 * it stored, and open logs to fold when the manifest lists too many.
 */
async function append(
	p: BaseParts,
	stride: Stride,
	expiredAt?: Date,
): Promise<{
	log: SessionLog;
	stored: CapturedMessage[];
	crowded: string[];
	caughtUp: number;
	expired?: true;
}> {
	const key = p.logKey(stride.sessionId);
	const a: Attempts = { runs: [], stored: [], expired: false, written: [], folded: [] };
	const result = await p.logs.update(
		key,
		(cur) => appended(p, stride, cur, expiredAt, a),
		p.logs.lastKnown(key),
	);
	const log = result.current.version === null ? emptyLog(stride.sessionId, '') : result.current.doc;
	await dropLosingAttempts(p, stride.sessionId, log, a.written, a.folded);
	const crowded = toFold(
		(a.manifests ?? []).map((m) => m.open ?? []),
		stride.sessionId,
	);
	if (a.expired) return { log, stored: [], crowded: [], caughtUp: 0, expired: true };
	if (!result.written) return { log, stored: [], crowded, caughtUp: 0 };
	return { log, stored: a.stored, crowded, caughtUp: a.runs.filter((r) => r !== stride).length };
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
	// Both are awaited even when one fails: a capture never returns while one of its writes may land.
	const [configured, appendedFirst] = await Promise.allSettled([
		configure(p, { ...settings, expiring: (stride.expireAfterDays ?? 0) > 0 }),
		append(p, stride, now),
	]);
	if (configured.status === 'rejected') throw configured.reason;
	if (appendedFirst.status === 'rejected') throw appendedFirst.reason;
	const [config, first] = [configured.value, appendedFirst.value];
	let appended = first;
	// Captures past their Expire After go before this one lands, so it starts the log afresh. (A sync
	// of the conversation running right then keeps them, and this capture renews them: rare.)
	if (appended.expired) {
		await expireSession(p, stride.sessionId, now);
		appended = await append(p, stride);
	}
	const { log, stored, crowded, caughtUp } = appended;
	// This capture listed one open log too many, or enough were listed long: it folds them (toFold). A
	// failed fold loses nothing (the logs stay open and listed); the next capture that lists one retries.
	if (crowded.length > 0) await fold(p, crowded).catch(() => {});
	// A base in an older layout is upgraded by the first capture that finds it idle. One cut short
	// leaves it readable as it stands, and the next use goes on with it: the capture is in either way.
	if (needsUpgrade(config)) await upgradeIfIdle(p, config).catch(() => undefined);
	const out: CaptureResult = {
		sessionId: stride.sessionId,
		captured: stored.length,
		ids: stored.map((m) => m.id),
		...(caughtUp > 0 ? { caughtUp } : {}),
		total: log.next_seq - 1,
		pending: log.next_seq - 1 - log.cursor,
		processed: log.total_processed,
		threshold: config.threshold,
		autoCapture: config.auto_capture,
	};
	const canSync = p.options.embedder !== undefined;
	if (!canSync && out.pending > 0) out.pendingNote = PENDING_WITHOUT_EMBEDDER;
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
