// LLM with Memory streaming to a Chat Trigger in Streaming mode (issue 9): the answer goes through the
// model's stream() piece by piece; a model without stream() still gives begin, one item and end; the
// stream ends after the turn is stored; a failure gives exactly one error chunk (n8n sends it itself
// when the node fails, from the error's description; we send it when the node continues on fail).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { IExecuteFunctions } from 'n8n-workflow';

import { callModel } from '../../../nodes/LlmWithMemory/methods/model';
import type { ChatModel } from '../../../nodes/LlmWithMemory/methods/model';
import { runItem } from '../../../nodes/LlmWithMemory/methods/run-item';
import { ChatStream } from '../../../nodes/LlmWithMemory/methods/stream';

interface Chunk {
	type: string;
	itemIndex: number;
	content?: unknown;
}

/** An execute context with just what the node uses; sendChunk is async, as in n8n. */
function context(options: {
	streaming: boolean;
	continueOnFail?: boolean;
	params?: Record<string, unknown>;
}) {
	const chunks: Chunk[] = [];
	const params: Record<string, unknown> = {
		memoryMode: 'none',
		text: 'hello',
		systemMessage: '',
		options: {},
		...options.params,
	};
	const ctx = {
		isStreaming: () => options.streaming,
		sendChunk: async (type: string, itemIndex: number, content?: unknown) => {
			await new Promise((r) => setImmediate(r));
			chunks.push({ type, itemIndex, ...(content !== undefined ? { content } : {}) });
		},
		continueOnFail: () => options.continueOnFail === true,
		getExecutionCancelSignal: () => undefined,
		getNode: () => ({
			id: 'llm',
			name: 'LLM',
			type: 'n8n-nodes-llm-memory.llmWithMemory',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		}),
		getNodeParameter: (name: string, _i: number, fallback?: unknown) =>
			name in params ? params[name] : fallback,
		getInputData: () => [{ json: {} }],
	};
	return { ctx: ctx as unknown as IExecuteFunctions, chunks };
}

async function* pieces(...texts: unknown[]) {
	for (const t of texts) yield t;
}

function model(kind: { stream?: unknown[]; fail?: string } = {}) {
	const calls: string[] = [];
	const m: ChatModel = {
		async invoke() {
			calls.push('invoke');
			if (kind.fail) throw new Error(kind.fail);
			return { content: 'whole answer' };
		},
	};
	if (kind.stream)
		m.stream = async () => {
			calls.push('stream');
			if (kind.fail) throw new Error(kind.fail);
			return pieces(...kind.stream!);
		};
	return { model: m, calls };
}

const types = (chunks: Chunk[]) =>
	chunks.map((c) => (c.type === 'item' ? `item:${c.content}` : c.type));

describe('streaming the answer', () => {
	it('not streaming: invoke(), no chunks', async () => {
		const { ctx, chunks } = context({ streaming: false });
		const { model: m, calls } = model({ stream: ['a'] });
		assert.equal((await callModel(ctx, 0, m, [], ChatStream.open(ctx, 0))).text, 'whole answer');
		assert.deepEqual(calls, ['invoke']);
		assert.deepEqual(chunks, []);
	});

	it('streaming: begin, one item per piece of text through stream(); chunks without text are skipped', async () => {
		const { ctx, chunks } = context({ streaming: true });
		const { model: m, calls } = model({
			stream: [
				{ content: 'Hel' },
				{ content: '' },
				{ content: [{ type: 'text', text: 'lo' }] },
				{ content: [] },
				'!',
			],
		});
		const stream = ChatStream.open(ctx, 0)!;
		assert.equal((await callModel(ctx, 0, m, [], stream)).text, 'Hello!');
		assert.deepEqual(calls, ['stream']);
		assert.deepEqual(
			types(chunks),
			['begin', 'item:Hel', 'item:lo', 'item:!'],
			'the caller ends the stream once memory is saved',
		);
	});

	it('images in the reply come back as files, streamed or not; their text stays the answer', async () => {
		const png = Buffer.from([0x89, 0x50, 0x4e, 0x47]);
		const image = { type: 'image', url: `data:image/png;base64,${png.toString('base64')}` };
		const file = {
			transferMethod: 'tool_file',
			data: new Uint8Array(png),
			mimeType: 'image/png',
			name: 'image-1.png',
		};
		const plain = context({ streaming: false });
		const invoked: ChatModel = {
			invoke: async () => ({ content: [{ type: 'text', text: 'a dot' }, image] }),
		};
		assert.deepEqual(await callModel(plain.ctx, 0, invoked, []), { text: 'a dot', files: [file] });
		const streamed = context({ streaming: true });
		const { model: m } = model({
			stream: [{ content: 'a ' }, { content: 'dot' }, { content: [image] }],
		});
		assert.deepEqual(await callModel(streamed.ctx, 0, m, [], ChatStream.open(streamed.ctx, 0)), {
			text: 'a dot',
			files: [file],
		});
	});

	it('a model without stream() is invoked, and its answer sent as one item', async () => {
		const { ctx, chunks } = context({ streaming: true });
		const { model: m, calls } = model();
		assert.equal((await callModel(ctx, 0, m, [], ChatStream.open(ctx, 0))).text, 'whole answer');
		assert.deepEqual(calls, ['invoke']);
		assert.deepEqual(types(chunks), ['begin', 'item:whole answer']);
	});

	it('runItem: begin, items, end, and the output item is the same as without streaming', async () => {
		const streamed = context({ streaming: true });
		const plain = context({ streaming: false });
		const out = await runItem(streamed.ctx, 0, model({ stream: ['whole ', 'answer'] }).model);
		assert.deepEqual(types(streamed.chunks), ['begin', 'item:whole ', 'item:answer', 'end']);
		assert.ok(streamed.chunks.every((c) => c.itemIndex === 0));
		assert.deepEqual(out, await runItem(plain.ctx, 0, model().model));
	});

	it('a failure that fails the node: no chunk of ours (n8n sends one from the description, which now leads with the message)', async () => {
		const { ctx, chunks } = context({ streaming: true });
		await assert.rejects(
			runItem(ctx, 0, model({ stream: [], fail: 'rate limited' }).model),
			(e: Error & { description?: string }) => {
				assert.equal(e.message, 'The model call failed: rate limited');
				assert.equal(
					e.description,
					'The model call failed: rate limited. Nothing was added to memory.',
				);
				return true;
			},
		);
		assert.deepEqual(types(chunks), ['begin']);
	});

	it('a failure when the node continues on fail: our own error chunk closes the stream', async () => {
		const { ctx, chunks } = context({ streaming: true, continueOnFail: true });
		await assert.rejects(runItem(ctx, 0, model({ stream: [], fail: 'rate limited' }).model));
		assert.deepEqual(chunks.at(-1), {
			type: 'error',
			itemIndex: 0,
			content: 'The model call failed: rate limited. Nothing was added to memory.',
		});
		assert.deepEqual(types(chunks), ['begin', 'error']);
	});

	it('a failure before the model call still gives a whole begin/error sequence when continuing', async () => {
		const { ctx, chunks } = context({
			streaming: true,
			continueOnFail: true,
			params: { text: '' },
		});
		await assert.rejects(runItem(ctx, 0, model().model), /No prompt specified/);
		assert.deepEqual(types(chunks), ['begin', 'error']);
	});
});
