// What both indexes hold: chunks of captured messages, each with where it came from.

/** One chunk of a captured message, as an index keeps it (beside its vector, or its terms). */
export interface IndexedChunk {
	/** Derived from the message ID (chunkId): the same chunk ingested twice has the same ID. */
	id: string;
	session_id: string;
	/** The user the message belongs to, when the capture named one. */
	user_id?: string;
	message_id: string;
	seq: number;
	run_id: string;
	chunk_index: number;
	created_at: string;
	text: string;
	/** What the capture said of the message (see CapturedMessage). */
	role?: string;
	metadata?: Record<string, unknown>;
}

/**
 * What a Forget leaves in place of a chunk in a word segment whose documents' places a term tier
 * names (the tier is kept; lexical/tier-forget.ts): nothing of what the chunk was, no words, in a
 * conversation no ID can name (IDs never hold control characters). Readers never count or return it.
 */
export const GONE = '\u0000forgotten';
export const goneChunk = (): IndexedChunk => ({
	id: GONE,
	session_id: GONE,
	message_id: GONE,
	seq: 0,
	run_id: GONE,
	chunk_index: 0,
	created_at: new Date(0).toISOString(),
	text: '',
});
export const isGone = (c: Pick<IndexedChunk, 'session_id'>) => c.session_id === GONE;

/** The two indexes name a chunk differently; its message and place in the message are the same. */
export const chunkKey = (c: IndexedChunk) => `${c.session_id}\n${c.message_id}\n${c.chunk_index}`;

/** What chunkOrder compares (a row's key in a vector segment read in blocks has it without its chunk). */
export type OrderFields = Pick<
	IndexedChunk,
	'created_at' | 'session_id' | 'seq' | 'chunk_index' | 'id'
>;

/**
 * The order of chunks that rank alike: the one said first (capture time, then conversation, then
 * place in it), then by ID. A total order on what a chunk is, not on where it is stored.
 */
export function chunkOrder(a: OrderFields, b: OrderFields): number {
	if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
	if (a.session_id !== b.session_id) return a.session_id < b.session_id ? -1 : 1;
	if (a.seq !== b.seq) return a.seq - b.seq;
	if (a.chunk_index !== b.chunk_index) return a.chunk_index - b.chunk_index;
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const nonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0;
const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
export const isRecord = (v: unknown): v is Record<string, unknown> =>
	typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a stored chunk must be (both indexes' segments), written out: a segment holds thousands of
 * chunks, and a search may read hundreds of segments (the base-wide index), where a schema library's
 * generic walk costs three times the JSON parsing. Returns the first field that is wrong, or null.
 */
export function badChunk(c: unknown): string | null {
	if (!isRecord(c)) return 'is not an object';
	for (const f of ['id', 'session_id', 'message_id', 'run_id', 'created_at'])
		if (!nonEmpty(c[f])) return f;
	if (c.user_id !== undefined && !nonEmpty(c.user_id)) return 'user_id';
	if (!count(c.seq)) return 'seq';
	if (!count(c.chunk_index)) return 'chunk_index';
	if (typeof c.text !== 'string') return 'text';
	if (c.role !== undefined && typeof c.role !== 'string') return 'role';
	if (c.metadata !== undefined && !isRecord(c.metadata)) return 'metadata';
	return null;
}

/** Text outside Latin-1 takes two bytes a character in V8's strings. */
const WIDE_TEXT = /[\u0100-\uffff]/;

/**
 * Bytes chunks take in memory once parsed, about (V8: each chunk's object, its IDs and its text): what
 * both indexes add to a decoded segment's cache weight.
 */
export function chunkHeapBytes(chunks: readonly IndexedChunk[]): number {
	let bytes = 0;
	for (const c of chunks) {
		bytes += 280 + (WIDE_TEXT.test(c.text) ? 2 : 1) * c.text.length;
		if (c.metadata) bytes += 32 * Object.keys(c.metadata).length;
	}
	return bytes;
}
