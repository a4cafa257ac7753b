// Versioned data in-process through n8n-core's real WorkflowExecute: LLM with Memory's Versioned Data
// option (tool calling and the JSON-reply fallback, with a scripted model, the only stand-in) and every
// operation of the LLM Memory Manager's Versioned Data resource, bad input included.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { after, afterEach, describe, it } from 'node:test';

import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { LocalDiskStorage, VersionedData } from '../../src/internal';
import { chat, nodeTypes, workflow } from '../support/manager-workflows';
import type { LlmSpec } from '../support/manager-workflows';
import { ensureRgw, rgwCredentials, rgwStorage } from '../support/rgw';
import { scriptedModelLog } from '../support/scripted-model';
import type { NormalizedMessage, ReplyHandler, ScriptedTurn } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { runWorkflow } from '../support/workflow-harness';
import type { WorkflowRunResult } from '../support/workflow-harness';

type Json = Record<string, any>;

const RECORD = { inci: 'WATER', category: 'OTHERS', noael: [] };
const TO_FRAGRANCE = [{ op: 'replace', path: '/category', value: 'FRAGRANCE' }];
const FRAGRANCE_LINE = 'replaced /category: "OTHERS" → "FRAGRANCE"';

/** LLM with Memory with Versioned Data on (Conversation mode), its scripted model able to call tools. */
function editor(params: INodeParameters = {}, model: INodeParameters = {}): LlmSpec {
	return {
		name: 'Editor',
		id: 'node-editor',
		params: {
			memoryMode: 'conversation',
			versionedData: true,
			initialData: JSON.stringify(RECORD),
			...params,
		},
		model: { toolCalling: true, ...model },
	};
}

const updateData = (patch: unknown, summary?: string): ScriptedTurn => ({
	tool_calls: [{ name: 'update_data', args: { patch, ...(summary ? { summary } : {}) } }],
});

/**
 * The scripted model of the seed's scenario: a message mentioning FRAGRANCE gets an update_data call
 * (`turn` overrides it); after a tool result it confirms; anything else is answered in words.
 */
function editorModel(
	turn: ScriptedTurn = updateData(TO_FRAGRANCE, 'Changed category to FRAGRANCE'),
) {
	const handler: ReplyHandler = (messages) => {
		const last = messages.at(-1) as NormalizedMessage;
		if (last.role === 'tool') return `Done. Tool said: ${last.content}`;
		if (last.content.includes('FRAGRANCE')) return turn;
		return `Answer to "${last.content}"`;
	};
	scriptedModelLog.setHandler('Editor Model', handler);
}

/** One chat turn through LLM with Memory; the run. */
async function say(
	folder: string,
	text: string,
	llm: LlmSpec = editor(),
	opts: { id?: string; session?: string } = {},
): Promise<WorkflowRunResult> {
	return await runWorkflow(workflow(folder, { id: opts.id, llms: [llm] }), {
		nodeTypes,
		triggerItems: chat(text, opts.session ?? 's1'),
	});
}

const answered = (r: WorkflowRunResult): Json => {
	assert.equal(r.status, 'success', `${r.error?.message} ${r.error?.description ?? ''}`);
	return r.output('Editor')[0].json;
};

/** The versioned data LLM with Memory and the Manager keep (read through the engine). */
const versionsIn = (folder: string) =>
	new VersionedData({
		storage: new LocalDiskStorage({ root: folder }),
		appId: 'wf-a',
		conversationId: 's1',
	});

/** Version files on disk (none: no folder). */
function versionFiles(folder: string, appId = 'wf-a', conversationId = 's1'): string[] {
	const dir = path.join(folder, 'versioned_data', appId, conversationId, 'versions');
	return existsSync(dir) ? readdirSync(dir).sort() : [];
}

/** The system message the model of call `index` was sent. */
const systemOf = (index = -1) =>
	scriptedModelLog.forNode('Editor Model').at(index)!.messages[0].content;

