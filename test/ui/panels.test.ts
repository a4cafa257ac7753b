/**
 * What a new user sees in the panels of a real n8n editor (N8N_VERSION; scripts/test.sh runs 2.8.4 and
 * 2.40.7), driven by headless Chromium:
 * - LLM with Memory run from the editor without a session ID answers, and its output pane says that
 *   the call ran without memory (a green run must not hide it);
 * - LLM with Memory with Long-Term Memory, Recall Scope This User and an empty User ID answers, and its
 *   output pane says that recall covered this conversation only;
 * - an LLM Memory Store connected to an AI Agent shows no "connect this memory" notice, while one that
 *   is not connected does;
 * - the Memory Base Tool's panel has no ingest options (chunk size and overlap, batch size, lock), which
 *   belong to the Memory Base node.
 * The model is n8n's OpenAI Chat Model sub-node on the local fake OpenAI server (a stand-in).
 *
 *   node --import tsx --test test/ui/panels.test.ts
 *
 * UI_PANELS_N8N_PORT overrides port 5698. Screenshots land in .artifacts/ui/<n8n version>/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { startFakeOpenAi } from '../../demo/model-server';
import type { FakeOpenAi } from '../../demo/model-server';
import { WorkflowBuilder } from '../support/agent-workflows';
import { openEditor } from '../support/editor-session';
import { isN8nInstalled, N8N_VERSION, packPackage, REPO_ROOT } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openAiCredential } from '../support/workflows';

type Json = Record<string, any>;

const PORT = Number(process.env.UI_PANELS_N8N_PORT ?? 5698);
const ARTIFACTS = path.join(REPO_ROOT, '.artifacts/ui', N8N_VERSION);
const INSTALL_ALLOWANCE = isN8nInstalled() ? 0 : 40 * 60_000;

const RUN_WF = 'uiPanelsRun00001';
const PANELS_WF = 'uiPanelsStore001';
const LLM = 'Memoryless LLM';
const NO_USER_WF = 'uiPanelsNoUser01';
const NO_USER = 'LLM Without a User';
const CONNECTED = 'Connected Store';
const LOOSE = 'Loose Store';
const TOOL = 'Long-term memory';
const STORE_NOTICE = /Connect this memory to an AI Agent/;

/** Manual Trigger → LLM with Memory in Conversation mode with a session ID that resolves to nothing. */
function runWorkflow(): Json {
	const w = new WorkflowBuilder(RUN_WF, 'UI test: a memoryless run');
	const trigger = w.add({
		name: 'Manual Trigger',
		type: 'n8n-nodes-base.manualTrigger',
		typeVersion: 1,
	});
	const llm = w.llmWithMemory(LLM, 'ui-panels-llm', {
		promptType: 'define',
		text: 'hello',
		memoryMode: 'conversation',
		conversationIdType: 'customKey',
		conversationId: '={{ $json.nothing }}',
	});
	return w.main(trigger, llm).json();
}

/** Manual Trigger → LLM with Memory with Long-Term Memory on and a User ID that resolves to nothing. */
function noUserWorkflow(): Json {
	const w = new WorkflowBuilder(NO_USER_WF, 'UI test: long-term memory without a user');
	const trigger = w.add({
		name: 'Manual Trigger',
		type: 'n8n-nodes-base.manualTrigger',
		typeVersion: 1,
	});
	const llm = w.llmWithMemory(NO_USER, 'ui-panels-no-user', {
		promptType: 'define',
		text: 'hello',
		memoryMode: 'conversation',
		conversationIdType: 'customKey',
		conversationId: 'ui-session-1',
		longTermMemory: true,
		longTermUserId: '={{ $json.nobody }}',
	});
	return w.main(trigger, llm).json();
}

/** Chat → AI Agent with a connected LLM Memory Store; a Store and a Memory Base Tool on their own. */
function panelsWorkflow(): Json {
	const w = new WorkflowBuilder(PANELS_WF, 'UI test: sub-node panels');
	const agent = w.agent('Agent', 'be brief');
	w.main(w.chatTrigger('ui0c0de0-0000-4000-8000-0000000000a1'), agent);
	w.sub(w.store(CONNECTED, 'ui-panels-connected'), 'ai_memory', agent);
	w.store(LOOSE, 'ui-panels-loose');
	w.add({
		name: TOOL,
		type: 'n8n-nodes-llm-memory.memoryBaseTool',
		typeVersion: 1,
		parameters: {},
	});
	return w.json();
}

let n8n: N8nInstance | undefined;
let llm: FakeOpenAi | undefined;
let browser: Browser | undefined;
let page: Page;

