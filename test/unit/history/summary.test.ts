/**
 * Summarize Older Turns in the engine: a rolling summary of the turns that no longer fit the budget.
 * The summarizer is the demo model's extractive one (the tests' stand-in for a model): it keeps the
 * user's sentences that carry a number or a name, so which facts survive is known.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { extractiveSummary } from '../../../demo/summaries';
import type { ChatMessage } from '../../../demo/messages';
import { ConversationMemory, readSummaries, summariesKey } from '../../../src/internal';
import type { History, PromptMessage, Summarizer } from '../../../src/internal';
import { FILLER, userText } from '../../support/summary-script';
import { memorySetup } from '../../support/storages';

const BUDGET = 1000;

/** The stand-in summarizer, counting its calls; `fail` makes the next calls throw. */
function summarizer() {
	const s = {
		calls: 0,
		failing: 0,
		requests: [] as PromptMessage[][],
		summarize: (async (request) => {
			s.calls++;
			s.requests.push(request);
			if (s.failing > 0) {
				s.failing--;
				throw new Error('model unavailable');
			}
			return extractiveSummary(request as unknown as ChatMessage[]);
		}) as Summarizer,
	};
	return s;
}

/** Everything the model gets before the new message: the summary's section, then the history. */
const seen = (h: History) =>
	[h.summary?.section ?? '', ...h.messages.map((m) => String(m.content))].join('\n');

async function conversation(turns: number, s = summarizer(), setup = memorySetup()) {
	const memory = new ConversationMemory('app', 'c1', setup.options);
	const histories: History[] = [];
	const ids: string[] = [];
	for (let t = 1; t <= turns; t++) {
		const h = await memory.getHistoryPromptMessages({
			maxTokenLimit: BUDGET,
			summary: { summarize: s.summarize },
		});
		histories.push(h);
		const added = await memory.addMessages({
			userContent: userText(t),
			assistantContent: 'Sure, happy to chat.',
		});
		await memory.flush();
		ids.push(added.messageId);
	}
	return { memory, histories, ids, s, setup };
}

