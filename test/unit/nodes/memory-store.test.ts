// The LLM Memory Store's memory object against LangChain 1.1.8 (the @langchain/core n8n 2.8.4's AI nodes
// use, here through n8n-core): our duck-typed messages are rebuilt as LangChain's own classes by a prompt
// template, n8n's message classes are read back, and the calls n8n makes (AI Agent, Chat Trigger reload,
// Respond to Chat, Chat Memory Manager) store whole turns and log on the sub-node's panes.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	AIMessage,
	AIMessageChunk,
	HumanMessage,
	SystemMessage,
	ToolMessage,
} from '@langchain/core/messages';
import { ChatPromptTemplate } from '@langchain/core/prompts';
import type { ISupplyDataFunctions } from 'n8n-workflow';

import codex from '../../../nodes/LlmMemoryStore/LlmMemoryStore.node.json';
import {
	contextContent,
	historyMessages,
	listedMessages,
	StoreMessage,
	toChatMessage,
} from '../../../nodes/LlmMemoryStore/methods/messages';
import { StoreMemory } from '../../../nodes/LlmMemoryStore/methods/store-memory';
import { ChatHistory, NodeTokenBufferMemory } from '../../../src/internal';
import type { PromptMessage } from '../../../src/internal';
import { tempDisk } from '../../support/storages';

const toolTurnPrompt: PromptMessage[] = [
	{ role: 'user', content: 'what is 6*7?' },
	{
		role: 'assistant',
		content: '',
		tool_calls: [{ id: 'c1', name: 'calculator', args: { input: '6*7' } }],
	},
	{ role: 'tool', content: '42', tool_call_id: 'c1', name: 'calculator' },
	{ role: 'assistant', content: 'It is 42.' },
];

/** What n8n 2.8.4's saveToMemory hands chatHistory.addMessages after a tool turn (memoryManagement.js). */
function n8nToolTurn(input: string, output: string) {
	return [
		new HumanMessage(input),
		new AIMessage({
			content: 'Calling calculator with input: {"input":"6*7","id":"c1"}',
			tool_calls: [
				{ id: 'c1', name: 'calculator', args: { input: '6*7', id: 'c1' }, type: 'tool_call' },
			],
		}),
		new ToolMessage({ content: '[{"response":"42"}]', tool_call_id: 'c1', name: 'calculator' }),
		new AIMessage(output),
	];
}

/** A stand-in for n8n's SupplyDataContext that records what the node logs on its panes. */
function fakeContext() {
	const panes: Array<{ pane: 'input' | 'output'; index: number; json?: any; error?: unknown }> = [];
	let runs = 0;
	const ctx = {
		addInputData(_type: string, data: any) {
			panes.push({ pane: 'input', index: runs, json: data[0][0].json });
			return { index: runs++ };
		},
		addOutputData(_type: string, index: number, data: any) {
			panes.push(
				data instanceof Error
					? { pane: 'output', index, error: data }
					: { pane: 'output', index, json: data[0][0].json },
			);
		},
		logAiEvent() {},
		getNode: () => ({
			id: 'store',
			name: 'Memory',
			type: 'n8n-nodes-llm-memory.llmMemoryStore',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		}),
	};
	return { ctx: ctx as unknown as ISupplyDataFunctions, panes };
}

function storeMemory(limits = { messageLimit: 10, maxTokenLimit: 2000 }) {
	const memory = new NodeTokenBufferMemory('wf', 's1', 'store', {
		storage: tempDisk(),
		model: 'gpt-4o-mini',
	});
	const { ctx, panes } = fakeContext();
	return {
		memory,
		panes,
		store: new StoreMemory(ctx, 0, new ChatHistory(memory), limits, {
			mode: 'node',
			key: memory.key,
		}),
	};
}

