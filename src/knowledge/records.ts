// The JSON objects a memory base is stored as, and how each is read back (validated).
import { z } from 'zod';

import { CorruptDocumentError } from '../errors';
import { decodeJsonObject, encodeJson } from '../store/codec';
import { parse } from '../store/parse';
import { expireAfterDaysSchema } from '../store/retention';
import type { DocumentCodec } from '../store/document-store';

/** `memory_base/{base_id}/config.json`: the base's settings (threshold, auto capture, knowledge base). */
export interface MemoryBaseConfig {
	base_id: string;
	/** The knowledge base it ingests into (flagged `is_memory_base`). */
	kb_id: string;
	/** Pending messages of one session at which a capture ingests (with auto_capture). */
	threshold: number;
	auto_capture: boolean;
	created_at: string;
	updated_at: string;
	/** Set while Delete Memory Base runs: syncs stop (mode "cancel") or are waited for ("wait"). */
	deleting?: { since: string; mode: 'wait' | 'cancel' };
	/** Since when every capture also goes into the lexical index (bases older than it have none until Regenerate). */
	lexical_since?: string;
	/** Set by the first capture with an Expire After rule: searches then check the logs of their hits. */
	expiring?: boolean;
	/**
	 * How its indexes are laid out (layout.ts): one partition per user (and per conversation without
	 * one), or, for bases created before partitions (none), one index for the whole base; "moving"
	 * while an upgrade copies the one into the other.
	 */
	layout?: 'moving' | 'partitioned';
	/**
	 * The base-wide index beside the partitions (base-indexes.ts): every write of a partition also goes
	 * into it once it is "building" (an upgrade copies what was there before), and searches of every
	 * conversation read it once it is "ready". Bases from before it have none until their upgrade.
	 * `refill`: since when Regenerate refills it from the partitions (refill.ts); left by a Regenerate
	 * cut short, the next upgrade copies it anew.
	 */
	wide?: { state: 'building' | 'ready'; since: string; refill?: string };
}

/** One captured output: one message of a stride (one execution's outputs for one session). */
export interface CapturedMessage {
	/** 1, 2, 3 … per session, in capture order: the cursor is one of these. */
	seq: number;
	/** Random, stable: chunk IDs derive from it. */
	id: string;
	/** The execution (stride) it came from. */
	run_id: string;
	text: string;
	created_at: string;
	/** The user the conversation belongs to, when the capture named one. */
	user_id?: string;
	/** Who said it, as the caller gave it ("user", "assistant", …). */
	role?: string;
	/** The caller's reference to its source, returned by search. */
	metadata?: Record<string, unknown>;
}

/** A block of captured messages moved out of the log into a write-once object. */
export interface SealedRange {
	key: string;
	first: number;
	last: number;
}

/** A recent capture of a session: a retried execution capturing the same again is recognised by it. */
export interface RecentRun {
	run_id: string;
	/** SHA-256 (hex) of what it captured, in order. */
	digest: string;
	/** When it was captured (runs recorded before this was kept have none). */
	at?: string;
}

/**
 * How a capture log stands with the base's lexical index. Messages up to `through` are in the index's
 * manifest; later ones are always inline in the log, and a search reads them from it, found through
 * the manifest's list of open sources (indexes/lexical/open-sources.ts). Logs written before it have
 * none: every message they hold went into the index when captured (or goes at the next sync).
 */
export interface LexicalState {
	through: number;
	/** Whether the manifest lists the log (it was listed before it was opened). */
	open: boolean;
	/** Raised by each opening (never lowered, a time in ms at least): an older closing does not unlist it. */
	gen: number;
	/** Users of the messages captured since it was opened; null: too many to list. */
	users: string[] | null;
	/** Whether messages without a user were captured since it was opened (listed in its own partition). */
	anon?: boolean;
}

/**
 * `memory_base/{base_id}/sessions/{session_id}/log.json`: a session's capture log and its sync state
 * (one per session and base). Messages 1 … next_seq − 1 are captured; those up to `cursor` are in
 * the knowledge base. The oldest live in write-once `sealed` blocks, at most SEAL_AT inline, so a
 * capture rewrites a bounded log whatever is pending.
 */