describe('Summarize Older Turns (engine)', () => {
	it('facts of turns 3 and 50 reach the model at turn 500, within budget, with ≤ 1 call per 10 turns', async () => {
		const { histories, s } = await conversation(500);
		const last = histories[499];
		assert.match(seen(last), /Ada Lovelace/);
		assert.match(seen(last), /48213/);
		assert.match(seen(last), /Lisbon/);
		assert.ok(s.calls <= 50, `${s.calls} summary calls in 500 turns`);
		assert.ok(s.calls >= 5, `the summary was refreshed (${s.calls} calls)`);
		for (const [i, h] of histories.entries()) {
			const used = h.tokens + (h.summary?.tokens ?? 0);
			assert.ok(used <= BUDGET, `turn ${i + 1}: ${used} tokens sent`);
		}
		// Dropping oldest turns, the same read sees none of the early facts.
		assert.doesNotMatch(last.messages.map((m) => String(m.content)).join('\n'), /Ada|48213/);
		assert.equal(last.summary?.refreshed === true || last.summary?.refreshed === false, true);
		assert.ok((last.summary?.turns ?? 0) > 400, `the summary covers ${last.summary?.turns} turns`);
	});

	it('between two calls the section is byte for byte the same', async () => {
		const { histories } = await conversation(120);
		let stable = 0;
		for (let i = 1; i < histories.length; i++) {
			const [a, b] = [histories[i - 1].summary, histories[i].summary];
			if (!a?.section || !b || b.refreshed) continue;
			assert.equal(b.section, a.section, `turn ${i + 1} changed the section without a call`);
			stable++;
		}
		assert.ok(stable > 50, `${stable} turns reused the section`);
	});

	it('each summarized message is folded in once: a request never repeats a turn of an earlier one', async () => {
		const { s, ids } = await conversation(150);
		const folded = new Set<string>();
		for (const request of s.requests) {
			const turns = String(request[1].content).split('New turns, oldest first:\n')[1];
			for (const block of turns.split('\n\n')) {
				assert.ok(!folded.has(block) || block.includes(FILLER), 'a fact turn was folded twice');
				folded.add(block);
			}
		}
		assert.ok(ids.length === 150);
	});

	it('a regeneration from turn 40 never sees a summary of later turns', async () => {
		const s = summarizer();
		const { memory, ids, setup } = await conversation(120, s);
		const from40 = await memory.getHistoryPromptMessages({
			maxTokenLimit: BUDGET,
			parentMessageId: ids[39],
			summary: { summarize: s.summarize, refresh: false },
		});
		const stored = await readSummaries(setup.storage, { appId: 'app', conversationId: 'c1' });
		const boundaries = new Set(stored.summaries.map((x) => x.boundary));
		if (from40.summary?.boundary) {
			const at = ids.indexOf(from40.summary.boundary);
			assert.ok(at >= 0 && at < 40, `the summary ends at turn ${at + 1}`);
		}
		// Every turn the history shows is on the thread up to turn 40, and the summary's turns fit before.
		assert.ok((from40.summary?.turns ?? 0) + from40.turns <= 40);
		assert.ok(boundaries.size > 0, 'summaries were stored for the main thread');
		// A fact said only after turn 40 on the main thread is not visible from turn 40.
		const later = await conversationWithLateFact();
		assert.doesNotMatch(seen(later.fromEarly), /Reykjavik/);
		assert.match(seen(later.fromLatest), /Reykjavik/);
	});

	it('a failing summarizer leaves the turn running, says why, and the next turn tries again', async () => {
		const s = summarizer();
		const { memory } = await conversation(60, s);
		const before = s.calls;
		s.failing = 1000;
		let failed: History | undefined;
		let added = 0;
		for (; added < 150 && !failed; added++) {
			const h = await memory.getHistoryPromptMessages({
				maxTokenLimit: BUDGET,
				summary: { summarize: s.summarize },
			});
			if (h.summary?.error) failed = h;
			await memory.addMessages({ userContent: FILLER, assistantContent: 'ok' });
			await memory.flush();
		}
		assert.ok(failed, 'a failure was reported');
		assert.match(failed.summary!.error!, /model unavailable/);
		assert.ok(
			failed.tokens <= BUDGET && failed.messages.length > 0,
			'drop-oldest history was sent',
		);
		const calls = s.calls;
		s.failing = 0;
		const next = await memory.getHistoryPromptMessages({
			maxTokenLimit: BUDGET,
			summary: { summarize: s.summarize },
		});
		assert.ok(s.calls > calls && s.calls > before, 'the next turn called the summarizer again');
		assert.equal(next.summary?.error, undefined);
		assert.equal(next.summary?.refreshed, true);
		const all = await memory.getHistoryPromptMessages({ maxTokenLimit: 1_000_000 });
		assert.equal(all.turns, 60 + added, 'every turn is still stored');
	});

	it('an unreadable summaries object is an error, never treated as none, and is not overwritten', async () => {
		const s = summarizer();
		const { memory, setup } = await conversation(60, s);
		const key = summariesKey(memory.key);
		await setup.disk.put(key, Buffer.from('{"version":1,"summaries":[{"oops":true}]}'));
		const calls = s.calls;
		const h = await memory.getHistoryPromptMessages({
			maxTokenLimit: BUDGET,
			summary: { summarize: s.summarize },
		});
		assert.match(h.summary?.error ?? '', /cannot be read/);
		assert.equal(s.calls, calls, 'no summary was made over an unreadable object');
		const after = await setup.disk.get(key);
		assert.equal(Buffer.from(after!.body).toString(), '{"version":1,"summaries":[{"oops":true}]}');
		assert.ok(h.tokens <= BUDGET && h.turns > 0);
	});

	it('clearing the memory removes its summaries: reused message IDs never meet an old summary', async () => {
		const s = summarizer();
		const setup = memorySetup();
		const memory = new ConversationMemory('app', 'c1', setup.options);
		const say = async (t: number, text: string) => {
			await memory.getHistoryPromptMessages({
				maxTokenLimit: 300,
				summary: { summarize: s.summarize },
			});
			await memory.addMessages({ messageId: `m${t}`, userContent: text, assistantContent: 'ok' });
			await memory.flush();
		};
		for (let t = 1; t <= 40; t++) await say(t, t === 2 ? 'My secret code is 7777.' : FILLER);
		assert.ok(
			(await readSummaries(setup.storage, { appId: 'app', conversationId: 'c1' })).summaries
				.length > 0,
		);
		await memory.clear();
		assert.equal(await setup.disk.get(summariesKey(memory.key)), null);
		for (let t = 1; t <= 40; t++) await say(t, FILLER);
		const h = await memory.getHistoryPromptMessages({
			maxTokenLimit: 300,
			summary: { summarize: s.summarize, refresh: false },
		});
		assert.doesNotMatch(seen(h), /7777/);
	});

	it('two writers summarizing one memory at once keep both summaries', async () => {
		const s = summarizer();
		const { memory, setup } = await conversation(60, s);
		const other = new ConversationMemory('app', 'c1', setup.options);
		const read = (m: ConversationMemory, threshold: number) =>
			m.getHistoryPromptMessages({
				maxTokenLimit: 200,
				summary: { summarize: s.summarize, threshold },
			});
		const [a, b] = await Promise.all([read(memory, 0), read(other, 0)]);
		assert.equal(a.summary?.error, undefined);
		assert.equal(b.summary?.error, undefined);
		const stored = await readSummaries(setup.storage, { appId: 'app', conversationId: 'c1' });
		for (const h of [a, b])
			assert.ok(stored.summaries.some((x) => x.boundary === h.summary?.boundary));
	});

	it('refuses a summarizer that is not a function, naming the option', async () => {
		const { options } = memorySetup();
		const memory = new ConversationMemory('app', 'c1', options);
		await assert.rejects(
			memory.getHistoryPromptMessages({
				maxTokenLimit: BUDGET,
				summary: { summarize: 'no' as unknown as Summarizer },
			}),
			/summary\.summarize/,
		);
	});
});

/**
 * 100 turns, then a fact at turn 101 and 40 more turns; read from turn 60 (before the fact) and from
 * the newest turn.
 */
async function conversationWithLateFact() {
	const s = summarizer();
	const { memory, ids } = await conversation(100, s);
	const fact = await memory.addMessages({
		userContent: 'I live in Reykjavik now.',
		assistantContent: 'Noted.',
	});
	await memory.flush();
	for (let t = 0; t < 60; t++) {
		await memory.getHistoryPromptMessages({
			maxTokenLimit: BUDGET,
			summary: { summarize: s.summarize },
		});
		await memory.addMessages({ userContent: FILLER, assistantContent: 'ok' });
		await memory.flush();
	}
	const read = (parentMessageId?: string) =>
		memory.getHistoryPromptMessages({
			maxTokenLimit: BUDGET,
			...(parentMessageId ? { parentMessageId } : {}),
			summary: { summarize: s.summarize },
		});
	assert.ok(fact.messageId);
	return { fromEarly: await read(ids[59]), fromLatest: await read() };
}
