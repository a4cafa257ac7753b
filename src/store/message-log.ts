export { DEFAULT_LOG_OPTIONS, NO_THREAD_FACTS, resolveLogOptions } from './log-options';
export type { LogOptions, ThreadFacts } from './log-options';
import { mapLimit, MAX_PARALLEL } from '../common/parallel';
import { CorruptDocumentError } from '../errors';
import { sealedPrefix } from './log-keys';
import { bloomMayHave, bloomPositions } from './bloom';
import { NO_THREAD_FACTS, resolveLogOptions } from './log-options';
import type { LogOptions, ThreadFacts } from './log-options';
import { needsSeal, planSeal, sealCut } from './log-sealing';
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

/** A reference with the position of its first message in the conversation. */
interface Placed {
	ref: SealedRef;
	start: number;
}

const end = (p: Placed) => p.start + p.ref.count - 1;

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
		readonly facts: ThreadFacts = NO_THREAD_FACTS,
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
		const obj = await this.store.readWriteOnce(p.ref.key, (bytes) =>
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
				mapLimit(segments, MAX_PARALLEL, async (p) => ({
					start: p.start,
					messages: await this.segment(p),
				})),
				mapLimit(indexes, MAX_PARALLEL, (p) => this.children(p)),
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
			const expanded = await mapLimit(level, MAX_PARALLEL, async (p) =>
				p.ref.level === 0 ? [p] : this.children(p),
			);
			level = expanded.flat();
		}
		const segments = await mapLimit(level, MAX_PARALLEL, (p) => this.segment(p));
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
				MAX_PARALLEL,
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
		return needsSeal(this.options, messages);
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
		if (!needsSeal(this.options, messages)) return head;
		const cut = sealCut(this.options, messages);
		const { refs, objects, sealedCount } = planSeal(
			this,
			sealedRefsOf(head),
			sealedCountOf(head),
			messages.slice(0, cut),
		);
		await mapLimit(objects, MAX_PARALLEL, (x) =>
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
}
