// The weights of hybrid search: the vectors weigh by how far their best match stands out against what
// it does for word salad (their null), learned per base over its searches; no weight is fixed to one
// embedding model. At the level of the index room: standout, weigh, the calibration and fuse.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	Calibration,
	cacheStats,
	calibrationOf,
	clearCalibrations,
	fuse,
	standout,
	VECTOR_WEIGHT_MAX,
	VECTOR_WEIGHT_MIN,
	VECTOR_WEIGHT_PRIOR,
	weigh,
	weightOf,
} from '../../../src/internal';

/** 50 candidate scores: a best one, then a background falling gently (seeded jitter). */
function ranking(best: number, background = 0.5, spread = 0.05): number[] {
	let seed = 7;
	const jitter = () => ((seed = (seed * 48271) % 2147483647) / 2147483647 - 0.5) * spread;
	const rest = Array.from({ length: 49 }, (_, i) => background - i * 0.002 + jitter());
	return [best, ...rest.sort((a, b) => b - a)];
}

const chunk = (id: string, score: number) => ({
	id,
	session_id: 's',
	message_id: id,
	seq: Number(id.replace(/\D/g, '')) || 0,
	run_id: 'r',
	chunk_index: 0,
	text: id,
	created_at: '2026-01-01T00:00:00.000Z',
	score,
});

describe('standout: how far a best match stands above its background', () => {
	it('a clear best stands out; a best level with the rest does not; too short a list says nothing', () => {
		const clear = standout(ranking(0.9));
		const level = standout(ranking(0.5));
		assert.ok(clear !== undefined && level !== undefined);
		assert.ok(clear > 10, `clear ${clear}`);
		assert.ok(level < 3, `level ${level}`);
		assert.equal(standout([0.9, 0.5, 0.4]), undefined);
		assert.equal(standout([]), undefined);
	});

	it('a word ranking that holds every match counts the rest of the scope as 0', () => {
		// Twelve matches in a scope of 100: the best stands far above a background of mostly zeros.
		const twelve = [8, 2, 1.9, 1.8, 1.7, 1.6, 1.5, 1.4, 1.3, 1.2, 1.1, 1];
		assert.ok(standout(twelve, 100)! > standout(twelve)!);
		assert.equal(standout([8, 2]), undefined, 'without the scope, two scores say nothing');
		// A background that does not vary at all (a sparse model's exact zeros) gives no measure.
		assert.equal(standout([0.7, ...new Array(49).fill(0)]), undefined);
	});
});

describe('weigh: vectors weigh by their evidence, never by a fixed share', () => {
	it('the stronger the vectors stand out against their null, the more they weigh', () => {
		const words = ranking(9, 3, 0.5);
		const weights = [0.5, 0.62, 0.7, 0.9].map(
			(best) =>
				weigh({ lexical: words, vector: ranking(best) }, standout(ranking(0.6)), new Calibration())
					.vector,
		);
		for (let i = 1; i < weights.length; i++)
			assert.ok(weights[i] > weights[i - 1], JSON.stringify(weights));
		assert.equal(weights[0], 0, 'no better than chance: nothing');
		assert.ok(weights.at(-1)! > 0.9, 'far beyond chance: the vectors lead');
	});

	it('one ranking alone, or no null yet, says so', () => {
		const c = new Calibration();
		assert.deepEqual(weigh({ lexical: ranking(3), vector: [] }, 5, c), {
			lexical: 1,
			vector: 0,
			basis: 'lexical only',
			calibratedBy: 0,
		});
		const alone = weigh({ lexical: [], vector: ranking(0.9) }, standout(ranking(0.6)), c);
		assert.equal(alone.basis, 'vector only');
		assert.ok(alone.vectorEvidence! > 1, 'the vectors alone still say how far they stood out');
		assert.equal(c.count, 1, 'and that is learned');
		const unknown = weigh(
			{ lexical: ranking(3), vector: ranking(0.9) },
			undefined,
			new Calibration(),
		);
		assert.equal(unknown.basis, 'prior');
		assert.equal(unknown.vector, VECTOR_WEIGHT_PRIOR);
		assert.equal(c.count, 1, 'nothing learned without evidence');
	});

	it('a base learns its model: one lucky query does not outweigh what its searches showed', () => {
		const words = ranking(9, 3, 0.5);
		const nul = standout(ranking(0.6))!;
		const weak = new Calibration();
		for (let i = 0; i < 40; i++) weigh({ lexical: words, vector: ranking(0.6) }, nul, weak);
		const lucky = weigh({ lexical: words, vector: ranking(0.9) }, nul, weak);
		const fresh = weigh({ lexical: words, vector: ranking(0.9) }, nul, new Calibration());
		assert.equal(lucky.calibratedBy, 40);
		assert.ok(fresh.vector > 0.9, `the same query on a new base: ${fresh.vector}`);
		assert.ok(
			lucky.vector < fresh.vector - 0.3,
			`a weak base's lucky query ${lucky.vector}, on a new base ${fresh.vector}`,
		);
		const strong = new Calibration();
		for (let i = 0; i < 40; i++) weigh({ lexical: words, vector: ranking(0.9) }, nul, strong);
		const plain = weigh({ lexical: words, vector: ranking(0.6) }, nul, strong);
		assert.ok(plain.vector > 0.8, `a strong base's ordinary query: ${plain.vector}`);
	});

	it('weights stay within their bounds and sum to 1', () => {
		const c = new Calibration();
		for (const best of [0.1, 0.5, 0.55, 0.7, 1]) {
			const w = weigh({ lexical: ranking(5), vector: ranking(best) }, 4, c);
			assert.ok(w.vector >= 0 && w.vector <= VECTOR_WEIGHT_MAX + 1e-9);
			assert.ok(Math.abs(w.lexical + w.vector - 1) < 1e-9);
		}
	});

	it('calibrations are kept per key (storage, base, model), in one bounded cache', () => {
		clearCalibrations();
		const a = calibrationOf('disk\nbase-a\nkb\n256');
		a.record(0.4);
		assert.equal(calibrationOf('disk\nbase-a\nkb\n256').count, 1);
		assert.equal(calibrationOf('disk\nbase-a\nkb\n1024').count, 0, 'another model starts again');
		assert.equal(calibrationOf('disk\nbase-b\nkb\n256').count, 0);
		for (let i = 0; i < 3000; i++) calibrationOf(`k${i}`);
		const stats = cacheStats().find((s) => s.name === 'fusion calibrations')!;
		assert.ok(stats.entries <= stats.maxEntries!, JSON.stringify(stats));
		clearCalibrations();
	});
});

