// Facts in a chat turn (ChatTurn): the section comes before recall, within the Facts Token Budget and
// counted against the history budget; learn() after save() runs the batched extraction over the saved
// turns; report() says what happened; a turn without facts is as it was.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	ChatTurn,
	ConversationMemory,
	Facts,
	FACTS_START,
	LocalDiskStorage,
	LongTermMemory,
	RECALL_START,
	TiktokenCounter,
	encodingForModel,
} from '../../../src/internal';
import type { LearnResult, MemoryStorage, TurnOptions } from '../../../src/internal';
import { standInExtractor } from '../../support/fact-extractor';
import { tempDir } from '../../support/storages';

const ANSWER = 'Thanks for telling me, that is good to know. '.repeat(12); // ~120 tokens

function setup(storage: MemoryStorage = new LocalDiskStorage({ root: tempDir('facts-turn') })) {
	const memory = new ConversationMemory('wf', 'c1', { storage });
	const facts = new Facts({ storage, space: 'base', subject: { userId: 'alice' } });
	const longTerm = new LongTermMemory(
		storage,
		{
			baseId: 'base',
			userId: 'alice',
			scope: 'user',
			topK: 3,
			tokenBudget: 300,
			halfLifeDays: 180,
			capture: true,
		},
		'c1',
		undefined,
	);
	return { storage, memory, facts, longTerm };
}

type Setup = ReturnType<typeof setup>;

function options(s: Setup, query: string, extra: Partial<TurnOptions> = {}): TurnOptions {
	const { extract } = standInExtractor();
	return {
		memory: s.memory,
		read: { maxTokenLimit: 2000 },
		budget: 2000,
		longTerm: { memory: s.longTerm, query },
		facts: {
			memory: s.facts,
			extract,
			tokenBudget: 200,
			source: { workflowId: 'wf', conversationId: 'c1' },
		},
		...extra,
	};
}

/** One whole turn: open, save, capture, learn. */
async function say(s: Setup, text: string, extra: Partial<TurnOptions> = {}) {
	const turn = await ChatTurn.open(options(s, text, extra));
	const added = await turn.save({ userContent: text, assistantContent: ANSWER });
	await turn.capture({ userText: text, answer: ANSWER, ...added });
	const learned = await turn.learn(added);
	return { turn, learned: learned as LearnResult | undefined };
}

describe('facts in a chat turn', () => {
	it('learns in batches after save(); the facts section comes first, before recall', async () => {
		const s = setup();
		const extracted: boolean[] = [];
		for (const text of [
			'I have a dog named Biscuit.',
			'I live in Lisbon near the river.',
			'What a day it was.',
			'Tell me about gardens.',
			'I work as a nurse at night.',
			'Hmm, ok.',
		]) {
			const { learned } = await say(s, text);
			extracted.push(learned?.extracted === true);
		}
		assert.ok(extracted.filter(Boolean).length <= 2, `calls: ${extracted}`);
		// A short window: the turn that named Biscuit is recalled from outside it.
		const { turn } = await say(s, 'Where does Biscuit sleep?', {
			read: { maxTokenLimit: 700 },
			budget: 700,
		});
		const sections = turn.sections();
		assert.ok(sections[0].startsWith(FACTS_START), sections[0]);
		assert.match(sections[0], /Has a dog named Biscuit/);
		assert.ok(sections[1].startsWith(RECALL_START), 'recall after the facts');
		assert.match(sections[1], /Biscuit/);
		const system = turn.messages('You are kind.', 'hi')[0].content as string;
		assert.ok(system.indexOf(FACTS_START) < system.indexOf(RECALL_START));
		const report = turn.report();
		assert.equal((report.facts as { shown: number }).shown >= 1, true);
		assert.ok(turn.facts && turn.facts.tokens <= 200);
	});

	it('the facts section stays within its budget and the history budget; the history makes room', async () => {
		const s = setup();
		for (let i = 0; i < 30; i++)
			await s.facts.add({ text: `Likes hobby number ${i} very much`, by: 'test' });
		for (let i = 0; i < 8; i++)
			await say(s, `Just chatting, message ${i}.`, { longTerm: undefined, facts: undefined });
		const counter = new TiktokenCounter(encodingForModel(undefined));
		const turn = await ChatTurn.open(
			options(s, 'anything', {
				longTerm: undefined,
				read: { maxTokenLimit: 700 },
				budget: 700,
				facts: { ...options(s, '').facts!, tokenBudget: 250 },
			}),
		);
		const facts = turn.facts!;
		assert.ok(facts.tokens <= 250 && facts.tokens === counter.count(facts.section));
		assert.ok(facts.omitted > 0, 'the oldest facts were left out');
		assert.match(facts.section, /hobby number 29/, 'the newest kept');
		assert.ok(
			turn.history.tokens + facts.tokens <= 700,
			`${turn.history.tokens} + ${facts.tokens}`,
		);
		const without = await ChatTurn.open(
			options(s, 'anything', {
				longTerm: undefined,
				facts: undefined,
				read: { maxTokenLimit: 700 },
				budget: 700,
			}),
		);
		assert.ok(without.history.turns > turn.history.turns, 'the history gave room to the facts');
	});

	it('superseded facts and fact entries that are not current never reach the model', async () => {
		const s = setup();
		const index = { index: true };
		const o = (q: string) => ({ facts: { ...options(s, q).facts!, ...index, threshold: 0 } });
		await say(s, 'I live in Lisbon by the sea.', o('x'));
		await say(s, 'We moved to Porto by the river.', o('x'));
		const { turn } = await say(s, 'Do you remember Lisbon by the sea?', o('Lisbon by the sea'));
		const text = turn.sections().join('\n');
		assert.match(text, /Lives in Porto/);
		assert.doesNotMatch(text, /Lives in Lisbon/, 'the superseded fact is not shown, nor recalled');
		const hits = await s.longTerm.base.search('Lives in Lisbon', { userId: 'alice' });
		assert.ok(
			hits.some((h) => h.role === 'fact'),
			'fact entries are in the base',
		);
	});

	it('a failing extraction is a warning; the turn is saved and the next turn reads the turns again', async () => {
		const s = setup();
		const failing = async () => {
			throw new Error('model down');
		};
		const f = { ...options(s, '').facts!, extract: failing, threshold: 0 };
		const { turn, learned } = await say(s, 'I have a cat named Tom.', { facts: f });
		assert.match(learned?.error ?? '', /model down/);
		assert.ok(turn.warnings.some((w) => /Facts were not learned/.test(w)));
		assert.equal(
			(turn.report().facts as { extractionError: string }).extractionError,
			learned?.error,
		);
		const { learned: next } = await say(s, 'Nice weather.', {
			facts: { ...f, extract: standInExtractor().extract },
		});
		assert.equal(next?.readTurns, 2);
		assert.deepEqual(
			(await s.facts.get()).facts.map((x) => x.text),
			['Has a cat named Tom'],
		);
	});

	it('without facts, a turn is as before: no facts section, no report entry, learn() does nothing', async () => {
		const s = setup();
		const { turn, learned } = await say(s, 'I have a dog.', { facts: undefined });
		assert.equal(learned, undefined);
		assert.equal(turn.facts, undefined);
		assert.equal('facts' in turn.report(), false);
		assert.ok(turn.sections().every((x) => !x.startsWith(FACTS_START)));
	});
});
