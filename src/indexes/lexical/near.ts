// The messages beside a streamed word search's best matches (stream.ts, step 3): their chunks, and
// those of the flow beside them, up to the first message that is not a note. The segments of tiers are
// found exactly, by the tiers' rows of conversations (which segments hold which message numbers of
// each), and read round by round only as far as notes carry the flow; other segments are found by
// their bloom filters, read once. Segments read for the best (HeldSessions) are not read again.
import { bloomMayHave, bloomPositions } from '../../store/bloom';
import type { IndexedChunk } from '../chunks/chunk';
import { aside, NEIGHBOUR_REACH } from './context';
import { build, docsWhere } from './segment';
import type { LexicalRef, LexicalSegment } from './segment';
import { SegmentGone, visit } from './stream-scope';
import type { Scope } from './stream-scope';
import { tierSessionRows } from './tier-search';
import type { HeldSessions } from './tier-search';

/** The messages the best chunks are, per conversation. */
export function messagesOf(chunks: readonly IndexedChunk[]): Map<string, number[]> {
	const out = new Map<string, number[]>();
	for (const { session_id: session, seq } of chunks)
		out.set(session, [...(out.get(session) ?? []), seq]);
	return out;
}

/** Whether a message (conversation, number) is within reach of one of the best. */
const nearTo = (best: Map<string, number[]>) => (session: string, at: number) =>
	best.get(session)?.some((seq) => Math.abs(at - seq) <= NEIGHBOUR_REACH) ?? false;

/**
 * Step 3: the chunks bm25() looks at for those messages, as a segment: theirs, and the messages beside
 * them up to the first that is not a note (the notes passed included), one copy each (the later wins).
 * bm25() over it gives the same k best, and lifts the same neighbours, as over the whole index, without
 * holding or indexing whole conversations (one may be long).
 */
export async function nearSegment(
	scope: Scope,
	best: Map<string, number[]>,
	held?: HeldSessions,
): Promise<LexicalSegment> {
	const sessions = [...best.keys()];
	const keys = sessions.map((s) => bloomPositions(`s:${s}`));
	const near = nearTo(best);
	const spans = await tierSessionRows(
		scope.index,
		scope.tiers,
		sessions,
		(k) => new SegmentGone(k),
	);
	const byKey = new Map(scope.all.map((r) => [r.key, r]));
	const tiered = new Set(scope.tiers.flatMap((t) => t.refs.map((r) => r.key)));
	// What each segment taken gave, and what the tail and open sources gave.
	const found = new Map<string, IndexedChunk[]>();
	const later: IndexedChunk[] = [];
	const take = async (refs: LexicalRef[], withLater: boolean) => {
		const reading = new Set<string>();
		for (const ref of refs) {
			if (found.has(ref.key)) continue;
			const theirs = sessions.filter((_, i) => bloomMayHave(ref.bloom, keys[i]));
			const kept = held?.of(ref.key, theirs);
			found.set(ref.key, kept ? kept.filter((d) => near(d.session_id, d.seq)) : []);
			if (!kept) reading.add(ref.key);
		}
		const into = (seg: LexicalSegment) => found.get(seg.key) ?? later;
		// Only the blocks of the messages near are decoded (the table says where they are).
		const fn = (seg: LexicalSegment, ok: Uint8Array) =>
			docsWhere(seg, near).forEach(([i, d]) => ok[i] && into(seg).push(d));
		await visit({ ...scope, refs: scope.all }, fn, (r) => reading.has(r.key), withLater);
	};
	// The tiered segments holding these messages, not taken yet.
	const holding = (session: string, seqs: number[]) =>
		spans
			.get(session)!
			.filter((x) => !found.has(x.key) && seqs.some((q) => x.from <= q && q <= x.to))
			.map((x) => byKey.get(x.key)!);
	const untiered = scope.all.filter(
		(r) => !tiered.has(r.key) && keys.some((p) => bloomMayHave(r.bloom, p)),
	);
	let need = new Map([...best].map(([s, seqs]) => [s, seqs.flatMap((q) => [q - 1, q, q + 1])]));
	for (let round = 0; need.size > 0 && round <= NEIGHBOUR_REACH; round++) {
		const refs = [...need].flatMap(([s, seqs]) => holding(s, seqs));
		await take(round === 0 ? [...untiered, ...refs] : refs, round === 0);
		need = further(best, found, later, (s, q) => holding(s, [q]).length > 0);
	}
	// In the manifest's order, then the tail and open sources; one copy each: the later wins.
	const byId = new Map<string, IndexedChunk>();
	const lists = [...scope.all.map((r) => found.get(r.key) ?? []), later];
	for (const list of lists)
		for (const d of list) {
			byId.delete(d.id);
			byId.set(d.id, d);
		}
	return build(`${scope.index.manifestKey}#near`, beside([...byId.values()], best));
}

const place = (session: string, seq: number) => `${session}\n${seq}`;

/** Chunks by the message they are of (conversation and message number). */
function byMessage(chunks: Iterable<IndexedChunk>): Map<string, IndexedChunk[]> {
	const out = new Map<string, IndexedChunk[]>();
	for (const c of chunks) {
		const key = place(c.session_id, c.seq);
		out.set(key, [...(out.get(key) ?? []), c]);
	}
	return out;
}

/**
 * Walks the flow beside each best message, both ways, as far as notes carry it (context.ts): `onStep`
 * is given each message number reached and its chunks among `at` (if any), and stops that way by
 * returning false; a message that is not all notes, or not among `at`, is the last of its way.
 */
function walkBeside(
	best: Map<string, number[]>,
	at: Map<string, IndexedChunk[]>,
	onStep: (session: string, seq: number, message: IndexedChunk[] | undefined) => boolean,
): void {
	for (const [session, seqs] of best)
		for (const seq of seqs)
			for (const step of [-1, 1])
				for (let i = 1; i <= NEIGHBOUR_REACH; i++) {
					const q = seq + i * step;
					const message = at.get(place(session, q));
					if (!onStep(session, q, message) || !message || !message.every(aside)) break;
				}
}

/**
 * The messages the flow beside the best goes on to, as far as what was taken shows it, that a segment
 * not taken yet may hold (`untaken`): the next round's.
 */
function further(
	best: Map<string, number[]>,
	found: Map<string, IndexedChunk[]>,
	later: IndexedChunk[],
	untaken: (session: string, seq: number) => boolean,
): Map<string, number[]> {
	const need = new Map<string, number[]>();
	walkBeside(best, byMessage([...[...found.values()].flat(), ...later]), (session, q) => {
		if (!untaken(session, q)) return true;
		need.set(session, [...(need.get(session) ?? []), q]);
		return false;
	});
	return need;
}

/** Of the chunks within reach, the messages' own and those of the flow beside them (context.ts). */
function beside(chunks: IndexedChunk[], best: Map<string, number[]>): IndexedChunk[] {
	const bySeq = byMessage(chunks);
	const keep = new Set<IndexedChunk>();
	for (const [session, seqs] of best)
		for (const seq of seqs) for (const c of bySeq.get(place(session, seq)) ?? []) keep.add(c);
	walkBeside(best, bySeq, (_session, _q, message) => {
		for (const c of message ?? []) keep.add(c);
		return message !== undefined;
	});
	return chunks.filter((c) => keep.has(c));
}