describe('duck-typed messages', () => {
	it('have their data as own fields, getType/toJSON on the prototype and no _getType', () => {
		const [human, call, tool] = historyMessages(toolTurnPrompt);
		assert.deepEqual(Object.keys(call), ['type', 'content', 'additional_kwargs', 'tool_calls']);
		assert.deepEqual(Object.keys(tool), [
			'type',
			'content',
			'additional_kwargs',
			'name',
			'tool_call_id',
		]);
		assert.equal(human.getType(), 'human');
		assert.equal(Object.hasOwn(human, 'getType'), false);
		assert.equal('_getType' in human, false);
	});

	it('a chat_history placeholder rebuilds them as LangChain’s own HumanMessage, AIMessage with tool calls, ToolMessage', async () => {
		const prompt = ChatPromptTemplate.fromMessages([
			['system', 'sys'],
			['placeholder', '{chat_history}'],
			['human', '{input}'],
		]);
		const out = await prompt.formatMessages({
			chat_history: historyMessages(toolTurnPrompt),
			input: 'next',
		});
		assert.deepEqual(
			out.map((m) => m.constructor.name),
			['SystemMessage', 'HumanMessage', 'AIMessage', 'ToolMessage', 'AIMessage', 'HumanMessage'],
		);
		assert.deepEqual((out[2] as AIMessage).tool_calls, [
			{ id: 'c1', name: 'calculator', args: { input: '6*7' }, type: 'tool_call' },
		]);
		assert.equal((out[3] as ToolMessage).tool_call_id, 'c1');
		assert.equal(out[4].content, 'It is 42.');
	});

	it('toJSON gives LangChain’s serialized form, which the chat widget and the editor read', () => {
		const ours = new StoreMessage('human', { content: 'hi' }).toJSON() as any;
		const theirs = new HumanMessage('hi').toJSON() as any;
		assert.deepEqual([ours.lc, ours.type, ours.id], [theirs.lc, theirs.type, theirs.id]);
		assert.equal(ours.kwargs.content, theirs.kwargs.content);
		assert.deepEqual(
			(new StoreMessage('ai', { content: 'x' }).toJSON() as any).id,
			(new AIMessage('x').toJSON() as any).id,
		);
		assert.deepEqual(
			(new StoreMessage('tool', { content: 'x', tool_call_id: 'c' }).toJSON() as any).id.at(-1),
			'ToolMessage',
		);
	});

	it('a lone answer’s empty user message is not sent to the model', () => {
		const out = historyMessages([
			{ role: 'user', content: '' },
			{ role: 'assistant', content: 'Welcome!' },
		]);
		assert.deepEqual(
			out.map((m) => m.getType()),
			['ai'],
		);
	});

	it('listing hides tool calls and tool results from the chat page’s reload, not the dialogue', () => {
		const listed = listedMessages([
			{ role: 'user', content: 'q', id: 't:user' },
			{
				role: 'assistant',
				content: '',
				toolCalls: [{ id: 'c1', name: 'calculator', args: {} }],
				id: 't:step0',
			},
			{ role: 'tool', content: '42', toolCallId: 'c1', id: 't:step1' },
			{ role: 'assistant', content: '42.', id: 't' },
		]);
		assert.deepEqual(
			listed.map((m) => m.additional_kwargs.hideFromUI === true),
			[false, true, true, false],
		);
		assert.deepEqual(
			listed.map((m) => m.id),
			['t:user', 't:step0', 't:step1', 't'],
		);
	});
});

describe('reading messages n8n hands over', () => {
	it('reads n8n’s LangChain classes, chunks with content arrays, our own messages and the serialized form', () => {
		assert.deepEqual(toChatMessage(new HumanMessage('hi')), { role: 'user', content: 'hi' });
		assert.deepEqual(toChatMessage(new SystemMessage('rules')), {
			role: 'system',
			content: 'rules',
		});
		const chunk = new AIMessageChunk({
			content: [
				{ type: 'text', text: 'Let me ' },
				{ type: 'text', text: 'check.' },
				{ type: 'tool_use', id: 'c9', name: 'calculator', input: {} },
			],
			tool_calls: [{ id: 'c9', name: 'calculator', args: { input: '1+1' }, type: 'tool_call' }],
		});
		assert.deepEqual(toChatMessage(chunk), {
			role: 'assistant',
			content: 'Let me check.',
			toolCalls: [{ id: 'c9', name: 'calculator', args: { input: '1+1' } }],
		});
		assert.deepEqual(
			toChatMessage(new ToolMessage({ content: 'ok', tool_call_id: 'c9', name: 'calculator' })),
			{ role: 'tool', content: 'ok', toolCallId: 'c9', name: 'calculator' },
		);
		const ours = new StoreMessage('ai', { content: 'a', id: 't1' });
		assert.deepEqual(toChatMessage(ours), { role: 'assistant', content: 'a', id: 't1' });
		assert.deepEqual(toChatMessage(ours.toJSON()), { role: 'assistant', content: 'a', id: 't1' });
		assert.deepEqual(toChatMessage({ role: 'user', content: 'plain' }), {
			role: 'user',
			content: 'plain',
		});
	});

	it('takes OpenAI-style tool calls from additional_kwargs, and drops the call ID n8n adds to the tool input', () => {
		const msg = new AIMessage({
			content: '',
			additional_kwargs: {
				tool_calls: [
					{
						id: 'c2',
						type: 'function',
						function: { name: 'search', arguments: '{"q":"x","id":"c2"}' },
					},
				],
			},
		});
		assert.deepEqual(toChatMessage(msg), {
			role: 'assistant',
			content: '',
			toolCalls: [{ id: 'c2', name: 'search', args: { q: 'x' } }],
		});
	});

	it('saveContext values: the named key, else the only key; agent extras are ignored', () => {
		const input = (values: unknown) => contextContent(values, 'input', 'input', 'local_file');
		assert.deepEqual(input({ input: 'q', system_message: 's', formatting_instructions: 'f' }), {
			text: 'q',
		});
		assert.deepEqual(input({ question: 'q', chat_history: [] }), { text: 'q' });
		assert.throws(() => input({ a: 1, b: 2 }), /expected the input under "input"/);
	});
});

