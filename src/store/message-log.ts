import { randomBytes } from 'node:crypto';

import { CorruptDocumentError, InvalidOptionError } from '../errors';
import { sealedKey, sealedPrefix } from '../keys/layout';
import { bloomMayHave, bloomOf, bloomPositions, bloomUnion } from './bloom';
import { decodeSealed, encodeJson, checkSealed } from './codec';
import type { DocumentStore } from './document-store';
import { LOG_DOCUMENT_VERSION, sealedCountOf, sealedRefsOf } from './schema';
import type {
	HeadDocument,
	LogHead,
	SealedIndex,
	SealedRef,
	SealedSegment,
	StoredMessage,
} from './schema';

/**
 * When a head seals its oldest messages into a write-once segment (docs/format.md). The defaults keep a
 * turn's write under 64 KB for chat-sized messages and the head's messages enough for a 2,000-token
 * history without loading a segment.
 */
export interface LogOptions {
	/** The head holds at most this many messages; one more seals the oldest (default 128). */
	tailMessages: number;
	/** After sealing, at most this many of the newest messages stay in the head (default 96). */
	keepMessages: number;
	/**
	 * The head's messages may exceed about this many bytes (JSON) only while they are few (see
	 * minMessages); past it the oldest are sealed until the rest fit in three quarters of it (default 48 KiB).
	 */
	tailBytes: number;
	/** The byte limit never leaves fewer messages than this in the head, nor acts below 1.5× it (default 32). */
	minMessages: number;
	/** References per index: F references of one level become one reference of the next (default 8). */
	fanOut: number;
}

export const DEFAULT_LOG_OPTIONS: Readonly<LogOptions> = Object.freeze({
	tailMessages: 128,
	keepMessages: 96,
	tailBytes: 48 * 1024,
	minMessages: 32,
	fanOut: 8,
});

/** The options with defaults filled in; a value that would make a limit meaningless is an error naming it. */
export function resolveLogOptions(given: Partial<LogOptions> = {}): LogOptions {
	const o = {
		...DEFAULT_LOG_OPTIONS,
		...Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)),
	} as LogOptions;
	const whole = (name: keyof LogOptions, min: number) => {
		const v = o[name];
		if (typeof v !== 'number' || !Number.isInteger(v) || v < min)
			throw new InvalidOptionError(
				`log.${name}`,
				`must be a whole number ≥ ${min}, got ${String(v)}`,
			);
	};
	whole('tailMessages', 2);
	whole('keepMessages', 1);
	whole('minMessages', 1);
	whole('tailBytes', 1);
	whole('fanOut', 2);
	if (o.keepMessages >= o.tailMessages)
		throw new InvalidOptionError(
			'log.keepMessages',
			`must be below log.tailMessages (${o.tailMessages}), got ${o.keepMessages}`,
		);
	if (o.minMessages > o.keepMessages)
		throw new InvalidOptionError(
			'log.minMessages',
			`must be at most log.keepMessages (${o.keepMessages}), got ${o.minMessages}`,
		);
	return o;
}

/** Thread facts the history layer computes for a reference (the store does not interpret messages). */
export interface ThreadFacts {
	summarize(messages: readonly StoredMessage[]): { linear: boolean; turns: number };
	/** Whether a message whose parent is `parent` directly follows the message `previousId`. */
	follows(previousId: string, parent: string | null): boolean;
	/** Whether `parent` means "the message stored just before" (Dify's UUID_NIL) rather than an ID. */
	isPrevious(parent: string): boolean;
}

/**
 * Facts that claim nothing: references are never linear, so a walk loads what it passes. Correct for
 * any reader; the history layer supplies the real ones (memory/buffer-memory.ts).
 */
export const NO_THREAD_FACTS: ThreadFacts = {
	summarize: () => ({ linear: false, turns: 0 }),
	follows: () => false,
	isPrevious: () => false,
};

/** A reference with the position of its first message in the conversation. */
interface Placed {
	ref: SealedRef;
	start: number;
}

const end = (p: Placed) => p.start + p.ref.count - 1;

/** Runs tasks with at most `limit` at a time; results in task order. */
async function mapLimit<T, R>(
	items: readonly T[],
	limit: number,
	fn: (item: T) => Promise<R>,
): Promise<R[]> {
	const out = new Array<R>(items.length);
	let next = 0;
	const worker = async () => {
		while (next < items.length) {
			const i = next++;
			out[i] = await fn(items[i]);
		}
	};
	await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
	return out;
}

const PARALLEL = 16;
/**
 * About how many bytes a message takes in the head (JSON): its text and IDs plus a fixed allowance for
 * the rest. An estimate on purpose: it runs over the head's messages on every flush.
 */
