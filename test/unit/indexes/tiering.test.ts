// Which segments upkeep regroups into tiers (chunks/tiering.ts), on a manifest held in memory: settled
// ones, that is all but the newest SETTLING and any segment no merge will replace (a full one), in
// batches of TIER_SEGMENTS. A full segment left out was read whole by every search until 16 newer came.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { TiersUnsettledError } from '../../../src/errors';
import { settleTiers, SETTLING, TIER_SEGMENTS } from '../../../src/indexes/chunks/tiering';
import type { Placed, Tier, TierUpkeep } from '../../../src/indexes/chunks/tiering';
import type { Versioned } from '../../../src/store/document-store';

type Ref = Placed & { count: number };
interface Doc {
	segments: Ref[];
	tiers: Tier[];
}

/** Upkeep of a manifest in memory; a segment of FULL chunks or more is one no merge replaces. */
const FULL = 100;
function upkeep(state: { doc: Doc; version: number }): TierUpkeep<Doc, Ref, Tier> {
	let n = 0;
	const current = (): Versioned<Doc> => ({ doc: state.doc, version: String(state.version) });
	return {
		list: { of: (d) => d.tiers, with: (d, tiers, segments) => ({ ...d, tiers, segments }) },
		keysOf: (t) => [`tier-${t.id}`],
		build: async (refs) => ({ id: `t${n++}`, segments: refs.length, bytes: 1 }),
		merge: async (a, b) => ({
			id: `t${n++}`,
			segments: a.tier.segments + b.tier.segments,
			bytes: 1,
		}),
		gone: () => false,
		final: (r) => r.count >= FULL,
		deleteKey: async () => {},
		retiring: { prefix: 'tier-', graceMs: 0 },
		stamp: (d) => d,
		update: async (fn) => {
			const next = fn(current());
			if (next) {
				state.doc = next;
				state.version++;
			}
			return { current: current(), written: next !== undefined };
		},
	};
}

const refs = (counts: number[], from = 0): Ref[] =>
	counts.map((count, i) => ({ key: `seg-${from + i}`, count }));

/** A merge's error that drops both tiers (a part of one lost). */
class Gone extends Error {}

/** Settles `segments`; `failing` merges (the first ones) throw a lost part. Counts the steps taken. */
async function settle(segments: Ref[], failing = 0) {
	const state = { doc: { segments, tiers: [] } as Doc, version: 1 };
	const up = upkeep(state);
	const merge = up.merge;
	let merges = 0;
	let reads = 0;
	up.merge = async (a, b) => {
		if (merges++ < failing) throw new Gone();
		return merge(a, b);
	};
	up.gone = (e) => e instanceof Gone;
	await settleTiers(up, async () => {
		reads++;
		return { doc: state.doc, version: String(state.version) };
	});
	return Object.assign(state.doc, { reads, merges });
}

const tiered = (doc: Doc) => doc.segments.filter((r) => r.tier).map((r) => r.key);

describe('which segments go into tiers', () => {
	it('full segments, however new, in batches; small new ones stay out until they settle', async () => {
		// 12 full segments and 4 small ones: all among the newest SETTLING.
		const doc = await settle(refs([...Array(12).fill(FULL), 10, 10, 10, 10]));
		assert.equal(doc.segments.length, SETTLING);
		assert.deepEqual(
			tiered(doc),
			refs(Array(TIER_SEGMENTS).fill(FULL)).map((r) => r.key),
			'the oldest 8 full ones in one tier; the other 4 wait for a batch',
		);
	});

	it('small segments settle by age only, as before', async () => {
		const doc = await settle(refs(Array(SETTLING + TIER_SEGMENTS + 3).fill(10)));
		assert.deepEqual(
			tiered(doc),
			refs(Array(TIER_SEGMENTS).fill(10)).map((r) => r.key),
		);
	});

	it('old small segments and new full ones: the oldest settled first, one batch of each kind', async () => {
		const segments = [
			...refs(Array(SETTLING).fill(10)),
			...refs(Array(TIER_SEGMENTS).fill(FULL), SETTLING),
		];
		const doc = await settle(segments);
		// The 8 oldest small ones are past the newest 16; the 8 full ones are settled too.
		assert.deepEqual(tiered(doc), [
			...segments.slice(0, TIER_SEGMENTS).map((r) => r.key),
			...segments.slice(SETTLING).map((r) => r.key),
		]);
		assert.equal(doc.tiers.length, 1, 'two tiers of one size class merged into one');
	});

	it('a merge that loses a part drops both tiers, and upkeep rebuilds and settles them', async () => {
		const segments = refs(Array(SETTLING + 4 * TIER_SEGMENTS).fill(10));
		const plain = await settle(segments.map((r) => ({ ...r })));
		const doc = await settle(segments, 2);
		assert.deepEqual(tiered(doc), tiered(plain), 'the same segments end in tiers');
		assert.equal(doc.tiers.length, plain.tiers.length);
		assert.ok(
			doc.reads > plain.reads,
			`more steps (${doc.reads}) than without failures (${plain.reads})`,
		);
	});

	it('a merge that fails every time stops upkeep with an error after a bounded number of steps', async () => {
		const segments = refs(Array(SETTLING + 4 * TIER_SEGMENTS).fill(10));
		const bound = 4 * Math.ceil(segments.length / TIER_SEGMENTS) + 16;
		let reads = 0;
		await assert.rejects(
			settle(segments, Infinity).catch((e) => {
				reads = e instanceof TiersUnsettledError ? e.steps : -1;
				throw e;
			}),
			(e: unknown) =>
				e instanceof TiersUnsettledError && /did not settle after \d+ steps/.test(e.message),
		);
		assert.equal(reads, bound, 'it stops at the bound, not later');
	});
});
