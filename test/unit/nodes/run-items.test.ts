// The one per-item runner every node uses (nodes/shared/run-items.ts), and the operation dispatch on top
// of it: each output item paired with its input item, one NodeOperationError with the item's index, or
// with continueOnFail one item in the failed item's place holding its partial result and the message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { NodeOperationError } from 'n8n-workflow';
import type { IDataObject, IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';

import { ID_RULES, nodeError } from '../../../nodes/shared/errors';
import { runOperation } from '../../../nodes/shared/operation';
import type { Operation } from '../../../nodes/shared/operation';
import { failedItem, runItems } from '../../../nodes/shared/run-items';
import { InvalidIdError, SyncRunningError } from '../../../src/internal';

// The node errors name; neither the runner nor NodeOperationError reads its parameters.
const NODE = { id: 'n', name: 'Node', type: 'test', typeVersion: 1, position: [0, 0] } as INode;

/** An execute context with what the runner uses: input items, continueOnFail and the node. */
function context(items: number, continueOnFail: boolean): IExecuteFunctions {
	const ctx = {
		getInputData: () => Array.from({ length: items }, (_, i) => ({ json: { n: i } })),
		continueOnFail: () => continueOnFail,
		getNode: () => NODE,
	};
	return ctx as unknown as IExecuteFunctions;
}

/** Item 1 fails with `error`; every other item gives two output items. */
function failingAt1(error: unknown) {
	return async (i: number): Promise<INodeExecutionData[]> => {
		if (i === 1) throw error;
		return [{ json: { i, k: 'a' } }, { json: { i, k: 'b' }, binary: {} }];
	};
}

/** The failure runItems threw, checked to be a NodeOperationError. */
async function rejection(promise: Promise<unknown>): Promise<NodeOperationError> {
	try {
		await promise;
	} catch (error) {
		assert.ok(error instanceof NodeOperationError, String(error));
		return error;
	}
	assert.fail('expected a rejection');
}

describe('runItems', () => {
	it('pairs every output item with its input item, however many an item gives', async () => {
		const out = await runItems(context(2, false), async (i) => [
			{ json: { i, k: 'a' } },
			{ json: { i, k: 'b' }, binary: {} },
		]);
		assert.deepEqual(
			out.map((o) => [o.json, o.pairedItem]),
			[
				[{ i: 0, k: 'a' }, { item: 0 }],
				[{ i: 0, k: 'b' }, { item: 0 }],
				[{ i: 1, k: 'a' }, { item: 1 }],
				[{ i: 1, k: 'b' }, { item: 1 }],
			],
		);
		assert.deepEqual(out[1].binary, {}, 'the rest of an item is kept');
	});

	it('without continueOnFail: the first failure is thrown with its item index, later items do not run', async () => {
		const ran: number[] = [];
		const error = await rejection(
			runItems(context(3, false), async (i) => {
				ran.push(i);
				if (i === 1) throw new InvalidIdError('Conversation ID', 'contains a slash');
				return [{ json: {} }];
			}),
		);
		assert.deepEqual(ran, [0, 1]);
		assert.equal(error.message, 'Invalid Conversation ID: contains a slash');
		assert.equal(error.context.itemIndex, 1);
		assert.equal(error.description, ID_RULES, 'engine errors are mapped by asNodeError');
	});

	it('a NodeOperationError passes through once, unchanged (its own item index and description)', async () => {
		const ctx = context(2, false);
		const own = nodeError(ctx, 'The query is empty', 1, 'Give the text to look for.');
		const error = await rejection(runItems(ctx, failingAt1(own)));
		assert.equal(error, own);
		assert.equal(error.context.itemIndex, 1);
		assert.equal(error.description, 'Give the text to look for.');
	});

	it('the Memory Base’s engine errors get its advice', async () => {
		const busy = new SyncRunningError('base', 's1', undefined, undefined, 'a sync');
		const error = await rejection(runItems(context(2, false), failingAt1(busy)));
		assert.equal(error.context.itemIndex, 1);
		assert.match(String(error.description), /Only one sync per conversation/);
	});

	it('with continueOnFail: the failed item becomes one item with the message, paired with it; the others run', async () => {
		const out = await runItems(context(3, true), failingAt1(new Error('disk full')));
		assert.deepEqual(
			out.map((o) => [o.json, o.pairedItem]),
			[
				[{ i: 0, k: 'a' }, { item: 0 }],
				[{ i: 0, k: 'b' }, { item: 0 }],
				[{ error: 'disk full' }, { item: 1 }],
				[{ i: 2, k: 'a' }, { item: 2 }],
				[{ i: 2, k: 'b' }, { item: 2 }],
			],
		);
	});

	it('with continueOnFail: an error’s partialResult is kept in the failed item, the message last', async () => {
		const ctx = context(2, true);
		const partialResult: IDataObject = { output: 'the answer', error: 'overwritten' };
		const error = Object.assign(nodeError(ctx, 'could not be saved', 1), { partialResult });
		const out = await runItems(ctx, failingAt1(error));
		assert.deepEqual(out.at(-1), {
			json: { output: 'the answer', error: 'could not be saved' },
			pairedItem: { item: 1 },
		});
	});
});

describe('failedItem', () => {
	it('puts given fields first (Capture keeps the input item’s), then the partial result and message', () => {
		const error = Object.assign(new Error('no field "output"'), { partialResult: { seen: 1 } });
		assert.deepEqual(failedItem(context(1, true), error, 0, { chatInput: 'hi', seen: 0 }), {
			json: { chatInput: 'hi', seen: 1, error: 'no field "output"' },
			pairedItem: { item: 0 },
		});
	});

	it('without continueOnFail it throws the mapped error with the item index', () => {
		assert.throws(
			() => failedItem(context(1, false), new Error('boom'), 4),
			(e: unknown) => e instanceof NodeOperationError && e.context.itemIndex === 4,
		);
	});
});

describe('runOperation', () => {
	const entry = {
		option: { name: 'Op', value: 'op', action: 'Do it' },
		properties: [],
	};

	it('runs a per-item operation through runItems, with the environment', async () => {
		const op: Operation<string> = {
			...entry,
			async execute(_ctx, i, env) {
				if (i === 1) throw new Error('bad item');
				return [{ json: { i, env } }];
			},
		};
		const out = await runOperation(context(2, true), op, 'env');
		assert.deepEqual(out, [
			{ json: { i: 0, env: 'env' }, pairedItem: { item: 0 } },
			{ json: { error: 'bad item' }, pairedItem: { item: 1 } },
		]);
	});

	it('hands a whole-batch operation all items at once, its output as it is', async () => {
		const given: INodeExecutionData[] = [
			{ json: { all: true }, pairedItem: [{ item: 0 }, { item: 1 }] },
		];
		const op: Operation<string> = {
			...entry,
			async executeAll(ctx, env) {
				assert.equal(env, 'env');
				assert.equal(ctx.getInputData().length, 2);
				return given;
			},
		};
		assert.equal(await runOperation(context(2, true), op, 'env'), given);
	});
});