describe('fusion with the weights a search earns', () => {
	// "a" is the words' clear best; "b" their second (0.8 of the best, scaled), and the vectors' first.
	const lexical = [
		chunk('a1', 10),
		chunk('b2', 8.4),
		...Array.from({ length: 8 }, (_, i) => chunk(`x${i + 10}`, 2 - i * 0.1)),
	];
	const vector = [
		chunk('b2', 0.9),
		...Array.from({ length: 8 }, (_, i) => chunk(`x${i + 10}`, 0.5)),
		chunk('a1', 0.1),
	];
	const now = new Date('2026-01-02T00:00:00Z');
	const first = (weights?: { lexical: number; vector: number }) =>
		fuse(lexical, vector, { now, weights })[0].text;

	it('a strong word ranking is not dragged down by vectors no better than chance', () => {
		const words = lexical.map((c) => c.score);
		const chance = weigh(
			{ lexical: words, vector: ranking(0.6) },
			standout(ranking(0.6)),
			new Calibration(),
		);
		assert.equal(chance.vector, 0, JSON.stringify(chance));
		assert.equal(first(chance), 'a1', 'the words lead');
		// A fixed share of 0.2 (the weight before) lets chance vectors carry "b" over "a".
		assert.equal(first({ lexical: 0.8, vector: 0.2 }), 'b2');
	});

	it('a strong vector ranking is not dragged down by a weaker word ranking', () => {
		const strong = weigh(
			{ lexical: lexical.map((c) => c.score), vector: ranking(0.95) },
			standout(ranking(0.6)),
			new Calibration(),
		);
		assert.ok(strong.vector > 0.9, JSON.stringify(strong));
		assert.equal(first(strong), 'b2', 'the vectors lead');
		assert.equal(first({ lexical: 0.8, vector: 0.2 }), 'b2');
		assert.equal(first({ lexical: 0.95, vector: 0.05 }), 'a1');
	});
});

describe('weightOf: from nothing at chance to the words’ equal and beyond', () => {
	it('is 0 at chance, rises steadily, is at least the minimum from the midpoint on, and never passes the maximum', () => {
		assert.equal(weightOf(0), 0);
		assert.equal(weightOf(-0.5), 0, 'worse than chance: nothing');
		const ratios = Array.from({ length: 41 }, (_, i) => i * 0.025);
		const w = ratios.map(weightOf);
		for (let i = 1; i < w.length; i++) assert.ok(w[i] > w[i - 1], `rises at ${ratios[i]}`);
		assert.ok(weightOf(0.05) < 0.05, `barely above chance: ${weightOf(0.05)}`);
		for (const r of ratios.filter((x) => x >= 0.25)) assert.ok(weightOf(r) >= VECTOR_WEIGHT_MIN);
		assert.ok(weightOf(1) <= VECTOR_WEIGHT_MAX && weightOf(1) > 0.9);
	});
});