export interface SessionLog {
	session_id: string;
	next_seq: number;
	/** The last processed message number (0: none): written last by a sync, only after the index confirmed it. */
	cursor: number;
	cursor_message_id: string | null;
	total_processed: number;
	last_sync_at: string | null;
	/** Raised by Regenerate: a sync that started before it never moves the cursor. */
	epoch: number;
	created_at: string;
	updated_at: string;
	sealed: SealedRange[];
	messages: CapturedMessage[];
	/** The last few captures, newest last (older logs have none). */
	runs?: RecentRun[];
	/** Expire After (days), counted from `captured_at`: see store/retention.ts and expiry.ts. */
	expire_after_days?: number;
	/** When the last capture was appended (syncs move `updated_at`, not this); logs with a rule have it. */
	captured_at?: string;
	/** Where the lexical index stands (older logs have none). */
	lexical?: LexicalState;
	/**
	 * Every user whose messages the log holds (its index partitions, with the conversation's own):
	 * kept by every capture since the log was created (older logs have none: their messages say).
	 */
	users?: string[];
}

/** A sealed block: `…/sessions/{session_id}/sealed/{first}-{last}-{random}.json`, never rewritten. */
export interface SealedMessages {
	session_id: string;
	first: number;
	last: number;
	messages: CapturedMessage[];
}

/** `knowledge_base/{kb_id}/embedding_metadata.json`: the knowledge base's vectors and chunking. */
export interface KnowledgeBaseMetadata {
	kb_id: string;
	/** True for a knowledge base a memory base created: general retrieval leaves it out. */
	is_memory_base: boolean;
	memory_base_id?: string;
	/** Where its vectors are: the embedded index here, or an external vector store. */
	vector_store: 'embedded' | 'external';
	/** Vector dimensions, known after the first ingestion. */
	dimensions: number | null;
	chunk_size: number;
	chunk_overlap: number;
	created_at: string;
	updated_at: string;
}

const timestamp = z.iso.datetime({ offset: true });
const seq = z.number().int().min(1);

const configSchema = z.looseObject({
	base_id: z.string().min(1),
	kb_id: z.string().min(1),
	threshold: z.number().int().min(1),
	auto_capture: z.boolean(),
	created_at: timestamp,
	updated_at: timestamp,
	deleting: z.looseObject({ since: timestamp, mode: z.enum(['wait', 'cancel']) }).optional(),
	lexical_since: timestamp.optional(),
	expiring: z.boolean().optional(),
	layout: z.enum(['moving', 'partitioned']).optional(),
	wide: z
		.looseObject({
			state: z.enum(['building', 'ready']),
			since: timestamp,
			refill: timestamp.optional(),
		})
		.optional(),
});

const messageSchema = z.looseObject({
	seq,
	id: z.string().min(1),
	run_id: z.string().min(1),
	text: z.string(),
	created_at: timestamp,
	user_id: z.string().min(1).optional(),
	role: z.string().optional(),
	metadata: z.record(z.string(), z.unknown()).optional(),
});

const sealedRangeSchema = z.looseObject({ key: z.string().min(1), first: seq, last: seq });

const logSchema = z.looseObject({
	session_id: z.string().min(1),
	next_seq: seq,
	cursor: z.number().int().min(0),
	cursor_message_id: z.string().min(1).nullable(),
	total_processed: z.number().int().min(0),
	last_sync_at: timestamp.nullable(),
	epoch: z.number().int().min(0),
	created_at: timestamp,
	updated_at: timestamp,
	sealed: z.array(sealedRangeSchema),
	messages: z.array(messageSchema),
	runs: z
		.array(
			z.looseObject({
				run_id: z.string().min(1),
				digest: z.string().min(1),
				at: timestamp.optional(),
			}),
		)
		.optional(),
	expire_after_days: expireAfterDaysSchema.optional(),
	captured_at: timestamp.optional(),
	lexical: z
		.looseObject({
			through: z.number().int().min(0),
			open: z.boolean(),
			gen: z.number().int().min(0),
			users: z.array(z.string().min(1)).nullable(),
			anon: z.boolean().optional(),
		})
		.optional(),
	users: z.array(z.string().min(1)).optional(),
});