describe('the memory object n8n receives', () => {
	it('AI Agent: loads chat_history, stores a tool turn from addMessages, and logs both on the panes', async () => {
		const { store, panes } = storeMemory();
		assert.deepEqual(store.memoryKeys, ['chat_history']);
		assert.deepEqual((await store.loadMemoryVariables({})).chat_history, []);
		await store.chatHistory.addMessages(n8nToolTurn('what is 6*7?', 'It is 42.'));
		await store.saveContext({ input: 'thanks' }, { output: 'you are welcome' });
		const loaded = (await store.loadMemoryVariables({})).chat_history;
		assert.deepEqual(
			loaded.map((m) => m.getType()),
			['human', 'ai', 'tool', 'ai', 'human', 'ai'],
		);
		assert.deepEqual(loaded[1].tool_calls, [
			{ id: 'c1', name: 'calculator', args: { input: '6*7' }, type: 'tool_call' },
		]);
		const actions = panes.filter((p) => p.pane === 'input').map((p) => p.json.action);
		assert.deepEqual(actions, [
			'loadMemoryVariables',
			'addMessages',
			'saveContext',
			'loadMemoryVariables',
		]);
		const lastLoad = panes.filter((p) => p.pane === 'output').at(-1)!.json;
		assert.equal(lastLoad.turns, 2);
		assert.equal(lastLoad.chatHistory[0].id.at(-1), 'HumanMessage');
	});

	it('images handed over with a message are stored as files, not text, and replayed as image parts', async () => {
		const { store, memory } = storeMemory();
		const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1]);
		const url = `data:image/png;base64,${png.toString('base64')}`;
		await store.chatHistory.addMessages([
			new HumanMessage({
				content: [
					{ type: 'text', text: 'what is in this picture?' },
					{ type: 'image_url', image_url: { url } },
				],
			}),
			new AIMessage('A cat.'),
		]);
		await store.saveContext(
			{
				input: [
					{ type: 'image_url', image_url: { url } },
					{ type: 'text', text: 'and this?' },
				],
			},
			{ output: 'The same cat.' },
		);
		const stored = await memory.messages();
		assert.deepEqual(
			stored.map((m) => [m.role, m.content, m.files.map((f) => [f.type, f.mime_type, f.size])]),
			[
				['user', 'what is in this picture?', [['image', 'image/png', png.length]]],
				['assistant', 'A cat.', []],
				['user', 'and this?', [['image', 'image/png', png.length]]],
				['assistant', 'The same cat.', []],
			],
		);
		assert.equal(stored[0].files[0].key, stored[2].files[0].key, 'one content-addressed copy');
		const loaded = (await store.loadMemoryVariables({})).chat_history;
		const image = { type: 'image_url', image_url: { url } };
		assert.deepEqual(loaded[0].content, [
			image,
			{ type: 'text', text: 'what is in this picture?' },
		]);
		// n8n's agent formats chat_history through a prompt template: LangChain's own HumanMessage with the image.
		const prompt = ChatPromptTemplate.fromMessages([['placeholder', '{chat_history}']]);
		const [human] = await prompt.formatMessages({ chat_history: loaded });
		assert.ok(HumanMessage.isInstance(human));
		assert.deepEqual(human.content, [image, { type: 'text', text: 'what is in this picture?' }]);
	});

	it('the window and the token budget apply to loadMemoryVariables in whole turns', async () => {
		const { store } = storeMemory({ messageLimit: 1, maxTokenLimit: 2000 });
		await store.chatHistory.addMessages(n8nToolTurn('q1', 'a1'));
		await store.saveContext({ input: 'q2' }, { output: 'a2' });
		await store.chatHistory.addMessages(n8nToolTurn('q3', 'a3'));
		const windowed = (await store.loadMemoryVariables({})).chat_history;
		assert.deepEqual(
			windowed.map((m) => m.getType()),
			['human', 'ai', 'tool', 'ai'],
			'one whole tool turn',
		);
		assert.deepEqual([windowed[0].content, windowed[3].content], ['q3', 'a3']);
		const { store: tight } = storeMemory({ messageLimit: 10, maxTokenLimit: 0 });
		await tight.saveContext({ input: 'q' }, { output: 'a' });
		assert.deepEqual((await tight.loadMemoryVariables({})).chat_history, []);
	});

	it('Chat Trigger reload and Chat Memory Manager: getMessages lists everything, tool steps marked hideFromUI', async () => {
		const { store } = storeMemory();
		await store.chatHistory.addMessages(n8nToolTurn('q1', 'a1'));
		const listed = await store.chatHistory.getMessages();
		const reload = listed
			.filter((m) => !m.additional_kwargs.hideFromUI)
			.map((m) => m.toJSON() as any);
		assert.deepEqual(
			reload.map((m) => [m.id.at(-1), m.kwargs.content]),
			[
				['HumanMessage', 'q1'],
				['AIMessage', 'a1'],
			],
		);
		assert.equal(listed.length, 4);
	});

	it('Respond to Chat: an AI question on its own, then the user’s reply on its own, both stored at once', async () => {
		const { store, memory } = storeMemory();
		await store.chatHistory.addAIMessage('What is your name?');
		await store.chatHistory.addUserMessage('Bob');
		const fresh = new ChatHistory(memory);
		assert.deepEqual(
			(await fresh.getMessages()).map((m) => `${m.role}: ${m.content}`),
			['assistant: What is your name?', 'user: Bob'],
		);
	});

	it('Chat Memory Manager insert: n8n’s message classes, a lone user message stored when the node is done', async () => {
		const { store, memory } = storeMemory();
		await store.chatHistory.addMessage(new HumanMessage('inserted q'));
		await store.chatHistory.addMessage(new AIMessage('inserted a'));
		await store.chatHistory.addMessage(new HumanMessage('pending'));
		assert.deepEqual(
			(await new ChatHistory(memory).getMessages()).map((m) => m.content),
			['inserted q', 'inserted a'],
		);
		await store.chatHistory.flushOpen(); // the sub-node's closeFunction
		assert.deepEqual(
			(await new ChatHistory(memory).getMessages()).map((m) => m.content),
			['inserted q', 'inserted a', 'pending'],
		);
	});

	it('a system message fails with a node error naming the fix, logged on the output pane', async () => {
		const { store, panes } = storeMemory();
		await assert.rejects(
			store.chatHistory.addMessage(new SystemMessage('be brief')),
			(e: Error) => e.constructor.name === 'NodeOperationError' && /system message/.test(e.message),
		);
		assert.ok(panes.at(-1)!.error instanceof Error);
	});
});

