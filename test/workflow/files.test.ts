// Files through n8n-core's real WorkflowExecute: a chat upload of a PDF, a text file and a CSV reaches
// the model as text in its turn and the next (LLM with Memory), an image the model returns is in the
// next turn's request, and the LLM Memory Store keeps images handed to it as files and replays them.
// The model is the scripted stand-in (no model can be reached from these machines).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterEach, describe, it } from 'node:test';

import type { INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ASSISTANT_FILES_LEAD } from '../../src/internal';
import { TEST_IMAGE_AGENT_TYPE, TestImageAgent } from '../support/agent-stand-in';
import { fixture, NOTES_PDF_TEXT } from '../support/fixtures';
import { LlmMemoryStore, LlmWithMemory } from '../support/node-under-test';
import { echoModelNode, scriptedModelLog } from '../support/scripted-model';
import { tempDir } from '../support/storages';
import { TRIGGER_NODE } from '../support/test-nodes';
import { binaryData, runWorkflow } from '../support/workflow-harness';
import type { WorkflowJson } from '../support/workflow-harness';

const LLM_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
const STORE_TYPE = 'n8n-nodes-llm-memory.llmMemoryStore';
const nodeTypes = {
	[LLM_TYPE]: new LlmWithMemory(),
	[STORE_TYPE]: new LlmMemoryStore(),
	[TEST_IMAGE_AGENT_TYPE]: new TestImageAgent(),
};

type Json = Record<string, any>;

const PNG = Buffer.from(
	'89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489',
	'hex',
);
const DATA_URL = `data:image/png;base64,${PNG.toString('base64')}`;

/** Trigger → `root` (LLM with Memory, or the stand-in agent with a store), with a scripted model. */
function workflow(root: INode, store?: INode): WorkflowJson {
	const model = echoModelNode();
	return {
		id: 'wf-files',
		name: 'files',
		nodes: [TRIGGER_NODE, root, model, ...(store ? [store] : [])],
		connections: {
			Trigger: { main: [[{ node: root.name, type: 'main', index: 0 }]] },
			Model: { ai_languageModel: [[{ node: root.name, type: 'ai_languageModel', index: 0 }]] },
			...(store
				? { [store.name]: { ai_memory: [[{ node: root.name, type: 'ai_memory', index: 0 }]] } }
				: {}),
		},
	};
}

const llmNode = (folder: string, options: INodeParameters = {}): INode => ({
	id: 'llm',
	name: 'LLM',
	type: LLM_TYPE,
	typeVersion: 1,
	position: [200, 0],
	parameters: { memoryMode: 'node', localFolder: folder, options },
});

async function run(wf: WorkflowJson, items: INodeExecutionData[], node = 'LLM'): Promise<Json> {
	const r = await runWorkflow(wf, { nodeTypes, triggerItems: items });
	assert.equal(r.status, 'success', r.error?.message);
	return r.output(node)[0].json as Json;
}

const chat = (chatInput: string, binary?: INodeExecutionData['binary']): INodeExecutionData[] => [
	{ json: { chatInput, sessionId: 's1' }, ...(binary ? { binary } : {}) },
];
/** The chat upload of a PDF, a text file and a CSV, as the Chat Trigger hands it over. */
const upload = () => ({
	data0: binaryData(fixture('notes.pdf'), { mimeType: 'application/pdf', fileName: 'notes.pdf' }),
	data1: binaryData(fixture('notes.txt'), { mimeType: 'text/plain', fileName: 'notes.txt' }),
	data2: binaryData(fixture('cities.csv'), { mimeType: 'text/csv', fileName: 'cities.csv' }),
	data3: binaryData(Buffer.from('PK\u0003\u0004'), {
		mimeType: 'application/zip',
		fileName: 'a.zip',
	}),
});
const lastInput = () => scriptedModelLog.forNode('Model').at(-1)!.rawInput as Json[];

afterEach(() => scriptedModelLog.clear());

