// Tool turns (issue 9): stored as human, AI with tool_calls, tool results, final AI; replayed in that
// order; windows and budgets cut whole turns only, so history never starts with a tool message or an
// AI tool call whose result was cut off.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { decodeDocument, encodeDocument, TokenBufferMemory } from '../../../src/internal';
import type { MemoryOptions, PromptMessage, TurnInput } from '../../../src/internal';
import { tempDisk } from '../../support/storages';

const roles = (messages: PromptMessage[]) => messages.map((m) => m.role);

function toolTurn(n: number, result = `result ${n}`): TurnInput {
	return {
		userContent: `what is ${n} + ${n}?`,
		steps: [
			{
				role: 'assistant',
				content: '',
				toolCalls: [{ id: `call_${n}`, name: 'calculator', args: { input: `${n}+${n}` } }],
			},
			{ role: 'tool', content: result, toolCallId: `call_${n}`, name: 'calculator' },
		],
		assistantContent: `It is ${2 * n}.`,
	};
}

function setup(extra: Partial<MemoryOptions> = {}) {
	const storage = tempDisk();
	return { storage, options: { storage, model: 'gpt-4o-mini', ...extra } as MemoryOptions };
}

describe('tool turns', () => {
	it('are stored and replayed as human, AI tool call, tool result, final AI, with IDs and arguments', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'c', options);
		const t = await m.addMessages({ ...toolTurn(1), messageId: 't1' });
		await m.flush();
		const got = await options.storage.get(m.key);
		const stored = decodeDocument(m.key, got!.body).messages;
		assert.deepEqual(
			stored.map((s) => [s.message_id, s.parent_message_id, s.role]),
			[
				['t1:user', null, 'user'],
				['t1:step0', 't1:user', 'assistant'],
				['t1:step1', 't1:step0', 'tool'],
				['t1', 't1:step1', 'assistant'],
			],
		);
		assert.equal(t.messageId, 't1');
		const h = await new TokenBufferMemory('wf', 'c', options).getHistoryPromptMessages();
		assert.deepEqual(roles(h.messages), ['user', 'assistant', 'tool', 'assistant']);
		assert.deepEqual(h.messages[1].tool_calls, [
			{ id: 'call_1', name: 'calculator', args: { input: '1+1' } },
		]);
		assert.equal(h.messages[2].tool_call_id, 'call_1');
		assert.equal(h.messages[2].name, 'calculator');
		assert.equal(h.messages[3].content, 'It is 2.');
		assert.ok(stored[1].token_count > 0, 'tool call arguments are counted');
	});

	it('a window or a budget cuts whole turns: history never starts with a tool message or an orphaned call', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'c', options);
		for (let n = 1; n <= 6; n++)
			await m.addMessages(
				n % 2 ? toolTurn(n) : { userContent: `plain ${n}`, assistantContent: `answer ${n}` },
			);
		await m.flush();
		for (const messageLimit of [1, 2, 3, 4, 5]) {
			const h = await m.getHistoryPromptMessages({ messageLimit });
			assert.equal(h.messages[0].role, 'user', `window ${messageLimit}`);
			assert.equal(h.turns, messageLimit);
		}
		for (let maxTokenLimit = 0; maxTokenLimit < 400; maxTokenLimit += 7) {
			const h = await m.getHistoryPromptMessages({ maxTokenLimit });
			if (h.messages.length === 0) continue;
			assert.equal(h.messages[0].role, 'user', `budget ${maxTokenLimit}`);
			const callIds = h.messages.flatMap((x) => x.tool_calls?.map((c) => c.id) ?? []);
			const resultIds = h.messages.filter((x) => x.role === 'tool').map((x) => x.tool_call_id);
			assert.deepEqual(
				callIds,
				resultIds,
				`every call kept has its result (budget ${maxTokenLimit})`,
			);
		}
	});

	it('a tool turn without a final answer (interrupted) is not replayed', async () => {
		const { options } = setup();
		const m = new TokenBufferMemory('wf', 'c', options);
		await m.addMessages({ ...toolTurn(1), assistantContent: '' });
		await m.addMessages({ userContent: 'next', assistantContent: 'ok' });
		await m.flush();
		assert.deepEqual(roles((await m.getHistoryPromptMessages()).messages), ['user', 'assistant']);
	});

	it('huge tool outputs are capped with a note', async () => {
		const { options } = setup({ maxToolOutputChars: 100 });
		const m = new TokenBufferMemory('wf', 'c', options);
		await m.addMessages(toolTurn(1, 'x'.repeat(5000)));
		await m.flush();
		const tool = (await m.getHistoryPromptMessages()).messages[2];
		assert.match(
			String(tool.content),
			/^x{100}\n\[… 4900 more characters of tool output were not kept in memory\]$/,
		);
	});

	it('the schema stays compatible: old documents read, unknown fields kept, tool messages need their call ID', async () => {
		const { options } = setup();
		const at = '2026-01-01T00:00:00.000Z';
		const old = {
			version: 1,
			extra: { kept: true },
			messages: [
				{
					message_id: 'u',
					parent_message_id: null,
					role: 'user',
					content: 'q',
					files: [],
					token_count: 1,
					created_at: at,
					future: 1,
				},
				{
					message_id: 'a',
					parent_message_id: 'u',
					role: 'assistant',
					content: 'a',
					files: [],
					token_count: 1,
					created_at: at,
				},
			],
		};
		assert.equal(decodeDocument('k', encodeDocument(old as never)).messages.length, 2);
		const m = new TokenBufferMemory('wf', 'c', options);
		await options.storage.put(m.key, encodeDocument(old as never));
		await m.addMessages(toolTurn(2));
		await m.flush();
		const doc = decodeDocument(
			m.key,
			(await options.storage.get(m.key))!.body,
		) as unknown as Record<string, any>;
		assert.deepEqual(doc.extra, { kept: true });
		assert.equal(doc.messages[0].future, 1);
		const broken = { version: 1, messages: [{ ...old.messages[0], role: 'tool' }] };
		assert.throws(
			() => decodeDocument('k', encodeDocument(broken as never)),
			/tool messages need "tool_call_id"/,
		);
	});
});
