// Hybrid search that gets the best of the connected embedding model: a strong vector ranking leads
// (a weak word ranking does not drag it down), a weak model only adds to the words, the base learns
// which it has over its searches, each search says what it did, and measuring the model costs one
// embedding call per base and process (never the search's answer when it fails). Stand-ins: the
// tests' hashed word features (weak), and a "linked" stand-in that ties a question to its answer
// (bench/linked-vectors.ts), standing in for a model that understands paraphrases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { LinkedEmbedder } from '../../../bench/linked-vectors';
import { clearCalibrations, LocalDiskStorage, MemoryBase } from '../../../src/internal';
import type { Embedder } from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { EVERYDAY } from '../../support/everyday';
import { tempDir } from '../../support/storages';

const QUESTION = 'Which city does my sister call home these days?';
/** The answer shares no word with the question: only a model that understands it finds it. */
const ANSWER = 'Alma moved to Lisbon in spring and loves the river there.';
/** Shares the question's words, answers nothing. */
const DISTRACTOR = 'The city guide said to call home if the days get long.';

/** The everyday messages, the answer and the distractor, in one conversation. */
function messages(): string[] {
	return [
		...EVERYDAY.slice(0, 20),
		ANSWER,
		...EVERYDAY.slice(20, 40),
		DISTRACTOR,
		...EVERYDAY.slice(40),
	];
}

/** Questions about the everyday messages, sharing a word or two with them. */
const ASKED = [
	'where do I get good bread?',
	'what did my pet break?',
	'who took my delivery?',
	'which concert am I going to?',
	'what instrument am I learning?',
	'when is the wedding?',
	'what happened to my phone?',
	'what is wrong with the boiler?',
	'what did I grow outside?',
	'where did I see a bird?',
];

async function base(embedder: Embedder, baseId = 'kb'): Promise<MemoryBase> {
	const mb = new MemoryBase({
		storage: new LocalDiskStorage({ root: tempDir('adaptive') }),
		baseId,
		embedder,
		autoCapture: false,
	});
	let run = 0;
	for (const text of messages())
		await mb.capture({ sessionId: 's', runId: `r${++run}`, messages: [{ text, role: 'user' }] });
	await mb.sync();
	return mb;
}

/** A model that understands the question: the linked stand-in ties it to the answer. */
const understanding = () =>
	new LinkedEmbedder(
		new TestEmbedder(),
		new Map([
			[QUESTION, [1]],
			[ANSWER, [1]],
		]),
		1,
	);

/** Counts embedDocuments calls of any embedder. */
function counted(inner: Embedder) {
	const calls: string[][] = [];
	const embedder: Embedder = {
		embedDocuments: (texts) => (calls.push([...texts]), inner.embedDocuments(texts)),
		embedQuery: (text) => inner.embedQuery(text),
	};
	return { embedder, calls };
}