function sizeOf(m: StoredMessage): number {
	let n =
		130 +
		Buffer.byteLength(m.content, 'utf8') +
		m.message_id.length +
		(m.parent_message_id?.length ?? 4) +
		m.created_at.length;
	if (m.files.length > 0) n += JSON.stringify(m.files).length;
	if (m.tool_calls) n += JSON.stringify(m.tool_calls).length;
	if (m.tool_call_id) n += 20 + m.tool_call_id.length + (m.name?.length ?? 0);
	return n;
}

/** Where the oldest messages should be cut: before a user message near `at` when there is one. */
function alignToTurn(
	messages: readonly StoredMessage[],
	at: number,
	lo: number,
	hi: number,
	shift: number,
): number {
	for (let c = at; c <= Math.min(hi, at + shift); c++) if (messages[c].role === 'user') return c;
	for (let c = at - 1; c >= Math.max(lo, at - shift); c--)
		if (messages[c].role === 'user') return c;
	return at;
}

/**
 * One memory document's messages across its head and its sealed objects. The head (version 3) keeps
 * the newest messages and references to write-once segments (level 0) and indexes of references
 * (level ≥ 1) holding all older ones; a version-1 document is a head with nothing sealed. Sealed
 * objects are read through the store's immutable cache, so a process reads each at most once.
 */
export class MessageLog {
	readonly options: LogOptions;

	constructor(
		private readonly store: DocumentStore<HeadDocument>,
		readonly headKey: string,
		private readonly facts: ThreadFacts = NO_THREAD_FACTS,
		options: { log?: Partial<LogOptions>; gzip?: boolean } = {},
	) {
		this.options = resolveLogOptions(options.log);
		this.gzip = options.gzip === true;
		sealedPrefix(headKey); // a key that cannot have sealed objects fails here
	}

	private readonly gzip: boolean;

	/** The head's references with their positions, oldest first. */
	placed(head: HeadDocument): Placed[] {
		let start = 0;
		return sealedRefsOf(head).map((ref) => {
			const p = { ref, start };
			start += ref.count;
			return p;
		});
	}

	private async object(p: Placed): Promise<SealedSegment | SealedIndex> {
		const obj = await this.store.readImmutable(p.ref.key, (bytes) =>
			decodeSealed(this.headKey, p.ref, bytes),
		);
		if (!obj)
			throw new CorruptDocumentError(
				p.ref.key,
				`it is referenced by "${this.headKey}" but does not exist`,
			);
		checkSealed(this.headKey, p.ref, obj); // a cached copy was checked against the reference it was loaded by
		if (obj.first !== p.start)
			throw new CorruptDocumentError(
				p.ref.key,
				`it starts at message ${obj.first}, the reference at ${p.start}`,
			);
		return obj;
	}

	/** The messages of a segment reference. */
	async segment(p: Placed): Promise<readonly StoredMessage[]> {
		return ((await this.object(p)) as SealedSegment).messages;
	}

	/** The references an index reference holds, with their positions. */
	async children(p: Placed): Promise<Placed[]> {
		let start = p.start;
		return ((await this.object(p)) as SealedIndex).refs.map((ref) => {
			const c = { ref, start };
			start += ref.count;
			return c;
		});
	}

	/** Descends to the segment holding position `ordinal`; `keep` may stop the descent (returns undefined). */
	private async segmentAt(
		head: HeadDocument,
		ordinal: number,
		keep: (p: Placed) => boolean = () => true,
	): Promise<Placed | undefined> {
		let level = this.placed(head);
		for (;;) {
			const p = level.find((x) => x.start <= ordinal && ordinal <= end(x));
			if (!p || !keep(p)) return undefined;
			if (p.ref.level === 0) return p;
			level = await this.children(p);
		}
	}

	/**
	 * Finds stored messages by ID among the sealed objects (the head's own messages are the caller's
	 * business), loading only segments whose filters may hold them, and only those holding positions
	 * ≥ `from`. Returns each found ID's segment.
	 */
	async find(
		head: HeadDocument,
		ids: readonly string[],
		from = 0,
	): Promise<Map<string, { start: number; messages: readonly StoredMessage[] }>> {
		const found = new Map<string, { start: number; messages: readonly StoredMessage[] }>();
		const wanted = ids.map((id) => ({ id, positions: bloomPositions(id) }));
		let frontier = this.placed(head);
		while (frontier.length > 0 && found.size < wanted.length) {
			const open = wanted.filter((w) => !found.has(w.id));
			const candidates = frontier.filter(
				(p) => end(p) >= from && open.some((w) => bloomMayHave(p.ref.bloom, w.positions)),
			);
			const segments = candidates.filter((p) => p.ref.level === 0);
			const indexes = candidates.filter((p) => p.ref.level > 0);
			const [loaded, expanded] = await Promise.all([
				mapLimit(segments, PARALLEL, async (p) => ({
					start: p.start,
					messages: await this.segment(p),
				})),
				mapLimit(indexes, PARALLEL, (p) => this.children(p)),
			]);
			for (const chunk of loaded)
				for (const m of chunk.messages)
					if (open.some((w) => w.id === m.message_id) && !found.has(m.message_id))
						found.set(m.message_id, chunk);
			frontier = expanded.flat();
		}
		return found;
	}

