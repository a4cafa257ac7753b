// The history read from a sealed log equals the history of the same messages as one version-1 document
// (threadStart + walkThread + selectHistory), for random branching conversations: regenerations from old
// messages, new roots, Dify's UUID_NIL links, tool turns and unanswered turns, at random limits.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	exportDocument,
	importDocument,
	selectHistory,
	threadStart,
	TokenBufferMemory,
	UUID_NIL,
	walkThread,
} from '../../../src/internal';
import type { LogOptions, StoredMessage } from '../../../src/internal';
import { KEY, setup } from './support';

function rng(seed: number) {
	let s = seed >>> 0;
	return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** A random conversation as stored messages; contents are the IDs, so results compare by content. */
function randomConversation(random: () => number, turns: number): StoredMessage[] {
	const out: StoredMessage[] = [];
	const at = '2026-01-01T00:00:00.000Z';
	const msg = (
		id: string,
		parent: string | null,
		role: StoredMessage['role'],
		extra: Partial<StoredMessage> = {},
	): StoredMessage => ({
		message_id: id,
		parent_message_id: parent,
		role,
		content: id,
		files: [],
		token_count: 1 + Math.floor(random() * 40),
		created_at: at,
		...extra,
	});
	for (let t = 0; t < turns; t++) {
		const r = random();
		const last = out.length ? out[out.length - 1].message_id : null;
		const parent =
			out.length === 0
				? null
				: r < 0.65
					? last
					: r < 0.75
						? UUID_NIL
						: r < 0.95
							? out[Math.floor(random() * out.length)].message_id
							: null;
		out.push(msg(`u${t}`, parent, 'user'));
		if (random() < 0.2) {
			out.push(
				msg(`u${t}:s0`, `u${t}`, 'assistant', {
					tool_calls: [{ id: `c${t}`, name: 'tool', args: {} }],
				}),
			);
			out.push(msg(`u${t}:s1`, `u${t}:s0`, 'tool', { tool_call_id: `c${t}` }));
		}
		const prev = out[out.length - 1].message_id;
		out.push(msg(`a${t}`, prev, 'assistant', random() < 0.1 ? { content: '' } : {}));
	}
	return out;
}

describe('sealed history equals single-document history', () => {
	for (let seed = 1; seed <= 12; seed++) {
		it(`random conversation ${seed}`, async () => {
			const random = rng(seed * 7919);
			const log: Partial<LogOptions> = {
				tailMessages: 4 + Math.floor(random() * 8),
				fanOut: 2 + Math.floor(random() * 3),
			};
			log.keepMessages = 1 + Math.floor(random() * (log.tailMessages! - 1));
			log.minMessages = 1;
			const messages = randomConversation(random, 40 + Math.floor(random() * 60));
			const { storage } = setup();
			await importDocument(storage, KEY, { version: 1, messages }, { log });
			// A few more turns through the memory itself: flushes that seal and cascade.
			for (let i = 0; i < 8; i++) {
				const m = new TokenBufferMemory('wf', 'conv', {
					storage,
					log,
					tokenCounter: { encoding: 'len', count: (s) => s.length },
				});
				await m.addMessages({
					messageId: `n${i}`,
					userContent: `n${i}q`,
					assistantContent: `n${i}a`,
				});
				await m.flush();
			}
			const all = (await exportDocument(storage, KEY))!.messages;
			assert.equal(all.length, messages.length + 16);
			for (let q = 0; q < 25; q++) {
				const r = random();
				const parent =
					r < 0.4 ? undefined : r < 0.45 ? null : all[Math.floor(random() * all.length)].message_id;
				const options = {
					maxTokenLimit: Math.floor(random() * 800),
					messageLimit: Math.floor(random() * 10),
				};
				const start = threadStart(KEY, all, parent);
				const expected = selectHistory(walkThread(KEY, all, start), options);
				const m = new TokenBufferMemory('wf', 'conv', { storage, log });
				const got = await m.getHistoryPromptMessages({ ...options, parentMessageId: parent });
				const context = `seed ${seed} query ${q}: parent ${parent} ${JSON.stringify(options)}`;
				assert.deepEqual(
					got.messages.map((p) => p.content),
					expected.turns.flatMap((t) => [t.user, ...t.replies]).map((x) => x.content),
					context,
				);
				assert.equal(got.tokens, expected.tokens, context);
				assert.equal(got.droppedTurns, expected.droppedTurns, context);
				assert.equal(got.parentMessageId, start >= 0 ? all[start].message_id : null, context);
			}
		});
	}
});