describe('hybrid search adapts to the embedding model', () => {
	it('a strong vector ranking is not dragged down by a weak word ranking: the answer comes first', async () => {
		clearCalibrations();
		const mb = await base(understanding());
		const words = await mb.search(QUESTION, { sessionId: 's', k: 3, mode: 'lexical' });
		assert.equal(words[0].text, DISTRACTOR, 'the words alone find the distractor');
		const { matches, fusion } = await mb.searchReport(QUESTION, { sessionId: 's', k: 3 });
		assert.equal(matches[0].text, ANSWER, JSON.stringify(fusion));
		assert.equal(fusion.mode, 'hybrid');
		assert.ok(fusion.weights!.vectors > 0.8, JSON.stringify(fusion));
		assert.ok(fusion.vectorEvidence! > 1.5, JSON.stringify(fusion));
		assert.match(fusion.basis!, /stood out/);
	});

	it('a weak model (hashed words) only adds to the words, and the base learns it over its searches', async () => {
		clearCalibrations();
		// 16 dimensions: words collide, every message shares some, as a weak dense model's do.
		const mb = await base(new TestEmbedder(16));
		const reports = [];
		for (const q of ASKED) reports.push((await mb.searchReport(q, { sessionId: 's' })).fusion);
		const judged = reports.filter((r) => /stood out/.test(r.basis ?? ''));
		assert.ok(judged.length >= 5, JSON.stringify(reports));
		const last = judged.at(-1)!;
		assert.ok(last.weights!.vectors < 0.5, JSON.stringify(reports.map((r) => r.weights)));
		assert.match(last.basis!, /and \d+ earlier searches of this base/);
	});

	it('a base deleted and made anew under the same ID learns its model anew', async () => {
		clearCalibrations();
		const root = tempDir('adaptive-anew');
		const open = () =>
			new MemoryBase({
				storage: new LocalDiskStorage({ root }),
				baseId: 'kb-anew',
				embedder: understanding(),
				autoCapture: false,
			});
		const fill = async (mb: MemoryBase) => {
			let run = 0;
			for (const text of messages())
				await mb.capture({
					sessionId: 's',
					runId: `r${++run}`,
					messages: [{ text, role: 'user' }],
				});
			await mb.sync();
		};
		const first = open();
		await fill(first);
		for (let i = 0; i < 3; i++) await first.search(`${QUESTION} ${i}`, { sessionId: 's' });
		const learned = await open().searchReport(QUESTION, { sessionId: 's' });
		assert.match(learned.fusion.basis!, /and 3 earlier searches/);
		await first.delete({ mode: 'cancel', timeoutMs: 1000 });
		const again = open();
		await fill(again);
		const fresh = await again.searchReport(QUESTION, { sessionId: 's' });
		assert.match(fresh.fusion.basis!, /in this search$/, 'nothing learned from the base before');
	});

	it('Search Mode stays the override, and says so', async () => {
		clearCalibrations();
		const mb = await base(understanding());
		assert.deepEqual(
			(await mb.searchReport(QUESTION, { sessionId: 's', mode: 'lexical' })).fusion,
			{
				mode: 'lexical',
			},
		);
		const vector = await mb.searchReport(QUESTION, { sessionId: 's', mode: 'vector', k: 1 });
		assert.deepEqual(vector.fusion, { mode: 'vector' });
		assert.equal(vector.matches[0].text, ANSWER);
	});

	it('the model is measured with one embedding call per base and process; a failed call costs no answer', async () => {
		clearCalibrations();
		const { embedder, calls } = counted(understanding());
		const mb = await base(embedder, 'kb-counted');
		const synced = calls.length;
		await mb.search(QUESTION, { sessionId: 's' });
		assert.equal(calls.length, synced + 1, 'the probes, embedded in one call');
		assert.ok(calls.at(-1)!.length >= 8, 'word-salad probes of the base’s own words');
		for (let i = 0; i < 5; i++) await mb.search(`${QUESTION} ${i}`, { sessionId: 's' });
		assert.equal(calls.length, synced + 1, 'measured once');
		// A model whose document calls fail after the sync: the search answers, its weights say why.
		clearCalibrations();
		let fail = false;
		const flaky: Embedder = {
			embedDocuments: async (texts) => {
				if (fail) throw new Error('embeddings down (test)');
				return understanding().embedDocuments(texts);
			},
			embedQuery: (text) => understanding().embedQuery(text),
		};
		const down = await base(flaky, 'kb-flaky');
		fail = true;
		const r = await down.searchReport(QUESTION, { sessionId: 's', k: 1 });
		assert.equal(r.matches.length, 1);
		assert.match(r.fusion.basis!, /too little to judge/);
		fail = false;
		const again = await down.searchReport(QUESTION, { sessionId: 's', k: 1 });
		assert.ok(again.fusion.vectorEvidence !== undefined, 'measured again once the model answers');
		assert.equal(again.matches[0].text, ANSWER);
	});

	it('a search of every conversation embeds no probes: it weighs as the base’s searches taught, and says so', async () => {
		clearCalibrations();
		const { embedder, calls } = counted(understanding());
		const mb = await base(embedder, 'kb-everyone');
		const synced = calls.length;
		const untaught = await mb.searchReport(QUESTION, { allUsers: true, k: 1 });
		assert.equal(calls.length, synced, 'no probes embedded');
		assert.equal(untaught.fusion.vectorEvidence, undefined);
		assert.match(untaught.fusion.basis!, /too little to judge/);
		// Questions the model understands (the linked stand-in ties each to its answer).
		for (let i = 0; i < 3; i++) await mb.search(QUESTION, { sessionId: 's' });
		const taught = await mb.searchReport(QUESTION, { allUsers: true, k: 1 });
		assert.equal(taught.fusion.vectorEvidence, undefined, JSON.stringify(taught.fusion));
		assert.match(
			taught.fusion.basis!,
			/stood out, against what they find for word salad, in 3 earlier searches of this base$/,
		);
		assert.ok(taught.fusion.weights!.vectors > 0.8, JSON.stringify(taught.fusion));
		assert.equal(taught.matches[0].text, ANSWER);
		assert.ok(taught.coverage, 'and it says what it read');
	});
});