describe('LLM with Memory: files a user sends', () => {
	it('a PDF, a text file and a CSV reach the model as text in their turn and the next; a zip is not sent', async () => {
		const wf = workflow(llmNode(tempDir()));
		await run(wf, chat('summarise these', upload()));
		const parts = [
			{ type: 'text', text: `[file: notes.pdf (application/pdf)]\n${NOTES_PDF_TEXT}` },
			{ type: 'text', text: `[file: notes.txt (text/plain)]\n${fixture('notes.txt')}` },
			{ type: 'text', text: `[file: cities.csv (text/csv)]\n${fixture('cities.csv')}` },
		];
		assert.deepEqual(lastInput().at(-1), {
			role: 'user',
			content: [...parts, { type: 'text', text: 'summarise these' }],
		});
		const out = await run(wf, chat('what was the launch word?'));
		assert.deepEqual(lastInput()[0], {
			role: 'user',
			content: [...parts, { type: 'text', text: 'summarise these' }],
		});
		assert.equal(out.memory.historyMessages, 2);
	});

	it('a corrupt PDF is a note and a warning; the turn is answered', async () => {
		const wf = workflow(llmNode(tempDir(), { binaryPropertyNames: 'data*' }));
		const r = await runWorkflow(wf, {
			nodeTypes,
			triggerItems: chat('read this', {
				data0: binaryData(fixture('corrupt.pdf'), {
					mimeType: 'application/pdf',
					fileName: 'broken.pdf',
				}),
			}),
		});
		assert.equal(r.status, 'success', r.error?.message);
		assert.deepEqual(
			r.runData.LLM[0].hints?.map((h) => h.message),
			[
				'broken.pdf: text could not be extracted: it is not a valid PDF (damaged or incomplete). The model got a note instead of its text.',
			],
		);
		assert.deepEqual(lastInput().at(-1)!.content[0], {
			type: 'text',
			text: '[file: broken.pdf (application/pdf): text could not be extracted: it is not a valid PDF (damaged or incomplete)]',
		});
	});

	it('PDF and Audio → Send as File Part: the PDF itself goes to the model, in its turn and the next', async () => {
		const wf = workflow(llmNode(tempDir(), { pdfAndAudio: 'file' }));
		await run(wf, chat('read it', { data0: upload().data0 }));
		const filePart = {
			type: 'file',
			source_type: 'base64',
			mime_type: 'application/pdf',
			data: fixture('notes.pdf').toString('base64'),
			metadata: { filename: 'notes.pdf' },
		};
		assert.deepEqual(lastInput().at(-1)!.content[0], filePart);
		await run(wf, chat('and now?'));
		assert.deepEqual(lastInput()[0].content[0], filePart);
	});
});

describe('LLM with Memory: files a model returns', () => {
	it('an image in the reply is stored with the answer and is in the next turn’s request', async () => {
		const folder = tempDir();
		const wf = workflow(llmNode(folder));
		scriptedModelLog.setHandler('Model', () => ({
			content: 'Here is your picture.',
			parts: [{ type: 'image', url: DATA_URL }],
		}));
		const first = await run(wf, chat('draw a dot'));
		assert.equal(first.output, 'Here is your picture.');
		scriptedModelLog.setHandler('Model', () => 'ok');
		await run(wf, chat('make it blue'));
		assert.deepEqual(lastInput().slice(0, 3), [
			{ role: 'user', content: 'draw a dot' },
			{ role: 'assistant', content: 'Here is your picture.\n[file: image-1.png (image/png)]' },
			{
				role: 'user',
				content: [
					{ type: 'text', text: ASSISTANT_FILES_LEAD },
					{ type: 'image_url', image_url: { url: DATA_URL } },
				],
			},
		]);
		const files = readdirSync(path.join(folder, 'memory_files/wf-files/s1'));
		assert.equal(files.length, 1, 'one content-addressed copy');
	});
});

describe('LLM Memory Store: images handed over by an agent', () => {
	for (const save of ['addMessages', 'saveContext'])
		it(`stores them as files (${save}) and replays them as image parts`, async () => {
			const folder = tempDir();
			const agent: INode = {
				id: 'agent',
				name: 'Agent',
				type: TEST_IMAGE_AGENT_TYPE,
				typeVersion: 1,
				position: [200, 0],
				parameters: { save },
			};
			const store: INode = {
				id: 'store',
				name: 'Memory',
				type: STORE_TYPE,
				typeVersion: 1,
				position: [400, 200],
				parameters: { memoryMode: 'node', localFolder: folder },
			};
			const wf = workflow(agent, store);
			const image = binaryData(PNG, { mimeType: 'image/png', fileName: 'dot.png' });
			await run(wf, chat('what is this?', { data0: image }), 'Agent');
			const doc = JSON.parse(
				readFileSync(path.join(folder, 'node_memory/wf-files/s1/store.json'), 'utf8'),
			);
			assert.equal(doc.messages[0].content, 'what is this?', 'the text, without the image');
			assert.deepEqual(
				doc.messages[0].files.map((f: Json) => [f.type, f.mime_type, f.transfer_method, f.size]),
				[['image', 'image/png', 'local_file', PNG.length]],
			);
			const key = doc.messages[0].files[0].key as string;
			assert.deepEqual(readFileSync(path.join(folder, key)), PNG);
			await run(wf, chat('and its colour?'), 'Agent');
			assert.deepEqual(lastInput()[0].content, [
				{ type: 'image_url', image_url: { url: DATA_URL } },
				{ type: 'text', text: 'what is this?' },
			]);
		});
});