async function openNode(name: string) {
	await page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`).dblclick();
	await page.locator('[data-test-id="ndv"]').waitFor({ state: 'visible' });
}

async function closeNode() {
	await page.keyboard.press('Escape');
	await page.locator('[data-test-id="ndv"]').waitFor({ state: 'hidden' });
}

async function openWorkflow(id: string, node: string) {
	await page.goto(`${n8n!.baseUrl}/workflow/${id}`);
	await page
		.locator(`[data-test-id="canvas-node"][data-node-name="${node}"]`)
		.waitFor({ timeout: 60_000 });
}

/** Runs `body`; on failure a screenshot named after `name` is kept for the artifacts. */
async function shot<T>(name: string, body: () => Promise<T>): Promise<T> {
	try {
		return await body();
	} catch (error) {
		await page.screenshot({ path: path.join(ARTIFACTS, `panels-${name}.png`) }).catch(() => {});
		throw error;
	}
}

describe(
	`Panels in the n8n ${N8N_VERSION} editor (headless Chromium)`,
	{ timeout: 360_000 + INSTALL_ALLOWANCE },
	() => {
		before(
			async () => {
				mkdirSync(ARTIFACTS, { recursive: true });
				llm = await startFakeOpenAi({ port: 0 });
				n8n = await joinSharedN8n({
					tarball: await packPackage(),
					port: PORT,
					credentials: [openAiCredential(llm.url)],
					workflows: [runWorkflow(), noUserWorkflow(), panelsWorkflow()],
					publish: [],
				});
				({ browser, page } = await openEditor(n8n));
			},
			{ timeout: 240_000 + INSTALL_ALLOWANCE },
		);

		after(async () => {
			await browser?.close().catch(() => undefined);
			await n8n?.stop();
			await llm?.close();
		});

		it('a run without a session ID answers and its output pane says it had no memory', async () => {
			await shot('memoryless-run', async () => {
				await openWorkflow(RUN_WF, LLM);
				await openNode(LLM);
				const before = llm!.requests().length;
				await page.locator('[data-test-id="node-execute-button"]').first().click();
				const output = page.locator('[data-test-id="output-panel"]');
				await output
					.getByText(/No session ID was found, so this call ran without memory/)
					.first()
					.waitFor({ state: 'visible', timeout: 90_000 });
				assert.ok(llm!.requests().length > before, 'the model was called: the run answered');
				await page.screenshot({ path: path.join(ARTIFACTS, 'panels-memoryless-hint.png') });
				await closeNode();
			});
		});

		it('Long-Term Memory with an empty User ID: the output pane says recall covered this conversation only', async () => {
			await shot('empty-user-id', async () => {
				await openWorkflow(NO_USER_WF, NO_USER);
				await openNode(NO_USER);
				const before = llm!.requests().length;
				await page.locator('[data-test-id="node-execute-button"]').first().click();
				const output = page.locator('[data-test-id="output-panel"]');
				await output
					.getByText(/the User ID is empty, so recall covered this conversation only/)
					.first()
					.waitFor({ state: 'visible', timeout: 90_000 });
				assert.ok(llm!.requests().length > before, 'the model was called: the run answered');
				await page.screenshot({ path: path.join(ARTIFACTS, 'panels-empty-user-id-hint.png') });
				await closeNode();
			});
		});

		it('a Store connected to an AI Agent shows no connection notice; a loose one does', async () => {
			await shot('store-notice', async () => {
				await openWorkflow(PANELS_WF, CONNECTED);
				await openNode(LOOSE);
				await page.getByText(STORE_NOTICE).first().waitFor({ state: 'visible' });
				// The panel is ready once its Session ID field is shown; only then is "no notice" meaningful.
				await page.getByText('Session ID', { exact: true }).first().waitFor();
				await closeNode();
				await openNode(CONNECTED);
				await page.getByText('Session ID', { exact: true }).first().waitFor();
				assert.equal(await page.getByText(STORE_NOTICE).first().isVisible(), false);
				await closeNode();
			});
		});

		it('the Memory Base Tool panel has no ingest options', async () => {
			await shot('tool-panel', async () => {
				await openWorkflow(PANELS_WF, TOOL);
				await openNode(TOOL);
				const ndv = page.locator('[data-test-id="ndv"]');
				await ndv.getByText('Memory Base ID', { exact: true }).first().waitFor();
				await ndv.getByText('Top K', { exact: true }).first().waitFor();
				const text = await ndv.innerText();
				// The ingest options live in the Memory Base node's Options collection: the Tool has none.
				assert.ok(!/add option/i.test(text), 'the Tool panel has an Options collection');
				for (const field of [
					'Chunk Size',
					'Chunk Overlap',
					'Embedding Batch Size',
					'Lock Duration',
				])
					assert.ok(!text.includes(field), `the Tool panel shows "${field}"`);
				await page.screenshot({ path: path.join(ARTIFACTS, 'panels-memory-base-tool.png') });
				await closeNode();
			});
		});
	},
);