describe('LLM Memory Store settings panel', () => {
	// The path with its extension: "LlmMemoryStore.node" alone resolves to the codex JSON next to it.
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const { LlmMemoryStore } = require(
		path.resolve(__dirname, '../../../nodes/LlmMemoryStore/LlmMemoryStore.node.ts'),
	) as typeof import('../../../nodes/LlmMemoryStore/LlmMemoryStore.node');
	const d = new LlmMemoryStore().description;
	const field = (name: string): any[] => d.properties.filter((p) => p.name === name);

	it('is an ai_memory sub-node (an optional Embedding input with Long-Term Memory, a required Summary Model input when summarizing, a required Facts Model input with Remember Facts), under AI › Memory, with the mode in its subtitle', () => {
		assert.equal(d.name, 'llmMemoryStore');
		// Long-Term Memory may use an embedding model; without one it recalls lexically.
		// The inputs follow the parameters: Summary Model appears with Summarize Older Turns.
		const inputsFor = (parameter: object) => {
			const body = String(d.inputs)
				.replace(/^=\{\{/, '')
				.replace(/\}\}$/, '');
			return new Function('$parameter', `return (${body});`)(parameter);
		};
		const embedding = {
			type: 'ai_embedding',
			displayName: 'Embedding',
			required: false,
			maxConnections: 1,
		};
		const summaryModel = {
			type: 'ai_languageModel',
			displayName: 'Summary Model',
			required: true,
			maxConnections: 1,
		};
		assert.deepEqual(inputsFor({}), []);
		assert.deepEqual(inputsFor({ longTermMemory: true }), [embedding]);
		assert.deepEqual(inputsFor({ longTermMemory: true, historyOverflow: 'dropOldest' }), [
			embedding,
		]);
		assert.deepEqual(inputsFor({ historyOverflow: 'summarize' }), [summaryModel]);
		assert.deepEqual(inputsFor({ longTermMemory: true, historyOverflow: 'summarize' }), [
			embedding,
			summaryModel,
		]);
		// Remember Facts brings the Facts Model, after the Summary Model (the store tells them apart so).
		const factsModel = { ...summaryModel, displayName: 'Facts Model' };
		assert.deepEqual(inputsFor({ rememberFacts: true }), [factsModel]);
		assert.deepEqual(inputsFor({ rememberFacts: false }), []);
		assert.deepEqual(
			inputsFor({ longTermMemory: true, historyOverflow: 'summarize', rememberFacts: true }),
			[embedding, summaryModel, factsModel],
		);
		assert.deepEqual(d.outputs, ['ai_memory']);
		assert.deepEqual(d.outputNames, ['Memory']);
		assert.match(String(d.subtitle), /Conversation memory/);
		assert.match(String(d.subtitle), /Node memory/);
		assert.deepEqual(d.icon, {
			light: 'file:llmMemoryStore.svg',
			dark: 'file:llmMemoryStore.dark.svg',
		});
		assert.deepEqual(codex.categories, ['AI']);
		assert.deepEqual(codex.subcategories.AI, ['Memory']);
		assert.equal(codex.node, 'n8n-nodes-llm-memory.llmMemoryStore');
		assert.equal(typeof new LlmMemoryStore().supplyData, 'function');
	});

	it('settings in n8n’s words: Memory Mode, Session ID (Chat Trigger or defined below), window, budget, storage', () => {
		assert.deepEqual(
			field('memoryMode')[0].options.map((o: { value: string }) => o.value),
			['conversation', 'node'],
		);
		assert.equal(field('memoryMode')[0].default, 'conversation');
		assert.deepEqual(
			field('conversationIdType')[0].options.map((o: { name: string }) => o.name),
			['Connected Chat Trigger Node', 'Define Below'],
		);
		assert.deepEqual(
			field('conversationId').map((p: { displayName: string; default: string }) => [
				p.displayName,
				p.default,
			]),
			[
				['Session ID From Previous Node', '={{ $json.sessionId }}'],
				['Session ID', ''],
			],
		);
		assert.equal(field('contextWindowLength')[0].default, 10);
		assert.equal(field('maxHistoryTokens')[0].default, 2000);
		assert.equal(field('storage')[0].default, 'localDisk');
		assert.deepEqual(d.credentials?.[0], {
			name: 'llmMemoryS3Api',
			required: true,
			testedBy: 'llmMemoryS3ApiTest',
			displayOptions: { show: { storage: ['s3'] } },
		});
		assert.equal(typeof new LlmMemoryStore().methods.credentialTest.llmMemoryS3ApiTest, 'function');
	});

	it('Tool Results in Memory: Keep (the default), Keep a Short Note, Leave Out Tool Turns; the cap only with Keep', () => {
		const [mode] = field('toolResults');
		assert.deepEqual(
			mode.options.map((o: { name: string; value: string }) => [o.name, o.value]),
			[
				['Keep', 'keep'],
				['Keep a Short Note', 'note'],
				['Leave Out Tool Turns', 'leaveOut'],
			],
		);
		assert.equal(mode.default, 'keep');
		assert.equal(mode.noDataExpression, true);
		const [cap] = field('maxToolResultChars');
		assert.equal(cap.displayName, 'Max Characters per Tool Result');
		assert.equal(cap.default, 16_000);
		assert.deepEqual(cap.displayOptions, { show: { toolResults: ['keep'] } });
	});
});