	/** Every sealed message, oldest first (segments loaded in parallel). */
	async sealedMessages(head: HeadDocument): Promise<StoredMessage[]> {
		let level = this.placed(head);
		while (level.some((p) => p.ref.level > 0)) {
			const expanded = await mapLimit(level, PARALLEL, async (p) =>
				p.ref.level === 0 ? [p] : this.children(p),
			);
			level = expanded.flat();
		}
		const segments = await mapLimit(level, PARALLEL, (p) => this.segment(p));
		return segments.flat();
	}

	/** Every key the head references, directly or through indexes (for housekeeping). */
	async reachable(head: HeadDocument): Promise<Set<string>> {
		const keys = new Set<string>();
		let level = this.placed(head);
		while (level.length > 0) {
			for (const p of level) keys.add(p.ref.key);
			const expanded = await mapLimit(
				level.filter((p) => p.ref.level > 0),
				PARALLEL,
				(p) => this.children(p),
			);
			level = expanded.flat();
		}
		return keys;
	}

	/** The chunk holding a message a walk needs: by position, or by ID (the message before `below` first). */
	async load(
		head: HeadDocument,
		gap: { id: string; below: number } | { ordinal: number },
	): Promise<{ start: number; messages: readonly StoredMessage[] } | undefined> {
		const sealed = sealedCountOf(head);
		if ('ordinal' in gap) {
			const p = gap.ordinal < sealed ? await this.segmentAt(head, gap.ordinal) : undefined;
			if (!p)
				throw new CorruptDocumentError(
					this.headKey,
					`no sealed object holds message ${gap.ordinal}`,
				);
			return { start: p.start, messages: await this.segment(p) };
		}
		// Linear history: the parent is the message just before. Filters stop a wrong guess early.
		const positions = bloomPositions(gap.id);
		const before = gap.below - 1;
		if (before >= 0 && before < sealed) {
			const p = await this.segmentAt(head, before, (x) => bloomMayHave(x.ref.bloom, positions));
			if (p) {
				const messages = await this.segment(p);
				if (messages.some((m) => m.message_id === gap.id)) return { start: p.start, messages };
			}
		}
		return (await this.find(head, [gap.id])).get(gap.id);
	}

	/**
	 * The largest sealed run ending right at `gap` that is one linear thread (see ThreadLoader.skip):
	 * found by position, so it loads at most the index objects on the way down.
	 */
	async skip(
		head: HeadDocument,
		gap: { id: string; below: number } | { ordinal: number },
	): Promise<
		| {
				turns: number;
				count: number;
				next: { id: string; below: number } | { ordinal: number } | null;
		  }
		| undefined
	> {
		const target = 'ordinal' in gap ? gap.ordinal : gap.below - 1;
		if (target < 0 || target >= sealedCountOf(head)) return undefined;
		let level = this.placed(head);
		for (;;) {
			const p = level.find((x) => x.start <= target && target <= end(x));
			if (!p) return undefined;
			if (end(p) === target && p.ref.linear && (!('id' in gap) || p.ref.last_id === gap.id)) {
				const parent = p.ref.first_parent;
				const next =
					parent === null
						? null
						: this.facts.isPrevious(parent)
							? p.start === 0
								? null
								: { ordinal: p.start - 1 }
							: { id: parent, below: p.start };
				return { turns: p.ref.turns, count: p.ref.count, next };
			}
			if (p.ref.level === 0) return undefined;
			level = await this.children(p);
		}
	}

	/** Whether the head's messages have outgrown its limits. */
	needsSeal(messages: readonly StoredMessage[]): boolean {
		const o = this.options;
		if (messages.length > o.tailMessages) return true;
		if (messages.length < o.minMessages + Math.max(1, Math.floor(o.minMessages / 2))) return false;
		let bytes = 0;
		for (const m of messages) bytes += sizeOf(m);
		return bytes > o.tailBytes;
	}