/** Runs Trigger → Manager (Versioned Data) once; the run. */
async function manage(
	folder: string,
	params: INodeParameters,
	triggerItems: INodeExecutionData[] = [{ json: { sessionId: 's1' } }],
	opts: { id?: string; onError?: INode['onError']; credentials?: Json; cred?: Json } = {},
): Promise<WorkflowRunResult> {
	const wf = workflow(folder, {
		id: opts.id,
		manager: params,
		managerOnError: opts.onError,
		resource: 'versionedData',
	});
	if (opts.cred) wf.nodes[1].credentials = opts.cred;
	return await runWorkflow(wf, { nodeTypes, triggerItems, credentials: opts.credentials });
}

const ok = (r: WorkflowRunResult): Json[] => {
	assert.equal(r.status, 'success', `${r.error?.message} ${r.error?.description ?? ''}`);
	return r.output('Manager').map((i) => i.json);
};

/** The Manager's error: message, description and the item index n8n shows. */
function failed(r: WorkflowRunResult): {
	message: string;
	description: string;
	itemIndex: unknown;
} {
	assert.equal(r.status, 'error', 'expected the run to fail');
	const error = r.error as unknown as {
		message: string;
		description?: string;
		context?: { itemIndex?: number };
	};
	return {
		message: error.message,
		description: String(error.description ?? ''),
		itemIndex: error.context?.itemIndex,
	};
}

const save = (data: unknown, summary: string, extra: INodeParameters = {}): INodeParameters => ({
	operation: 'saveVersion',
	data: typeof data === 'string' ? data : JSON.stringify(data),
	summary,
	...extra,
});

afterEach(() => scriptedModelLog.clear());