const sealedSchema = z.looseObject({
	session_id: z.string().min(1),
	first: seq,
	last: seq,
	messages: z.array(messageSchema).min(1),
});

const metadataSchema = z.looseObject({
	kb_id: z.string().min(1),
	is_memory_base: z.boolean(),
	memory_base_id: z.string().min(1).optional(),
	vector_store: z.enum(['embedded', 'external']),
	dimensions: z.number().int().min(1).nullable(),
	chunk_size: z.number().int().min(1),
	chunk_overlap: z.number().int().min(0),
	created_at: timestamp,
	updated_at: timestamp,
});

/** A session log is consistent: messages in order after the sealed blocks, the cursor within them. */
function checkLog(key: string, log: SessionLog): SessionLog {
	let expected = 1;
	for (const s of log.sealed) {
		if (s.first !== expected || s.last < s.first)
			throw new CorruptDocumentError(key, `sealed block ${s.first}-${s.last} is out of order`);
		expected = s.last + 1;
	}
	for (const m of log.messages) {
		if (m.seq !== expected)
			throw new CorruptDocumentError(key, `message ${m.seq} where ${expected} was expected`);
		expected++;
	}
	if (expected !== log.next_seq)
		throw new CorruptDocumentError(
			key,
			`next_seq is ${log.next_seq}, the log ends at ${expected - 1}`,
		);
	if (log.cursor >= log.next_seq)
		throw new CorruptDocumentError(key, `the cursor ${log.cursor} is past the last message`);
	// Messages past `through` are read from the log: they must all be inline.
	const through = log.lexical?.through;
	if (
		through !== undefined &&
		(through >= log.next_seq || through + 1 < (log.messages[0]?.seq ?? log.next_seq))
	)
		throw new CorruptDocumentError(
			key,
			`lexical.through ${through} is outside the inline messages`,
		);
	return log;
}

function codec<T>(validate: (key: string, value: unknown) => T, empty: () => T): DocumentCodec<T> {
	return {
		decode: (key, bytes) => validate(key, decodeJsonObject(key, bytes)),
		encode: (doc) => encodeJson(doc),
		// Never stored as such: a missing object reads as version null, which callers check first.
		empty,
	};
}

const EPOCH = new Date(0).toISOString();

export const configCodec = codec<MemoryBaseConfig>(
	(key, value) => parse(key, configSchema, value),
	() => ({
		base_id: '-',
		kb_id: '-',
		threshold: 1,
		auto_capture: true,
		created_at: EPOCH,
		updated_at: EPOCH,
	}),
);

export function emptyLog(sessionId: string, now: string): SessionLog {
	return {
		session_id: sessionId,
		next_seq: 1,
		cursor: 0,
		cursor_message_id: null,
		total_processed: 0,
		last_sync_at: null,
		epoch: 0,
		created_at: now,
		updated_at: now,
		sealed: [],
		messages: [],
		users: [],
	};
}

/** The users whose messages these are, each once, in order. */
export function usersOf(messages: readonly { user_id?: string }[]): string[] {
	return [...new Set(messages.flatMap((m) => (m.user_id === undefined ? [] : [m.user_id])))];
}

export const logCodec = codec<SessionLog>(
	(key, value) => checkLog(key, parse(key, logSchema, value)),
	() => emptyLog('-', EPOCH),
);

export const metadataCodec = codec<KnowledgeBaseMetadata>(
	(key, value) => parse(key, metadataSchema, value),
	() => ({
		kb_id: '-',
		is_memory_base: true,
		vector_store: 'embedded',
		dimensions: null,
		chunk_size: 1,
		chunk_overlap: 0,
		created_at: EPOCH,
		updated_at: EPOCH,
	}),
);

export function decodeSealedMessages(
	key: string,
	bytes: Uint8Array,
	range: SealedRange,
): SealedMessages {
	const block = parse<SealedMessages>(key, sealedSchema, decodeJsonObject(key, bytes));
	const m = block.messages;
	if (
		block.first !== range.first ||
		block.last !== range.last ||
		m.length !== range.last - range.first + 1 ||
		m.some((msg, i) => msg.seq !== range.first + i)
	)
		throw new CorruptDocumentError(key, `it does not hold messages ${range.first}-${range.last}`);
	return block;
}
