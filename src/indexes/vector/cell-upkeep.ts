// Keeping an embedded index's cell tiers (cell-tiers.ts) up to date, a step after each add, as term
// tiers are kept (chunks/tiering.ts). The first tier trains the index's codebook on its own rows and
// writes it once; every later tier places its rows with that codebook. Two processes training at once
// each write one: the first listed wins, and a tier built with the other is stale (dropped, rebuilt).
import { randomBytes } from 'node:crypto';

import { BoundedCache } from '../../common/bounded-cache';
import { CorruptDocumentError, IndexDamagedError } from '../../errors';
import { storageIdentity } from '../../store/storage';
import {
	maintainTiers as maintainSteps,
	settleTiers as settleSteps,
	upkeepAfterAdd as upkeepStep,
} from '../chunks/tiering';
import type { TierParts } from '../chunks/orphans';
import type { TierList, TierUpkeep } from '../chunks/tiering';
import {
	buildCellTier,
	cellBucketKeys,
	cellParts,
	CellTierGone,
	mergeCellTiers,
} from './cell-tiers';
import type { CellTier } from './cell-tiers';
import { decodeCodebook, encodeCodebook, trainCodebook } from './codebook';
import type { Codebook } from './codebook';
import type { IndexManifest, SegmentRef } from './manifest';
import type { EmbeddedIndex } from './vector-index';

/** Where a vector index's manifest lists its cell tiers. */
export const cellTiers: TierList<IndexManifest, SegmentRef, CellTier> = {
	of: (doc) => doc.cells?.tiers ?? [],
	with: (doc, tiers, segments) => {
		const codebook = doc.cells?.codebook ?? tiers.find((t) => t.codebook)?.codebook;
		return { ...doc, segments, cells: { ...(codebook ? { codebook } : {}), tiers } };
	},
	fits: (doc, tier) => tier.codebook === doc.cells?.codebook,
};

/** Whether a key is a cell tier's bucket or a codebook (not a segment). */
export const isCellKey = (key: string) => key.endsWith('.vcl') || key.endsWith('.vcb');

/** What a manifest's cells store: its codebook and its tiers' buckets (chunks/orphans.ts). */
export const cellTierParts: TierParts<IndexManifest> = {
	tiers: (doc) => (doc?.cells?.tiers ?? []).map(cellParts),
	keys: (doc) => (doc?.cells?.codebook ? [doc.cells.codebook] : []),
	isTierPart: isCellKey,
};

/** Rows a codebook is trained on, at most, and floats of them. */
const SAMPLE_ROWS = 32_768;
const SAMPLE_FLOATS = 2 ** 22;

const codebooks = new BoundedCache<Codebook>({ name: 'vector codebooks', maxEntries: 16 });

/** A listed codebook, decoded once per process (keys are random and never reused). */
export async function readCodebook(index: EmbeddedIndex, key: string): Promise<Codebook> {
	const id = `${storageIdentity(index.storage)}\n${key}`;
	const cached = codebooks.get(id);
	if (cached) return cached;
	const got = await index.storage.get(key);
	if (!got) throw new IndexDamagedError(index.kbId, [key]);
	return codebooks.set(id, decodeCodebook(key, got.body));
}

/** The index's codebook, or one trained on the rows of `refs` and written (listed by the tier's swap). */
async function codebookFor(
	index: EmbeddedIndex,
	refs: SegmentRef[],
): Promise<{ key: string; cb: Codebook }> {
	const listed = (await index.readManifest(true)).doc.cells?.codebook;
	if (listed) return { key: listed, cb: await readCodebook(index, listed) };
	const rows: Float32Array[] = [];
	let dims = 0;
	for (const ref of refs) {
		const seg = await index.readSegment(ref, { quantize: false });
		if (!seg) throw new IndexDamagedError(index.kbId, [ref.key]);
		dims = seg.dimensions;
		rows.push(seg.vectors);
	}
	const all = new Float32Array(rows.reduce((n, r) => n + r.length, 0));
	rows.reduce((at, r) => (all.set(r, at), at + r.length), 0);
	const count = Math.min(all.length / dims, SAMPLE_ROWS, Math.floor(SAMPLE_FLOATS / dims));
	// Every n-th row: a sample spread over the segments.
	const step = all.length / dims / count;
	const sample = new Float32Array(count * dims);
	for (let i = 0; i < count; i++) {
		const r = Math.floor(i * step);
		sample.set(all.subarray(r * dims, (r + 1) * dims), i * dims);
	}
	const cb = trainCodebook(sample, dims);
	const key = `${index.segmentsPrefix}codebook-${randomBytes(12).toString('hex')}.vcb`;
	await index.storage.put(key, encodeCodebook(cb), { ifVersion: null });
	codebooks.set(`${storageIdentity(index.storage)}\n${key}`, cb);
	return { key, cb };
}

/** The upkeep of an index's cell tiers. */
function upkeepOf(index: EmbeddedIndex): TierUpkeep<IndexManifest, SegmentRef, CellTier> {
	return {
		list: cellTiers,
		keysOf: (t) => cellBucketKeys(index.segmentsPrefix, t),
		build: async (refs) => {
			const { key, cb } = await codebookFor(index, refs);
			return buildCellTier(index, cb, refs, undefined, key);
		},
		merge: async (a, b) =>
			mergeCellTiers(index, await readCodebook(index, a.tier.codebook), a.tier, b.tier),
		gone: (error) => error instanceof CellTierGone || error instanceof CorruptDocumentError,
		// By age only, though compaction never replaces a segment of COMPACT_BELOW vectors or more: a
		// search of a tier is approximate, and settling full segments at once took the bench's vector
		// recall@50 at 1,000 users from 0.92 to 0.86 (median; the newest segments are read exactly).
		final: () => false,
		deleteKey: (key) => {
			index.uncacheSegment(key);
			return index.storage.delete(key);
		},
		retiring: index.retiring,
		stamp: (doc) => ({ ...doc, updated_at: new Date().toISOString() }),
		update: (fn) => index.updateManifest(fn),
	};
}

/** One step of upkeep of an index's cell tiers (chunks/tiering.ts). */
export const maintainCellTiers = (index: EmbeddedIndex, doc: IndexManifest) =>
	maintainSteps(upkeepOf(index), doc);

/** One step after an add was stored: a damaged segment stops it without failing the add. */
export const cellUpkeepAfterAdd = (index: EmbeddedIndex, doc: IndexManifest) =>
	upkeepStep(upkeepOf(index), doc);

/** Upkeep until nothing is left to do (after an upgrade's copy, or a bulk load). */
export const settleCellTiers = (index: EmbeddedIndex) =>
	settleSteps(upkeepOf(index), () => index.readManifest(true));