describe('LLM with Memory: Versioned Data with tool calling', () => {
	it('the seed’s three requests: Initial Data is version 1, a patch call makes version 2, a question changes nothing and is answered from the version records', async () => {
		const folder = tempDir();
		editorModel();
		const t1 = answered(await say(folder, 'Set up data for WATER'));
		assert.equal(t1.output, 'Answer to "Set up data for WATER"');
		assert.deepEqual(
			{ data: t1.data, version: t1.version, changed: t1.changed },
			{ data: RECORD, version: 1, changed: false },
		);
		assert.deepEqual(t1.versionedData, {
			branch: 'main',
			initialized: true,
			summary: null,
			changes: [],
			patch: [],
		});
		const system1 = systemOf();
		assert.match(system1, /^## Working data \(version 1, branch "main"\)$/m);
		assert.ok(system1.includes(JSON.stringify(RECORD, null, 2)), system1);
		assert.match(
			system1,
			/^## Recent changes \(newest first\)\n- Version 1 \(.+\): Initial data$/m,
		);
		assert.match(system1, /call the update_data tool once with a JSON Patch/);
		assert.deepEqual(
			(scriptedModelLog.forNode('Editor Model')[0].tools as Json[]).map((t) => t.function.name),
			['update_data'],
		);

		const t2 = answered(await say(folder, 'Change category to FRAGRANCE'));
		assert.deepEqual(
			{ data: t2.data, version: t2.version, changed: t2.changed },
			{ data: { ...RECORD, category: 'FRAGRANCE' }, version: 2, changed: true },
		);
		assert.deepEqual(t2.versionedData, {
			branch: 'main',
			initialized: false,
			summary: 'Changed category to FRAGRANCE',
			changes: [FRAGRANCE_LINE],
			patch: TO_FRAGRANCE,
		});
		// Two model calls: the tool call, then the answer written from the tool's result.
		const [call, confirm] = scriptedModelLog.forNode('Editor Model').slice(-2);
		assert.equal(call.toolCalls?.[0].name, 'update_data');
		const result = JSON.stringify({
			ok: true,
			summary: 'Changed category to FRAGRANCE',
			changes: [FRAGRANCE_LINE],
		});
		assert.deepEqual(
			confirm.messages.slice(-2).map((m) => [m.role, m.toolCalls?.[0]?.name ?? m.content]),
			[
				['assistant', 'update_data'],
				['tool', result],
			],
		);
		assert.equal(t2.output, `Done. Tool said: ${result}`);
		const v2 = await versionsIn(folder).getVersion(2);
		assert.equal(v2.message_id, t2.messageId, 'the version names the chat turn that made it');
		assert.equal(v2.parent, 1);

		const t3 = answered(await say(folder, 'What did I just change?'));
		assert.equal(t3.output, 'Answer to "What did I just change?"');
		assert.deepEqual([t3.version, t3.changed], [2, false]);
		const system3 = systemOf();
		assert.match(system3, /^## Working data \(version 2, branch "main"\)$/m);
		assert.match(
			system3,
			/^- Version 2 \(.+\): Changed category to FRAGRANCE\n {2}- replaced \/category: "OTHERS" → "FRAGRANCE"\n- Version 1 \(.+\): Initial data$/m,
		);
		assert.deepEqual(versionFiles(folder), ['0000000001.json', '0000000002.json']);

		// The chat turns record the version each answer is based on (and which one produced it).
		const memory = await runWorkflow(
			workflow(folder, { manager: { operation: 'getMessages', returnAll: true } }),
			{ nodeTypes, triggerItems: [{ json: { sessionId: 's1' } }] },
		);
		assert.deepEqual(
			memory
				.output('Manager')
				.map((i) => i.json)
				.filter((m) => m.role === 'assistant')
				.map((m) => m.dataVersion),
			[
				{ version: 1, branch: 'main', changed: false },
				{ version: 2, branch: 'main', changed: true },
				{ version: 2, branch: 'main', changed: false },
			],
		);
	});

	it('a patch that does not apply saves nothing: the turn fails naming the operation, without a second model call', async () => {
		const folder = tempDir();
		editorModel(updateData([{ op: 'replace', path: '/colour', value: 'blue' }], 'Set colour'));
		answered(await say(folder, 'hello'));
		const r = await say(folder, 'FRAGRANCE please');
		assert.equal(r.status, 'error');
		assert.equal(
			r.error?.message,
			'JSON Patch operation 0 (replace "/colour") failed: "/colour" does not exist',
		);
		assert.match(
			String(r.error?.description),
			/Nothing was saved: the data stays at version 1 and the turn was not added to memory/,
		);
		assert.equal(scriptedModelLog.forNode('Editor Model').length, 2, 'hello, then one call');
		assert.deepEqual(versionFiles(folder), ['0000000001.json']);
		const chatTurns = await runWorkflow(
			workflow(folder, { manager: { operation: 'getMessages', returnAll: true } }),
			{ nodeTypes, triggerItems: [{ json: { sessionId: 's1' } }] },
		);
		assert.equal(chatTurns.output('Manager').length, 2, 'only the first turn is in memory');
	});

	it('On Error → Continue: a bad patch returns the model’s answer (told the error) and the error; nothing is saved', async () => {
		const folder = tempDir();
		editorModel(updateData([{ op: 'remove', path: '/noael/0' }], 'Removed the first NOAEL'));
		const r = await say(folder, 'FRAGRANCE: drop the first NOAEL', {
			...editor(),
			onError: 'continueRegularOutput',
		});
		const out = answered(r);
		const error =
			'JSON Patch operation 0 (remove "/noael/0") failed: "/noael/0": index 0 is out of bounds (the array has 0 elements)';
		assert.equal(out.error, error);
		assert.equal(
			out.output,
			`Done. Tool said: ${JSON.stringify({ ok: false, error, saved: false })}`,
		);
		assert.deepEqual(
			{ data: out.data, version: out.version, changed: out.changed, messageId: out.messageId },
			{ data: RECORD, version: 1, changed: false, messageId: null },
		);
		assert.deepEqual(versionFiles(folder), ['0000000001.json'], 'Initial Data only');
		assert.equal(
			existsSync(path.join(folder, 'conversation_memory/wf-a/s1.json')),
			false,
			'no chat turn',
		);
	});

	it('a JSON Schema violation saves nothing and names the field; an unreadable tool call or a missing summary fails too', async () => {
		const folder = tempDir();
		const schema = JSON.stringify({
			type: 'object',
			properties: { category: { enum: ['OTHERS', 'FRAGRANCE'] } },
			required: ['inci'],
		});
		const llm = editor({ versionedDataOptions: { jsonSchema: schema } });
		editorModel(updateData([{ op: 'replace', path: '/category', value: 'PERFUME' }], 'Perfume'));
		const r = await say(folder, 'FRAGRANCE → PERFUME', llm);
		assert.equal(
			r.error?.message,
			'Data does not match the JSON Schema: /category: must be equal to one of the allowed values (["OTHERS","FRAGRANCE"])',
		);
		assert.match(String(r.error?.description), /Nothing was saved/);
		assert.deepEqual(versionFiles(folder), ['0000000001.json']);

		editorModel(updateData(TO_FRAGRANCE)); // no summary
		assert.equal(
			(await say(folder, 'FRAGRANCE', llm)).error?.message,
			'Invalid summary: the model proposed a change without a summary',
		);
		editorModel({
			invalid_tool_calls: [{ name: 'update_data', args: '{"patch": [', error: 'bad JSON' }],
		});
		assert.equal(
			(await say(folder, 'FRAGRANCE', llm)).error?.message,
			'Invalid update_data call: bad JSON',
		);
		assert.deepEqual(versionFiles(folder), ['0000000001.json']);

		const badInitial = await say(
			tempDir(),
			'hi',
			editor({
				initialData: '{"category": "OTHERS"}',
				versionedDataOptions: { jsonSchema: schema },
			}),
		);
		assert.equal(
			badInitial.error?.message,
			"Data does not match the JSON Schema: (root): must have required property 'inci'",
		);
		assert.equal(scriptedModelLog.forNode('Editor Model').length, 3, 'never called for it');
	});

	it('a patch that leaves the data as it is creates no version; several calls in one reply make one version', async () => {
		const folder = tempDir();
		editorModel(updateData([{ op: 'replace', path: '/category', value: 'OTHERS' }], 'Same'));
		const same = answered(await say(folder, 'FRAGRANCE? no, keep OTHERS'));
		assert.deepEqual([same.version, same.changed], [1, false]);
		assert.deepEqual(versionFiles(folder), ['0000000001.json']);
		editorModel({
			tool_calls: [
				{ name: 'update_data', args: { patch: TO_FRAGRANCE, summary: 'Category' } },
				{
					name: 'update_data',
					args: {
						patch: JSON.stringify([{ op: 'add', path: '/noael/-', value: 1000 }]),
						summary: 'NOAEL',
					},
				},
			],
		});
		const both = answered(await say(folder, 'FRAGRANCE and a NOAEL of 1000'));
		assert.deepEqual(both.data, { ...RECORD, category: 'FRAGRANCE', noael: [1000] });
		assert.deepEqual([both.version, both.versionedData.summary], [2, 'Category; NOAEL']);
		const confirm = scriptedModelLog.forNode('Editor Model').at(-1)!;
		assert.deepEqual(
			confirm.messages.filter((m) => m.role === 'tool').map((m) => m.toolCallId),
			['call_0', 'call_1'],
			'each call gets its result',
		);
	});

	it('without Initial Data the model starts from null and creates version 1; another branch must exist first', async () => {
		const folder = tempDir();
		editorModel(updateData([{ op: 'replace', path: '', value: { inci: 'ALOE' } }], 'Created'));
		const out = answered(
			await say(folder, 'FRAGRANCE: create a record', editor({ initialData: '' })),
		);
		assert.match(
			systemOf(),
			/^## Working data \(no version yet, branch "main"\)\n.*\n```json\nnull\n```$/m,
		);
		assert.deepEqual(
			[out.version, out.data, out.versionedData.initialized],
			[1, { inci: 'ALOE' }, false],
		);
		const draft = await say(folder, 'hi', editor({ versionedDataOptions: { branch: 'draft' } }));
		assert.match(String(draft.error?.message), /Branch "draft" does not exist/);
		assert.equal(
			(await say(folder, 'hi', editor({ versionedDataOptions: { branch: 'a/b' } }))).error?.message,
			'Invalid branch: "a/b" contains "/"',
		);
	});

	it('Versioned Data needs a conversation ID; an Initial Data that is not JSON is refused before the model call', async () => {
		const folder = tempDir();
		const noId = await runWorkflow(workflow(folder, { llms: [editor()] }), {
			nodeTypes,
			triggerItems: [{ json: { chatInput: 'hi' } }],
		});
		assert.equal(noId.error?.message, 'Versioned Data needs a session ID, but none was found');
		const notJson = await say(folder, 'hi', editor({ initialData: '{inci: WATER}' }));
		assert.match(String(notJson.error?.message), /^Initial Data is not valid JSON: /);
		assert.equal(scriptedModelLog.forNode('Editor Model').length, 0);
	});
});

describe('LLM with Memory: Versioned Data with a JSON reply (models without tool calling)', () => {
	it('the reply’s patch makes a version; prose or an empty patch changes nothing; broken JSON saves nothing', async () => {
		const folder = tempDir();
		const llm = editor({}, { toolCalling: false, reply: 'list' });
		const replies = [
			JSON.stringify({
				answer: 'Category is now FRAGRANCE.',
				patch: TO_FRAGRANCE,
				summary: 'Changed category to FRAGRANCE',
			}),
			'You changed the category from OTHERS to FRAGRANCE.',
			'```json\n{"answer": "Nothing to change.", "patch": []}\n```',
			'{"answer": "oops", "patch": [',
		];
		const turn = async (text: string, reply: string) => {
			scriptedModelLog.setHandler('Editor Model', () => reply);
			return await say(folder, text, llm);
		};
		const t1 = answered(await turn('Change category to FRAGRANCE', replies[0]));
		assert.deepEqual(
			[t1.output, t1.version, t1.changed, t1.data.category],
			['Category is now FRAGRANCE.', 2, true, 'FRAGRANCE'],
		);
		assert.match(systemOf(), /Reply with one JSON object and nothing else:/);
		assert.equal(scriptedModelLog.forNode('Editor Model').at(-1)!.tools, undefined);
		const t2 = answered(await turn('What did I just change?', replies[1]));
		assert.deepEqual([t2.output, t2.version, t2.changed], [replies[1], 2, false]);
		assert.match(systemOf(), /- Version 2 \(.+\): Changed category to FRAGRANCE\n {2}- replaced/);
		const t3 = answered(await turn('Anything else?', replies[2]));
		assert.deepEqual([t3.output, t3.changed], ['Nothing to change.', false]);
		const t4 = await turn('Break it', replies[3]);
		assert.match(
			String(t4.error?.message),
			/^Invalid reply: the model's JSON reply does not parse \(/,
		);
		assert.deepEqual(versionFiles(folder), ['0000000001.json', '0000000002.json']);
	});

	it('Change Method "JSON Reply" asks for JSON even when the model can call tools', async () => {
		const folder = tempDir();
		scriptedModelLog.setHandler('Editor Model', () =>
			JSON.stringify({ answer: 'ok', patch: TO_FRAGRANCE, summary: 'Fragrance' }),
		);
		const out = answered(
			await say(folder, 'FRAGRANCE', editor({ versionedDataOptions: { changeMethod: 'json' } })),
		);
		assert.deepEqual([out.output, out.version], ['ok', 2]);
		assert.equal(scriptedModelLog.forNode('Editor Model')[0].tools, undefined);
	});
});

describe('LLM Memory Manager: Versioned Data operations', () => {
	it('Save Version, Get Current, Get Version, History, Diff, Rollback, Create Branch, List Branches', async () => {
		const folder = tempDir();
		const empty = ok(await manage(folder, { operation: 'getCurrent' }));
		assert.deepEqual(empty, [
			{
				workflowId: 'wf-a',
				conversationId: 's1',
				branch: 'main',
				exists: false,
				version: null,
				parent: null,
				summary: null,
				createdAt: null,
				messageId: null,
				data: null,
			},
		]);
		const [v1] = ok(await manage(folder, save(RECORD, 'Initial data')));
		assert.deepEqual(
			{ ...v1, createdAt: undefined },
			{
				workflowId: 'wf-a',
				conversationId: 's1',
				branch: 'main',
				version: 1,
				parent: null,
				summary: 'Initial data',
				createdAt: undefined,
				messageId: null,
				data: RECORD,
			},
		);
		const [v2] = ok(
			await manage(
				folder,
				save({ ...RECORD, category: 'FRAGRANCE' }, 'Changed category to FRAGRANCE', {
					options: { messageId: 'turn-2', expectedVersion: 1 },
				}),
			),
		);
		assert.deepEqual([v2.version, v2.parent, v2.messageId], [2, 1, 'turn-2']);
		// The data may come from an expression (an object), not only typed JSON.
		const [v3] = ok(
			await manage(folder, save('={{ $json.record }}', 'Added a NOAEL'), [
				{ json: { sessionId: 's1', record: { ...RECORD, category: 'FRAGRANCE', noael: [1000] } } },
			]),
		);
		assert.equal(v3.version, 3);
		const [current] = ok(await manage(folder, { operation: 'getCurrent' }));
		assert.deepEqual([current.exists, current.version, current.data.noael], [true, 3, [1000]]);
		const [got] = ok(await manage(folder, { operation: 'getVersion', version: 1 }));
		assert.deepEqual([got.version, got.data], [1, RECORD]);

		const entries = ok(await manage(folder, { operation: 'history', returnAll: true }));
		assert.deepEqual(
			entries.map((e) => [e.version, e.parent, e.summary, e.messageId]),
			[
				[3, 2, 'Added a NOAEL', null],
				[2, 1, 'Changed category to FRAGRANCE', 'turn-2'],
				[1, null, 'Initial data', null],
			],
		);
		assert.ok(entries.every((e) => e.size > 0 && e.branch === 'main'));
		const [page1] = ok(
			await manage(folder, { operation: 'history', limit: 2, options: { groupEntries: true } }),
		);
		assert.deepEqual([page1.entries.map((e: Json) => e.version), page1.nextBefore], [[3, 2], 2]);
		const [page2] = ok(
			await manage(folder, {
				operation: 'history',
				limit: 2,
				options: { groupEntries: true, beforeVersion: page1.nextBefore },
			}),
		);
		assert.deepEqual([page2.entries.map((e: Json) => e.version), page2.nextBefore], [[1], null]);
		const recent = ok(
			await manage(folder, {
				operation: 'history',
				returnAll: true,
				options: { createdAfter: got.createdAt },
			}),
		);
		assert.deepEqual(
			recent.map((e) => e.version),
			[3, 2],
			'Created After leaves out what was saved at or before it',
		);

		const [diff] = ok(await manage(folder, { operation: 'diff', fromVersion: 1, toVersion: 3 }));
		assert.deepEqual(diff, {
			workflowId: 'wf-a',
			conversationId: 's1',
			from: 1,
			to: 3,
			changes: [FRAGRANCE_LINE, 'added /noael/0: 1000'],
			patch: [
				{ op: 'replace', path: '/category', value: 'FRAGRANCE' },
				{ op: 'add', path: '/noael/0', value: 1000 },
			],
		});

		const [rolled] = ok(await manage(folder, { operation: 'rollback', version: 1 }));
		assert.deepEqual(
			[rolled.version, rolled.parent, rolled.summary, rolled.rolledBackTo, rolled.data],
			[4, 3, 'Rolled back to v1', 1, RECORD],
		);
		const [branch] = ok(
			await manage(folder, { operation: 'createBranch', newBranch: 'draft', fromVersion: 2 }),
		);
		assert.deepEqual([branch.branch, branch.version], ['draft', 2]);
		const [onDraft] = ok(
			await manage(folder, save({ draft: true }, 'Draft idea', { branch: 'draft' })),
		);
		assert.deepEqual([onDraft.branch, onDraft.version, onDraft.parent], ['draft', 5, 2]);
		const branches = ok(await manage(folder, { operation: 'listBranches' }));
		assert.deepEqual(
			branches.map((b) => [b.branch, b.version]),
			[
				['draft', 5],
				['main', 4],
			],
		);
		const [main] = ok(await manage(folder, { operation: 'getCurrent' }));
		assert.equal(main.version, 4, 'main did not move');
	});

	it('bad input: an error with the item index and nothing written; schema violations name the field', async () => {
		const folder = tempDir();
		ok(await manage(folder, save(RECORD, 'Initial data')));
		const schema = JSON.stringify({
			type: 'object',
			properties: {
				category: { type: 'string' },
				noael: { type: 'array', items: { type: 'number' } },
			},
		});
		const cases: Array<[INodeParameters, RegExp, RegExp?]> = [
			[
				{ operation: 'getVersion', version: 9 },
				/^Version 9 does not exist in versioned data "wf-a\/s1"$/,
			],
			[{ operation: 'getVersion', version: 0 }, /^Version must be a whole number ≥ 1, got 0$/],
			[{ operation: 'diff', fromVersion: 1, toVersion: 7 }, /^Version 7 does not exist/],
			[{ operation: 'rollback', version: 3 }, /^Version 3 does not exist/],
			[
				{ operation: 'getCurrent', branch: 'a/b' },
				/^Invalid branch: "a\/b" contains "\/"$/,
				/IDs must be strings/,
			],
			[{ operation: 'history', branch: 'nope' }, /^Branch "nope" does not exist/],
			[save(RECORD, 'x', { branch: 'nope' }), /^Branch "nope" does not exist/],
			[
				{ operation: 'createBranch', newBranch: 'main', fromVersion: 1 },
				/^Branch "main" already exists/,
			],
			[
				{ operation: 'createBranch', newBranch: '={{ "" }}', fromVersion: 1 },
				/^No branch name given$/,
			],
			[save('{"inci": WATER}', 'x'), /^Data is not valid JSON: /],
			[save('={{ "" }}', 'x'), /^Data is empty$/],
			[save(RECORD, '={{ "" }}'), /^Invalid summary: is required/],
			[
				save({ ...RECORD, category: 7, noael: ['a'] }, 'x', { options: { jsonSchema: schema } }),
				/^Data does not match the JSON Schema: \/category: must be string; \/noael\/0: must be number$/,
				/Nothing was saved\. Every violation: \/category: must be string; \/noael\/0: must be number/,
			],
			[
				save(RECORD, 'x', { options: { jsonSchema: '{"type": "object", "requried": []}' } }),
				/^Invalid JSON Schema: strict mode: unknown keyword: "requried"$/,
			],
			[
				save(RECORD, 'x', { options: { expectedVersion: 0 } }),
				/^Branch "main" is at version 1, not the expected empty branch; nothing was saved/,
				/Another writer saved a version first/,
			],
			[{ operation: 'history', limit: 0 }, /^Limit must be a whole number ≥ 1, got 0$/],
		];
		for (const [params, message, description] of cases) {
			const error = failed(await manage(folder, params));
			assert.match(error.message, message, JSON.stringify(params));
			if (description) assert.match(error.description, description, JSON.stringify(params));
			assert.equal(error.itemIndex, 0, JSON.stringify(params));
		}
		assert.deepEqual(versionFiles(folder), ['0000000001.json'], 'nothing was written');
		assert.equal(existsSync(path.join(folder, 'versioned_data/wf-a/s1/branches/nope.json')), false);
	});

	it('continueOnFail: a failing item becomes an error item paired with it, the others run; the item index is reported', async () => {
		const folder = tempDir();
		ok(await manage(folder, save(RECORD, 'Initial data')));
		const items = [
			{ json: { sessionId: 's1', v: 1 } },
			{ json: { sessionId: 's1', v: 5 } },
			{ json: { sessionId: { bad: true }, v: 1 } },
		];
		const params = { operation: 'getVersion', version: '={{ $json.v }}' };
		const r = await manage(folder, params, items, { onError: 'continueRegularOutput' });
		assert.deepEqual(
			r.output('Manager').map((i) => [i.pairedItem, i.json.error ?? i.json.version]),
			[
				[{ item: 0 }, 1],
				[{ item: 1 }, 'Version 5 does not exist in versioned data "wf-a/s1"'],
				[{ item: 2 }, 'Session ID must be a string or a number, got an object'],
			],
		);
		assert.equal(failed(await manage(folder, params, items)).itemIndex, 1);
	});

	it('Export → Import into another workflow (JSON and binary file): versions, branches and chat memory; LLM with Memory continues there', async () => {
		const folder = tempDir();
		editorModel();
		answered(await say(folder, 'Set up data for WATER'));
		answered(await say(folder, 'Change category to FRAGRANCE'));
		ok(await manage(folder, { operation: 'createBranch', newBranch: 'draft', fromVersion: 1 }));
		const r = await manage(folder, { operation: 'export', asFile: true });
		const [exported] = ok(r);
		assert.equal(exported.format, 'n8n-nodes-llm-memory/conversation');
		assert.deepEqual(
			exported.versionedData.versions.map((v: Json) => [v.version, v.summary]),
			[
				[1, 'Initial data'],
				[2, 'Changed category to FRAGRANCE'],
			],
		);
		assert.deepEqual(
			exported.versionedData.branches.map((b: Json) => b.branch),
			['draft', 'main'],
		);
		assert.equal(exported.memory.conversation.messages.length, 4, 'the chat memory comes along');
		const file = r.output('Manager')[0].binary!.data;
		assert.deepEqual([file.fileName, file.mimeType], ['conversation-s1.json', 'application/json']);

		const [imported] = ok(
			await manage(folder, { operation: 'import', workflowId: 'wf-b' }, [{ json: exported }]),
		);
		assert.deepEqual(
			{ ...imported, memory: imported.memory.documents },
			{
				workflowId: 'wf-b',
				conversationId: 's1',
				versions: 2,
				branches: 2,
				memory: ['conversation_memory/wf-b/s1.json'],
				replaced: [],
			},
		);
		const fromFile = ok(
			await manage(
				folder,
				{
					operation: 'import',
					workflowId: 'wf-c',
					source: 'binary',
					options: { conversationId: 'moved' },
				},
				[{ json: {}, binary: { data: file } }],
			),
		);
		assert.equal(fromFile[0].conversationId, 'moved');
		assert.deepEqual(versionFiles(folder, 'wf-c', 'moved'), ['0000000001.json', '0000000002.json']);
		const again = failed(
			await manage(folder, { operation: 'import', workflowId: 'wf-b' }, [{ json: exported }]),
		);
		assert.match(again.message, /^Conversation "s1" of "wf-b" already holds \d+ stored object/);
		assert.match(again.description, /Turn on "Overwrite"/);
		const memoryExport = await runWorkflow(workflow(folder, { manager: { operation: 'export' } }), {
			nodeTypes,
			triggerItems: [{ json: { sessionId: 's1' } }],
		});
		const wrongKind = failed(
			await manage(folder, { operation: 'import', workflowId: 'wf-d' }, [
				{ json: memoryExport.output('Manager')[0].json },
			]),
		);
		assert.match(wrongKind.message, /at format: must be "n8n-nodes-llm-memory\/conversation"/);
		assert.equal(existsSync(path.join(folder, 'versioned_data/wf-d')), false);

		// In wf-b, LLM with Memory continues from version 2 with the chat history (Initial Data unused).
		const next = answered(await say(folder, 'What did I just change?', editor(), { id: 'wf-b' }));
		assert.deepEqual(
			[next.version, next.changed, next.versionedData.initialized],
			[2, false, false],
		);
		const call = scriptedModelLog.forNode('Editor Model').at(-1)!;
		assert.match(call.messages[0].content, /Changed category to FRAGRANCE\n {2}- replaced/);
		assert.deepEqual(
			call.messages.slice(1).map((m) => m.role),
			['user', 'assistant', 'user', 'assistant', 'user'],
		);
	});

	it('on S3 (radosgw) through the credential: LLM with Memory saves versions the Manager reads', async () => {
		const s3 = await rgwStorage();
		const { credentials, cred } = rgwCredentials(s3);
		editorModel();
		const wf = workflow('', { llms: [editor({ storage: 's3' })] });
		wf.nodes[1].credentials = cred;
		for (const text of ['Set up data for WATER', 'Change category to FRAGRANCE']) {
			const r = await runWorkflow(wf, { nodeTypes, triggerItems: chat(text), credentials });
			answered(r);
		}
		const entries = ok(
			await manage('', { operation: 'history', returnAll: true, storage: 's3' }, undefined, {
				credentials,
				cred,
			}),
		);
		assert.deepEqual(
			entries.map((e) => e.summary),
			['Changed category to FRAGRANCE', 'Initial data'],
		);
		const keys = (await s3.list('')).map((o) => o.key).filter((k) => k.includes('versioned_data'));
		assert.deepEqual(keys.sort(), [
			'n8n/versioned_data/wf-a/s1/branches/main.json',
			'n8n/versioned_data/wf-a/s1/counter.json',
			'n8n/versioned_data/wf-a/s1/versions/0000000001.json',
			'n8n/versioned_data/wf-a/s1/versions/0000000002.json',
		]);
		const current = await new VersionedData({
			storage: s3,
			appId: 'wf-a',
			conversationId: 's1',
			keyPrefix: 'n8n',
		}).getCurrent();
		assert.equal(current?.data && (current.data as Json).category, 'FRAGRANCE');
	});
});

after(async () => (await ensureRgw()).stop());
