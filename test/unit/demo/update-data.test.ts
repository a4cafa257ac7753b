// The demo model (demo/model-server.ts) answers an instruction to change the working data with an
// update_data tool call when the request offers LLM with Memory's update_data tool, so Versioned Data
// works offline; markers keep their meaning, and anything else gets the usual text answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { startFakeOpenAi, updateDataArgs } from '../../../demo/model-server';
import type { ChatMessage, FakeOpenAi } from '../../../demo/model-server';
import { dataSection, updateDataTool } from '../../../src/internal';
import type { OpenedData } from '../../../src/internal';

const RECORD = { inci: 'WATER', category: 'OTHERS', noael: [] as number[], notes: '' };

/** The system message LLM with Memory sends with Versioned Data on (its own dataSection). */
function systemWith(data: unknown): ChatMessage {
	const opened = {
		settings: { branch: 'main', historyEntries: 5, method: 'auto' },
		current: { version: 1, data },
		recent: [],
	} as unknown as OpenedData;
	return { role: 'system', content: `You keep a record.\n\n${dataSection(opened, 'tool')}` };
}

const conversation = (text: string, data: unknown = RECORD): ChatMessage[] => [
	systemWith(data),
	{ role: 'user', content: text },
];

describe('demo model: update_data from an instruction', () => {
	it('"set|change|update FIELD to VALUE" and its variants give a patch and a summary', () => {
		// instruction → op, member, value, and what the summary says the value is
		const cases: Array<[string, string, string, unknown, string]> = [
			['Change category to FRAGRANCE', 'replace', 'category', 'FRAGRANCE', 'FRAGRANCE'],
			['please set the Notes to "keep cool".', 'replace', 'notes', 'keep cool', 'keep cool'],
			[
				'change category from OTHERS to FRAGRANCE!',
				'replace',
				'category',
				'FRAGRANCE',
				'FRAGRANCE',
			],
			['The category should be FRAGRANCE', 'replace', 'category', 'FRAGRANCE', 'FRAGRANCE'],
			['update noael = [1, 2.5]', 'replace', 'noael', [1, 2.5], '[1,2.5]'],
			['set category to 7', 'replace', 'category', '7', '7'],
			['set colour to blue', 'add', 'colour', 'blue', 'blue'],
		];
		for (const [text, op, member, value, shown] of cases)
			assert.deepEqual(
				updateDataArgs(text, conversation(text)),
				{ patch: [{ op, path: `/${member}`, value }], summary: `Changed ${member} to ${shown}` },
				text,
			);
	});

	it('field names match ignoring case, spaces and hyphens; JSON Pointer characters are escaped', () => {
		const data = { shelf_life: 12, 'a/b~c': 'x' };
		assert.deepEqual(updateDataArgs('set Shelf Life to 24', conversation('', data)), {
			patch: [{ op: 'replace', path: '/shelf_life', value: 24 }],
			summary: 'Changed shelf_life to 24',
		});
		assert.deepEqual(updateDataArgs('set a/b~c to y', conversation('', data))?.patch, [
			{ op: 'replace', path: '/a~1b~0c', value: 'y' },
		]);
	});

	it('no call for a question, an unknown multi-word field, or working data that is not an object', () => {
		for (const text of ['What did I just change?', 'Set up data for WATER', 'set the up data to x'])
			assert.equal(updateDataArgs(text, conversation(text)), undefined, text);
		assert.equal(updateDataArgs('set x to 1', conversation('', [1, 2])), undefined);
		assert.equal(
			updateDataArgs('set x to 1', [{ role: 'user', content: 'set x to 1' }]),
			undefined,
		);
	});
});

describe('demo model server: update_data over HTTP', () => {
	let llm: FakeOpenAi;
	before(async () => {
		llm = await startFakeOpenAi({ port: 0 });
	});
	after(() => llm.close());

	async function complete(messages: ChatMessage[], extra: Record<string, unknown> = {}) {
		const res = await fetch(`${llm.url}/chat/completions`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ model: 'fake-model', messages, ...extra }),
		});
		assert.equal(res.status, 200);
		return extra.stream ? await res.text() : ((await res.json()) as any).choices[0];
	}
	const tools = { tools: [updateDataTool] };

	it('answers with an update_data call when the tool is offered, and with text once its result is in', async () => {
		const messages = conversation('Change category to FRAGRANCE');
		const choice = await complete(messages, tools);
		assert.equal(choice.finish_reason, 'tool_calls');
		const [call] = choice.message.tool_calls;
		assert.equal(call.function.name, 'update_data');
		assert.deepEqual(JSON.parse(call.function.arguments), {
			patch: [{ op: 'replace', path: '/category', value: 'FRAGRANCE' }],
			summary: 'Changed category to FRAGRANCE',
		});
		const answered = await complete(
			[
				...messages,
				{ role: 'assistant', content: null, tool_calls: choice.message.tool_calls },
				{ role: 'tool', tool_call_id: call.id, content: '{"ok":true}' },
			],
			tools,
		);
		assert.equal(answered.finish_reason, 'stop');
		assert.match(answered.message.content, /with tool results \[\{"ok":true\}\]/);
	});

	it('streams the call too', async () => {
		const sse = await complete(conversation('set notes to keep cool'), { ...tools, stream: true });
		assert.match(sse, /"finish_reason":"tool_calls"/);
		assert.match(sse, /"name":"update_data"/);
	});

	it('without the tool, or with a [[fake:tool=…]] marker, behaves as before', async () => {
		const plain = await complete(conversation('Change category to FRAGRANCE'));
		assert.equal(plain.message.content.startsWith('FAKE-LLM reply to "Change category'), true);
		const marker =
			'Change category to FRAGRANCE [[fake:tool=update_data:{"patch":[],"summary":"s"}]]';
		const choice = await complete(conversation(marker), tools);
		assert.deepEqual(JSON.parse(choice.message.tool_calls[0].function.arguments), {
			patch: [],
			summary: 's',
		});
	});
});
