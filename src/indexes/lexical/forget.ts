// One conversation's chunks taken out of a lexical manifest: the tail without them and each segment
// that may hold them (by its bloom filter) rewritten without them, or dropped once empty.
import { IndexDamagedError } from '../../errors';
import { bloomMayHave, bloomPositions } from '../../store/bloom';
import type { IndexedChunk } from '../chunks/chunk';
import type { ListedSegment } from '../chunks/listed';
import { retireParts } from '../chunks/retiring';
import type { LexicalManifest } from './manifest';
import type { LexicalRef, LexicalSegment } from './segment';
import { dropStale } from './tiers';

/** The segment reads and writes a rewrite needs (a LexicalIndex). */
export interface SegmentFiles {
	readonly name: string;
	readonly segmentsPrefix: string;
	readSegment(ref: ListedSegment): Promise<LexicalSegment | null>;
	writeSegment(level: number, docs: IndexedChunk[]): Promise<LexicalRef>;
}

export interface Dropped {
	/** The manifest without the chunks; undefined: nothing to change. */
	doc?: LexicalManifest;
	removed: number;
	/** Segments the new manifest no longer lists. */
	replaced: string[];
	/** Segments written for it (deleted again if its swap fails). */
	written: string[];
}

/**
 * The manifest without the chunks `keep` refuses, of conversation `sessionId`; `unlist` also drops
 * the conversation from the open sources. A segment listed but gone is an error, never skipped.
 */
export async function dropChunks(
	files: SegmentFiles,
	doc: LexicalManifest,
	sessionId: string,
	keep: (d: IndexedChunk) => boolean,
	unlist: boolean,
): Promise<Dropped> {
	const position = bloomPositions(`s:${sessionId}`);
	const out: Dropped = { removed: 0, replaced: [], written: [] };
	const tail = doc.tail.filter(keep);
	out.removed += doc.tail.length - tail.length;
	const open = unlist ? doc.open?.filter((o) => o.session_id !== sessionId) : doc.open;
	const refs: LexicalRef[] = [];
	for (const ref of doc.segments) {
		if (!bloomMayHave(ref.bloom, position)) {
			refs.push(ref);
			continue;
		}
		const seg = await files.readSegment(ref);
		if (!seg) throw new IndexDamagedError(files.name, [ref.key]);
		const kept = seg.docs.filter(keep);
		if (kept.length === seg.docs.length) {
			refs.push(ref);
			continue;
		}
		out.removed += seg.docs.length - kept.length;
		out.replaced.push(ref.key);
		if (kept.length === 0) continue;
		const fresh = await files.writeSegment(ref.level, kept);
		out.written.push(fresh.key);
		refs.push(fresh);
	}
	if (out.removed === 0 && open?.length === doc.open?.length) return out;
	// A tier that lost a segment goes in the same swap (its buckets hold the words removed).
	const next = dropStale(
		{ ...doc, tail, segments: refs, updated_at: new Date().toISOString() },
		files.segmentsPrefix,
	);
	// Parts replaced earlier may hold the conversation's words: they go now, whatever their grace.
	const purged = retireParts(
		next.doc,
		[],
		{ prefix: files.segmentsPrefix, graceMs: 0 },
		{ all: true },
	);
	out.replaced.push(...next.keys, ...purged.due);
	out.doc = open ? { ...purged.doc, open } : purged.doc;
	return out;
}