	/**
	 * Seals the head's oldest messages when it has outgrown its limits: writes them as write-once
	 * segments (create-only, random keys), folds full groups of references into write-once indexes,
	 * and returns the head that references them. Nothing is referenced before it is stored, so a head
	 * that loses its compare-and-swap leaves only unreferenced objects behind (housekeeping removes
	 * them), never a reference to something missing. Returns the head unchanged when within limits.
	 */
	async seal(head: HeadDocument): Promise<HeadDocument> {
		const messages = head.messages;
		if (!this.needsSeal(messages)) return head;
		const o = this.options;
		const n = messages.length;
		let keep = Math.min(n - 1, o.keepMessages);
		let keptBytes = 0;
		for (let i = n - keep; i < n; i++) keptBytes += sizeOf(messages[i]);
		while (keep > o.minMessages && keptBytes > (o.tailBytes * 3) / 4)
			keptBytes -= sizeOf(messages[n - keep--]);
		const cut = alignToTurn(
			messages,
			n - keep,
			1,
			n - 1,
			Math.max(1, Math.floor(o.keepMessages / 4)),
		);
		const { refs, objects, sealedCount } = this.pack(
			sealedRefsOf(head),
			sealedCountOf(head),
			messages.slice(0, cut),
		);
		await mapLimit(objects, PARALLEL, (x) =>
			this.store.create(x.key, encodeJson(x.obj, { gzip: this.gzip }), x.obj),
		);
		const next: LogHead = {
			...head,
			version: LOG_DOCUMENT_VERSION,
			messages: messages.slice(cut),
			sealed: refs,
			sealed_count: sealedCount,
		};
		return next;
	}

	/**
	 * Plans sealing `messages` (which follow `sealedCount` sealed ones) after `refs`: one segment, or for
	 * a long backlog segments of about tailMessages − keepMessages messages cut at turns, then the indexes
	 * a binary-counter cascade asks for. Returns the new references and the objects to create.
	 */
	private pack(
		refs: readonly SealedRef[],
		sealedCount: number,
		messages: readonly StoredMessage[],
	) {
		const o = this.options;
		const out = [...refs];
		const objects: { key: string; obj: SealedSegment | SealedIndex }[] = [];
		const size = Math.max(1, o.tailMessages - o.keepMessages);
		let total = sealedCount;
		for (let i = 0; i < messages.length;) {
			let j = messages.length;
			// One segment per seal; only a long backlog (a version-1 document converting) is split.
			if (j - i > 2 * size)
				j = alignToTurn(
					messages,
					i + size,
					i + 1,
					messages.length - 1,
					Math.max(1, Math.floor(size / 4)),
				);
			const chunk = messages.slice(i, j);
			const key = sealedKey(this.headKey, 0, total, randomBytes(8).toString('hex'));
			objects.push({
				key,
				obj: {
					version: LOG_DOCUMENT_VERSION,
					kind: 'segment',
					head: this.headKey,
					first: total,
					messages: chunk,
				},
			});
			out.push({
				key,
				level: 0,
				count: chunk.length,
				first_id: chunk[0].message_id,
				last_id: chunk[chunk.length - 1].message_id,
				first_parent: chunk[0].parent_message_id,
				...this.facts.summarize(chunk),
				bloom: bloomOf(chunk.map((m) => m.message_id)),
			});
			total += chunk.length;
			i = j;
			this.cascade(out, total, objects);
		}
		return { refs: out, objects, sealedCount: total };
	}

	/** While the newest fanOut references share a level, replaces them with one index a level up. */
	private cascade(
		refs: SealedRef[],
		total: number,
		objects: { key: string; obj: SealedSegment | SealedIndex }[],
	): void {
		const f = this.options.fanOut;
		while (refs.length >= f) {
			const group = refs.slice(-f);
			const level = group[0].level;
			if (!group.every((r) => r.level === level)) return;
			const count = group.reduce((s, r) => s + r.count, 0);
			const start = total - count;
			const key = sealedKey(this.headKey, level + 1, start, randomBytes(8).toString('hex'));
			const linear = group.every(
				(r, i) => r.linear && (i === 0 || this.facts.follows(group[i - 1].last_id, r.first_parent)),
			);
			objects.push({
				key,
				obj: {
					version: LOG_DOCUMENT_VERSION,
					kind: 'index',
					head: this.headKey,
					first: start,
					level: level + 1,
					refs: group,
				},
			});
			const bloom = bloomUnion(group.map((r) => r.bloom));
			refs.splice(refs.length - f, f, {
				key,
				level: level + 1,
				count,
				first_id: group[0].first_id,
				last_id: group[f - 1].last_id,
				first_parent: group[0].first_parent,
				linear,
				turns: linear ? group.reduce((s, r) => s + r.turns, 0) : 0,
				...(bloom === undefined ? {} : { bloom }),
			});
		}
	}
}
