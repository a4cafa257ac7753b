// Two writers extracting at once never lose an operation: each saves by compare-and-swap of the branch
// head, and the one that loses reads again and applies its operations again (quotes and IDs checked
// anew). The writers here are interleaved on purpose: both read before either saves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LocalDiskStorage } from '../../../src/internal';
import type { PromptMessage } from '../../../src/internal';
import { standInAnswer } from '../../support/fact-extractor';
import { tempDir } from '../../support/storages';
import { factsOn, turn } from './support';

/** An extractor that answers only once `gate` opens: every writer has read the facts by then. */
function gated(gate: Promise<void>, seen: string[]) {
	return async (request: PromptMessage[]) => {
		seen.push(String(request[1].content));
		await gate;
		return standInAnswer(request);
	};
}

describe('facts: concurrent writers', () => {
	it('two turns of two conversations extracting at once: both operations land, one re-applied', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('facts') });
		let open!: () => void;
		const gate = new Promise<void>((resolve) => (open = resolve));
		const seen: string[] = [];
		const a = factsOn(storage);
		const b = factsOn(storage); // another object, as another execution would have
		const runs = [
			a.learn({
				extract: gated(gate, seen),
				source: { workflowId: 'wf', conversationId: 'c1' },
				messages: turn('m1', 'I have a dog named Biscuit.'),
				force: true,
			}),
			b.learn({
				extract: gated(gate, seen),
				source: { workflowId: 'wf', conversationId: 'c2' },
				messages: turn('m2', 'I live in Lisbon.'),
				force: true,
			}),
		];
		while (seen.length < 2) await new Promise((r) => setTimeout(r, 1));
		assert.ok(
			seen.every((s) => s.includes('(none yet)')),
			'both read the empty document',
		);
		open();
		const [ra, rb] = await Promise.all(runs);
		assert.deepEqual([ra.added.length, rb.added.length], [1, 1]);
		assert.deepEqual(
			[ra.attempts, rb.attempts].sort(),
			[1, 2],
			'the loser of the race applied its operations again',
		);
		const now = await a.get();
		assert.deepEqual(now.facts.map((f) => f.text).sort(), [
			'Has a dog named Biscuit',
			'Lives in Lisbon',
		]);
		assert.deepEqual(new Set(now.facts.map((f) => f.id)), new Set(['f1', 'f2']), 'unique IDs');
		assert.deepEqual(now.cursors.map((c) => c.conversation_id).sort(), ['c1', 'c2']);
		assert.equal((await a.history()).entries.length, 2);
	});

	it('8 writers on one subject, interleaved: every operation once, a linear history', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('facts') });
		let open!: () => void;
		const gate = new Promise<void>((resolve) => (open = resolve));
		const seen: string[] = [];
		const runs = Array.from({ length: 8 }, (_, i) =>
			factsOn(storage, { maxAttempts: 40 }).learn({
				extract: gated(gate, seen),
				source: { conversationId: `c${i}` },
				messages: turn(`m${i}`, `I have hobby number ${i} these days.`),
				force: true,
			}),
		);
		while (seen.length < 8) await new Promise((r) => setTimeout(r, 1));
		open();
		const results = await Promise.all(runs);
		assert.ok(results.every((r) => r.added.length === 1 && !r.error));
		const texts = (await factsOn(storage).get()).facts.map((f) => f.text).sort();
		assert.deepEqual(
			texts,
			Array.from({ length: 8 }, (_, i) => `Has hobby number ${i} these days`).sort(),
		);
		const history = (await factsOn(storage).history({ limit: 100 })).entries;
		assert.equal(history.length, 8);
		for (let i = 0; i + 1 < history.length; i++)
			assert.equal(history[i].parent, history[i + 1].version);
	});

	it('two turns of one conversation reading the same turns at once: the second adds no copy', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('facts') });
		let open!: () => void;
		const gate = new Promise<void>((resolve) => (open = resolve));
		const seen: string[] = [];
		const messages = turn('m1', 'I have a dog named Biscuit.');
		const runs = [0, 1].map(() =>
			factsOn(storage).learn({
				extract: gated(gate, seen),
				source: { conversationId: 'c1' },
				messages,
				force: true,
			}),
		);
		while (seen.length < 2) await new Promise((r) => setTimeout(r, 1));
		open();
		const results = await Promise.all(runs);
		assert.deepEqual(results.map((r) => r.added.length).sort(), [0, 1]);
		assert.equal(
			results.reduce((n, r) => n + r.dropped.repeat, 0),
			1,
		);
		assert.equal((await factsOn(storage).get()).facts.length, 1);
	});
});
