/**
 * Files end to end on a real n8n (N8N_VERSION: 2.8.4 on Node 20 or 2.40.7 on Node 24): the package is
 * installed from its npm pack tarball; a PDF, a text file and a CSV are uploaded through the Chat
 * Trigger (Allow File Uploads) exactly as the chat widget sends them (multipart form), and LLM with
 * Memory must put their text into the model's request in that turn and the next; an image the model
 * returns must be in the next turn's request. The model is n8n's own OpenAI Chat Model sub-node talking
 * to demo/model-server.ts, which logs every request: the one stand-in, because no real model can be
 * reached from these machines (its `[[fake:image]]` marker makes it return an image, deterministically).
 * Everything else (n8n, the Chat Trigger, its binary data, our node, local-disk storage) is real.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { FAKE_IMAGE_PNG, startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi, LoggedRequest } from '../../demo/model-server';
import { ASSISTANT_FILES_LEAD } from '../../src/internal';
import { sendChat } from '../support/chat';
import type { ChatTurn } from '../support/chat';
import { fixture, NOTES_PDF_TEXT } from '../support/fixtures';
import { packPackage } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { chatWorkflow, openAiCredential } from '../support/workflows';

const WF = { id: 'e2eFilesChat0001', webhookId: 'e2e0c0de-0000-4000-8000-00000000f001' };

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;

/** The chat workflow with file uploads allowed on its Chat Trigger. */
function uploadWorkflow() {
	const wf = chatWorkflow({
		...WF,
		name: 'files: uploads and images',
		llms: [{ name: 'LLM', id: 'e2e-files-llm', parameters: { memoryMode: 'node' } }],
	});
	wf.nodes[0].parameters.options.allowFileUploads = true;
	return wf;
}

const chat = (sessionId: string, chatInput: string, files?: ChatTurn['files']) =>
	sendChat(n8n!.chatUrl(WF.webhookId), { sessionId, chatInput, files });

type Part = { type: string; text?: string };

/**
 * The messages of the newest chat completions request, each message's file parts in name order: n8n's
 * Chat Trigger names uploads in the order they finish arriving, which a larger file can change, so the
 * order among files is n8n's, not ours; every other part keeps its place.
 */
const lastRequest = (): Array<{ role: string; content: unknown }> =>
	(llm!.completions().at(-1) as LoggedRequest).body.messages.map(
		(m: { role: string; content: unknown }) => {
			if (!Array.isArray(m.content)) return m;
			const isFile = (p: Part) => p.type === 'text' && String(p.text).startsWith('[file: ');
			const files = (m.content as Part[])
				.filter(isFile)
				.sort((a, b) => String(a.text).localeCompare(String(b.text)));
			return { ...m, content: [...files, ...(m.content as Part[]).filter((p) => !isFile(p))] };
		},
	);

const upload = [
	{ name: 'notes.pdf', type: 'application/pdf', data: fixture('notes.pdf') },
	{ name: 'notes.txt', type: 'text/plain', data: fixture('notes.txt') },
	{ name: 'cities.csv', type: 'text/csv', data: fixture('cities.csv') },
];
/** The user message of the upload turn, as the model must get it. */
const uploadMessage = {
	role: 'user',
	content: [
		{ type: 'text', text: `[file: cities.csv (text/csv)]\n${fixture('cities.csv')}` },
		{ type: 'text', text: `[file: notes.pdf (application/pdf)]\n${NOTES_PDF_TEXT}` },
		{ type: 'text', text: `[file: notes.txt (text/plain)]\n${fixture('notes.txt')}` },
		{ type: 'text', text: 'summarise these' },
	],
};

describe('files through the Chat Trigger on a real n8n', () => {
	before(async () => {
		const [tarball, fake] = await Promise.all([packPackage(), startFakeOpenAi({ port: 0 })]);
		llm = fake;
		n8n = await joinSharedN8n({
			tarball,
			credentials: [openAiCredential(fake.url)],
			workflows: [uploadWorkflow()],
		});
	});

	after(async () => {
		await n8n?.stop();
		await llm?.close();
	});

	it('a PDF, a text file and a CSV reach the model as text in their turn and in the next', async () => {
		const t1 = await chat('files-s1', 'summarise these', upload);
		assert.equal(t1.status, 200, t1.body);
		assert.deepEqual(lastRequest(), [uploadMessage]);
		const t2 = await chat('files-s1', 'what was the launch word?');
		assert.equal(t2.status, 200, t2.body);
		assert.deepEqual(lastRequest(), [
			uploadMessage,
			{ role: 'assistant', content: t1.shown },
			{ role: 'user', content: 'what was the launch word?' },
		]);
		assert.equal(t2.json.memory.historyMessages, 2);
	});

	it('an image the model returns is stored with its answer and is in the next turn’s request', async () => {
		const t1 = await chat('files-s2', '[[fake:image]] draw a dot');
		assert.equal(t1.status, 200, t1.body);
		const t2 = await chat('files-s2', 'make it blue');
		assert.equal(t2.status, 200, t2.body);
		const dataUrl = `data:image/png;base64,${FAKE_IMAGE_PNG.toString('base64')}`;
		assert.deepEqual(lastRequest(), [
			{ role: 'user', content: '[[fake:image]] draw a dot' },
			{ role: 'assistant', content: `${t1.shown}\n[file: image-1.png (image/png)]` },
			{
				role: 'user',
				content: [
					{ type: 'text', text: ASSISTANT_FILES_LEAD },
					{ type: 'image_url', image_url: { url: dataUrl } },
				],
			},
			{ role: 'user', content: 'make it blue' },
		]);
		const files = path.join(n8n!.memoryRoot, 'memory_files', WF.id, 'files-s2');
		assert.equal(readdirSync(files).length, 1, 'one content-addressed copy of the image');
	});
});
