/**
 * The LLM Memory Manager's Node field in a real n8n editor (N8N_VERSION; scripts/test.sh runs 2.8.4 and
 * 2.40.7), driven by headless Chromium: From List asks the server for the nodes with memory stored for
 * this workflow. The editor resolves the Workflow ID field's default, {{ $workflow.id }}, before it
 * asks, so the list holds this workflow's node (and not another workflow's, nor Conversation-mode
 * memory); picking an entry fills the field.
 *
 *   node --import tsx --test test/ui/manager.test.ts
 *
 * UI_MANAGER_N8N_PORT overrides port 5697. A screenshot lands in .artifacts/ui/<n8n version>/.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Browser, Page } from 'playwright-core';

import { ConversationMemory, LocalDiskStorage, NodeMemory } from '../../src/internal';
import type { BufferMemory } from '../../src/internal';
import { openEditor } from '../support/editor-session';
import { isN8nInstalled, N8N_VERSION, packPackage, REPO_ROOT } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';

const PORT = Number(process.env.UI_MANAGER_N8N_PORT ?? 5697);
const ARTIFACTS = path.join(REPO_ROOT, '.artifacts/ui', N8N_VERSION);
const INSTALL_ALLOWANCE = isN8nInstalled() ? 0 : 40 * 60_000;

const MANAGER = 'LLM Memory Manager';
const WORKFLOW = {
	id: 'uiManagerTest001',
	name: 'UI test: LLM Memory Manager',
	active: false,
	nodes: [
		{
			id: 'ui-manager',
			name: MANAGER,
			type: 'n8n-nodes-llm-memory.llmMemoryManager',
			typeVersion: 1.1,
			position: [0, 0],
			parameters: {
				resource: 'conversationMemory',
				operation: 'getMessages',
				memoryMode: 'node',
				memoryNode: { __rl: true, mode: 'list', value: '' },
			},
		},
	],
	connections: {},
	settings: {},
};

let n8n: N8nInstance | undefined;
let browser: Browser | undefined;
let page: Page;

/** One turn of memory, in the folder the workflow's nodes use (n8n.memoryRoot). */
async function remember(memory: (storage: LocalDiskStorage) => BufferMemory) {
	const storage = new LocalDiskStorage({ root: n8n!.memoryRoot });
	const m = memory(storage);
	await m.addMessages({ userContent: 'hi', assistantContent: 'hello' });
	await m.flush();
}

describe(
	`LLM Memory Manager in the n8n ${N8N_VERSION} editor (headless Chromium)`,
	{ timeout: 300_000 + INSTALL_ALLOWANCE },
	() => {
		before(
			async () => {
				mkdirSync(ARTIFACTS, { recursive: true });
				const tarball = await packPackage();
				n8n = await joinSharedN8n({ tarball, port: PORT, workflows: [WORKFLOW], publish: [] });
				await remember(
					(storage) => new NodeMemory(WORKFLOW.id, 's1', 'ui-support-bot', { storage }),
				);
				await remember(
					(storage) => new NodeMemory('uiOtherWorkflow1', 's1', 'ui-other', { storage }),
				);
				await remember((storage) => new ConversationMemory(WORKFLOW.id, 's2', { storage }));
				({ browser, page } = await openEditor(n8n));
				await page.goto(`${n8n.baseUrl}/workflow/${WORKFLOW.id}`);
				await page
					.locator(`[data-test-id="canvas-node"][data-node-name="${MANAGER}"]`)
					.waitFor({ timeout: 60_000 });
			},
			// Packing and booting n8n 2.40 takes minutes on a busy machine.
			{ timeout: 240_000 + INSTALL_ALLOWANCE },
		);

		after(async () => {
			await browser?.close().catch(() => undefined);
			await n8n?.stop();
		});

		it(
			'Node → From List shows the nodes with memory of this workflow',
			{ timeout: 60_000 },
			async () => {
				try {
					await page
						.locator(`[data-test-id="canvas-node"][data-node-name="${MANAGER}"]`)
						.dblclick();
					const field = page.locator(
						'[data-test-id="ndv"] [data-test-id="resource-locator-memoryNode"]',
					);
					await field.waitFor({ state: 'visible' });
					const input = field.locator('[data-test-id="rlc-input"]');
					await input.click();
					const items = page.locator('[data-test-id="rlc-item"]');
					await items.first().waitFor({ state: 'visible' });
					const texts = (await items.allInnerTexts()).map((t) => t.trim());
					assert.equal(texts.length, 1, texts.join(' | '));
					assert.equal(texts[0], 'ui-support-bot (1 conversation)');
					await page.screenshot({ path: path.join(ARTIFACTS, 'manager-node-list.png') });
					await items.first().click();
					assert.match(await input.inputValue(), /^ui-support-bot \(1 conversation/);
				} catch (error) {
					await page
						.screenshot({ path: path.join(ARTIFACTS, 'failure-manager-node-list.png') })
						.catch(() => undefined);
					throw error;
				}
			},
		);
	},
);
