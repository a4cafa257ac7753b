// Facts indexed in a Memory Base beside the raw turns: a fact is found by the words its evidence used
// (its quote is indexed with it), and a search that hits it brings the captured turn it was learned
// from (withEvidence), looked for among the messages captured shortly before it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { factCaptures, Facts, LocalDiskStorage, MemoryBase } from '../../../src/internal';
import { standInExtractor } from '../../support/fact-extractor';
import { tempDir } from '../../support/storages';

describe('Memory Base: facts linked to their evidence', () => {
	it('a search that hits a fact brings its evidence turn; the fact is found by its quoted words', async () => {
		const storage = new LocalDiskStorage({ root: tempDir('evidence') });
		const base = new MemoryBase({ storage, baseId: 'b' });
		const said = [
			[
				'm1',
				'Morning! Our pup Biscuit chewed the sofa again, I have a dog named Biscuit you know.',
			],
			['m2', 'The weather is grey today.'],
			['m3', 'Lunch was fine.'],
		];
		for (const [id, text] of said)
			await base.capture({
				sessionId: 'c1',
				userId: 'u',
				runId: `turn:${id}`,
				messages: [{ text, role: 'user', metadata: { messageId: id } }],
			});
		const facts = new Facts({ storage, space: 'b', subject: { userId: 'u' } });
		const learned = await facts.learn({
			extract: standInExtractor().extract,
			source: { conversationId: 'c1' },
			messages: said.map(([messageId, text], i) => ({
				messageId,
				role: 'user' as const,
				text,
				at: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
			})),
			force: true,
		});
		assert.deepEqual(
			learned.added.map((f) => f.text),
			['Has a dog named Biscuit you know'],
		);
		for (const input of factCaptures(learned.added, 'u')) await base.capture(input);
		await base.capture({ sessionId: 'c1', userId: 'u', runId: 'later', texts: ['More chat.'] });
		const hits = await base.search('dog named Biscuit', { userId: 'u', k: 5 });
		const fact = hits.find((h) => h.role === 'fact');
		assert.ok(fact, JSON.stringify(hits));
		assert.deepEqual(fact.metadata, { fact: 'f1', evidence: 'm1' });
		const linked = await base.withEvidence(hits);
		const withFact = linked.find((h) => h.role === 'fact');
		assert.equal(withFact?.evidence?.chatMessageId, 'm1');
		assert.match(withFact?.evidence?.text ?? '', /chewed the sofa/);
		assert.ok(linked.filter((h) => h.role !== 'fact').every((h) => h.evidence === undefined));
	});

	it('facts stand apart from the flow: a match brings the message after it across a fact, a fact brings none', async () => {
		const base = new MemoryBase({
			storage: new LocalDiskStorage({ root: tempDir('evidence') }),
			baseId: 'b',
		});
		const capture = (runId: string, text: string, role: string) =>
			base.capture({ sessionId: 'c', runId, messages: [{ text, role }] });
		await capture('r1', 'What did you paint last week?', 'user');
		await capture('r2', 'Has a sailing boat ("I have a sailing boat")', 'fact');
		await capture('r3', 'A sunrise over the lake.', 'assistant');
		await capture('r4', 'Lovely. My sailing trip was cold.', 'user');
		const paint = await base.search('paint', { sessionId: 'c', k: 5, mode: 'lexical' });
		assert.deepEqual(
			paint.map((h) => [h.text, h.context ?? false]),
			[
				['What did you paint last week?', false],
				['A sunrise over the lake.', true],
			],
		);
		const boat = await base.search('boat', { sessionId: 'c', k: 5, mode: 'lexical' });
		assert.deepEqual(
			boat.map((h) => h.role),
			['fact'],
			'a fact brings no neighbour',
		);
	});
});
