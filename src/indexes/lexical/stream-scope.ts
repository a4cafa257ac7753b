// What a streamed word search (stream.ts) visits on one manifest, and how: the segments in scope in
// no usable tier, read a few at a time, the tiers, and the tail and open sources, which supersede a
// copy of their chunks in a segment.
import { readInWindow } from '../../common/parallel';
import { isGone } from '../chunks/chunk';
import { searchLimits } from '../chunks/search-reads';
import { isUnfiltered, passes } from '../chunks/filter';
import type { ChunkFilter } from '../chunks/filter';
import type { Versioned } from '../../store/document-store';
import type { LexicalIndex } from './lexical-index';
import type { LexicalManifest } from './manifest';
import { docsOf, sessionsIn } from './segment';
import type { LexicalRef, LexicalSegment } from './segment';
import { HeldSessions } from './tier-search';
import type { TierRows } from './tier-search';
import { tiersOf } from './tiers';
import type { UsableTier } from './tiers';

/** A segment listed since this search read its manifest was deleted: start over on a newer one. */
export class SegmentGone extends Error {
	constructor(readonly key?: string) {
		super('gone');
	}
}

/**
 * What one search visits: the listed segments in no usable tier (read in turn), the tiers' buckets of
 * its words, then the tail and open sources. `all`: every listed segment in scope (tiers' included).
 */
export interface Scope {
	index: LexicalIndex;
	refs: LexicalRef[];
	all: LexicalRef[];
	tiers: UsableTier[];
	/** The tiers' rows of the query's terms, once statsOf read them. */
	rows?: TierRows;
	/** The best's conversations as read for them by step 2 (tiers only). */
	held?: HeldSessions;
	later: LexicalSegment[];
	filter: ChunkFilter;
}

/** The chunks of newer sources (the tail, open logs): their copies in segments do not count. */
interface Later {
	ids: ReadonlySet<string>;
	sessions: ReadonlySet<string>;
}

const laterOf = (segs: readonly LexicalSegment[]): Later => ({
	ids: new Set(segs.flatMap((s) => s.docs.map((d) => d.id))),
	sessions: new Set(segs.flatMap((s) => s.docs.map((d) => d.session_id))),
});

/**
 * Whether a segment holds a copy of a later chunk. A chunk's copies are in its conversation (its ID is
 * made from it): a segment holding none of the later conversations is not read further (of one read
 * lazily, only the blocks of those it holds are decoded).
 */
function holdsLater(seg: LexicalSegment, later: Later): boolean {
	if (later.ids.size === 0) return false;
	const sessions = sessionsIn(seg);
	if (![...later.sessions].some((s) => sessions.has(s))) return false;
	return docsOf(seg, later.sessions).some((d) => later.ids.has(d.id));
}

/** Which documents of a segment count: in the filter, not superseded by a later copy, not gone. */
function okOf(seg: LexicalSegment, filter: ChunkFilter, later: Later): Uint8Array {
	// Every document, most often (a search of every conversation, nothing superseded): no test per document.
	if (isUnfiltered(filter) && !seg.gone && !holdsLater(seg, later))
		return new Uint8Array(seg.lengths.length).fill(1);
	return Uint8Array.from(seg.docs, (d) =>
		passes(d, filter) && !later.ids.has(d.id) && !isGone(d) ? 1 : 0,
	);
}

/** A listed segment, read again; gone since the manifest was read: the search starts over. */
export async function readOrGone(scope: Scope, key: string): Promise<LexicalSegment> {
	// The notes and tiers name segments of scope.all only.
	const ref = scope.all.find((r) => r.key === key);
	const seg = ref ? await scope.index.readSegment(ref) : null;
	if (!seg) throw new SegmentGone(key);
	return seg;
}

/**
 * Runs `fn` over every segment in scope (those of `pick` only, if given), in order, a few at a time, then
 * (unless `withLater` is false) over the tail and open sources.
 */
export async function visit(
	scope: Scope,
	fn: (seg: LexicalSegment, ok: Uint8Array) => void,
	pick: (ref: LexicalRef) => boolean = () => true,
	withLater = true,
): Promise<void> {
	const later = laterOf(scope.later);
	const refs = scope.refs.filter(pick);
	await readInWindow(
		refs,
		searchLimits(scope.index.reads),
		(r) => r.bytes,
		(r) => scope.index.readSegment(r),
		(seg, r) => {
			if (!seg) throw new SegmentGone(r.key);
			fn(seg, okOf(seg, scope.filter, later));
		},
	);
	if (withLater)
		scope.later.forEach((seg, n) =>
			fn(seg, okOf(seg, scope.filter, laterOf(scope.later.slice(n + 1)))),
		);
}

/**
 * What a search visits on one manifest: the segments in scope (by time), the usable tiers (a search
 * of everything only: tiers count every document of their segments), the tail and open sources.
 */
export function scopeFor(
	index: LexicalIndex,
	filter: ChunkFilter,
	sources: LexicalSegment[],
	manifest: Versioned<LexicalManifest>,
): Scope {
	const all = (manifest.version === null ? [] : manifest.doc.segments).filter(
		(r) =>
			(filter.since === undefined || r.to >= filter.since) &&
			(filter.until === undefined || r.from <= filter.until),
	);
	const tiers =
		manifest.version !== null && isUnfiltered(filter) ? tiersOf(manifest.doc).usable : [];
	const covered = new Set(tiers.flatMap((t) => t.refs.map((r) => r.key)));
	return {
		index,
		filter,
		all,
		refs: all.filter((r) => !covered.has(r.key)),
		tiers,
		held: tiers.length > 0 ? new HeldSessions() : undefined,
		later: [...(manifest.version === null ? [] : [index.tailOf(manifest)]), ...sources],
	};
}
