/**
 * Editor UI test on a real n8n, driven by headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core; no Playwright browser download). The n8n is N8N_VERSION (default the newest
 * supported); scripts/test.sh runs this file once for 2.8.4 and once for 2.40.7. The same steps and
 * selectors hold for both; the one place where their editors differ is marked "n8n 2.40" below.
 *
 * Proves that the packed and installed package shows up in the n8n editor:
 *   1. the node panel finds "LLM with Memory" by name (and it is this package's node type);
 *   2. it lands on the canvas, connected after a Chat Trigger;
 *   3. its settings panel (NDV) has the Memory Mode selector with the options Conversation, Node, None;
 *
 * How the node gets onto the canvas: n8n 2.8.4 and 2.40.7 render community nodes in the node panel with
 * draggable="false" and, on click, a "Node details" view whose only action is an "Add to workflow"
 * button (NodeCreator: showActionArrow is true for community nodes, and draggable = !showActionArrow).
 * So a drag from the panel is impossible for this node in these n8n versions; the test clicks, which is
 * exactly what a user has to do. Should a later n8n make the item draggable, the test drags it instead
 * (Playwright's dragTo does drive n8n's HTML5 drop handler: checked with a core node).
 *   4. the canvas accepts the node dropped onto it: since n8n has no drag source for community nodes,
 *      the test builds the drag itself, with the data n8n's panel puts on a drag (key
 *      "nodesAndConnections", {nodes: [{type}], connections: []}), and drops it through n8n's own
 *      canvas drop handler. The node must land where it was dropped.
 *
 *   node --import tsx --test test/ui/editor.test.ts                      (from the repository root)
 *   N8N_VERSION=2.8.4 node --import tsx --test test/ui/editor.test.ts    (another n8n of the matrix)
 *
 * Screenshots: .artifacts/ui/<n8n version>/ (plus failure-*.png/.n8n.log when a step fails). UI_N8N_PORT
 * overrides port 5695, CHROMIUM_PATH overrides /usr/bin/chromium, UPDATE_DOCS_SCREENSHOT=1 refreshes
 * docs/settings-panel.png.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import type { Browser, Locator, Page } from 'playwright-core';

import { isN8nInstalled, N8N_VERSION, packPackage, REPO_ROOT } from '../support/n8n-harness';
import { joinSharedN8n } from '../support/shared-n8n';
import type { N8nInstance } from '../support/n8n-harness';
import { openEditor } from '../support/editor-session';

const PORT = Number(process.env.UI_N8N_PORT ?? 5695);
const ARTIFACTS = path.join(REPO_ROOT, '.artifacts/ui', N8N_VERSION);
// A cold n8n install (ensureN8n, ~5-6 min) happens inside before(); only then allow for it.
const INSTALL_ALLOWANCE = isN8nInstalled() ? 0 : 40 * 60_000;

const NODE_TYPE = 'n8n-nodes-llm-memory.llmWithMemory';
const NODE_NAME = 'LLM with Memory';
const MEMORY_MODES = ['Conversation', 'Node', 'None'];

const WORKFLOW = {
	id: 'uiEditorTest0001',
	name: 'UI test: LLM with Memory',
	active: false,
	nodes: [
		{
			id: 'ui-chat-trigger',
			name: 'When chat message received',
			type: '@n8n/n8n-nodes-langchain.chatTrigger',
			typeVersion: 1.4,
			position: [0, 0],
			webhookId: 'e2e0c0de-0000-4000-8000-0000000000a1',
			parameters: { public: true, mode: 'hostedChat', options: { responseMode: 'lastNode' } },
		},
	],
	connections: {},
	settings: {},
};

let n8n: N8nInstance | undefined;
let browser: Browser | undefined;
let page: Page;

const sel = {
	canvasNodes: '[data-test-id="canvas-node"]',
	ourCanvasNode: `[data-test-id="canvas-node"][data-node-type="${NODE_TYPE}"]`,
	edges: '[data-test-id="edge"]',
	creator: '[data-test-id="node-creator"]',
	creatorSearch: '[data-test-id="node-creator-search-bar"]',
	// One row of the node panel; data-keyboard-nav-id is "<node type>-<uuid>".
	ourCreatorItem: `[data-test-id="item-iterator-item"][data-keyboard-nav-id^="${NODE_TYPE}-"]`,
	ndv: '[data-test-id="ndv"]',
	memoryModeInput: '[data-test-id="ndv"] [data-test-id="parameter-input-memoryMode"] input',
};

/**
 * Waits until the page's finite CSS animations and transitions (popper zoom-in, NDV slide, canvas
 * zoom) have finished, so screenshots show settled UI. Bounded: infinite ones (spinners) are ignored.
 */
async function settle(timeout = 5_000): Promise<void> {
	// A string: this runs in the page, and the test tsconfig has no DOM types.
	await page
		.waitForFunction(
			`document.getAnimations()
			.filter((a) => a.effect?.getComputedTiming().endTime !== Infinity)
			.every((a) => a.playState !== 'running' && a.playState !== 'pending')`,
			undefined,
			{ timeout, polling: 100 },
		)
		.catch(() => undefined); // screenshots are evidence, not assertions: never fail on a slow animation
}

async function shot(name: string): Promise<void> {
	await settle();
	await page.screenshot({ path: path.join(ARTIFACTS, name) });
}

/** Runs one test step; on failure saves a screenshot and the n8n log tail next to the others. */
async function step(name: string, fn: () => Promise<void>): Promise<void> {
	try {
		await fn();
	} catch (error) {
		const slug = name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();
		await page
			?.screenshot({ path: path.join(ARTIFACTS, `failure-${slug}.png`) })
			.catch(() => undefined);
		if (n8n)
			writeFileSync(
				path.join(ARTIFACTS, `failure-${slug}.n8n.log`),
				n8n.log().split('\n').slice(-200).join('\n'),
			);
		throw error;
	}
}

async function count(selector: string): Promise<number> {
	return page.locator(selector).count();
}

/** Waits until `selector` matches exactly `n` elements. */
async function expectCount(selector: string, n: number, timeout = 20_000): Promise<void> {
	await page.waitForFunction(
		`document.querySelectorAll(${JSON.stringify(selector)}).length === ${n}`,
		undefined,
		{
			timeout,
		},
	);
}

describe(
	`LLM with Memory in the n8n ${N8N_VERSION} editor (headless Chromium)`,
	{ timeout: 170_000 + INSTALL_ALLOWANCE },
	() => {
		before(
			async () => {
				mkdirSync(ARTIFACTS, { recursive: true });
				const tarball = await packPackage();
				// Not published: the editor only needs the workflow to exist, and nothing listens on the chat URL.
				n8n = await joinSharedN8n({ tarball, port: PORT, workflows: [WORKFLOW], publish: [] });
				({ browser, page } = await openEditor(n8n));

				await page.goto(`${n8n.baseUrl}/workflow/${WORKFLOW.id}`);
				await page
					.locator(`${sel.canvasNodes}[data-node-name="When chat message received"]`)
					.waitFor({ timeout: 60_000 });
			},
			{ timeout: 150_000 + INSTALL_ALLOWANCE },
		);

		after(async () => {
			await browser?.close().catch(() => undefined);
			await n8n?.stop();
		});

		it('finds "LLM with Memory" in the node panel by its name', { timeout: 60_000 }, async () => {
			await step('node panel search', async () => {
				assert.equal(
					await count(sel.canvasNodes),
					1,
					'the workflow starts with only the Chat Trigger',
				);
				assert.equal(await count(sel.ourCanvasNode), 0);

				// The "+" on the trigger's output opens the node panel and connects whatever is added after it.
				await page.locator('[data-test-id="canvas-handle-plus"]').first().click();
				const search = page.locator(sel.creatorSearch);
				await search.waitFor({ state: 'visible' });
				await search.pressSequentially(NODE_NAME, { delay: 20 });

				const item = page.locator(sel.ourCreatorItem);
				await item.waitFor({ state: 'visible' });
				assert.equal(await item.count(), 1, 'exactly one panel row for our node type');
				assert.equal(
					(await item.locator('[data-test-id="node-creator-item-name"]').innerText()).trim(),
					NODE_NAME,
				);
				const icon = await item.locator('img').first().getAttribute('src');
				assert.match(
					icon ?? '',
					/\/icons\/n8n-nodes-llm-memory\//,
					'the icon is served from the installed package',
				);
				await shot('1-node-panel-search.png');
			});
		});

		it(
			'puts the node on the canvas, connected after the Chat Trigger',
			{ timeout: 60_000 },
			async () => {
				await step('add to canvas', async () => {
					const nodesBefore = await count(sel.canvasNodes);
					const edgesBefore = await count(sel.edges);
					const row = page.locator(`${sel.ourCreatorItem} [data-test-id="node-creator-node-item"]`);
					const draggable = await row.getAttribute('draggable');

					if (draggable === 'true') {
						// Not the case in n8n 2.8.4 or 2.40.7 (see the header comment), kept for later versions.
						await row.dragTo(page.locator('[data-test-id="canvas"]'), {
							targetPosition: { x: 250, y: 250 },
						});
					} else {
						assert.equal(
							draggable,
							'false',
							`n8n ${N8N_VERSION} does not let community nodes be dragged from the panel`,
						);
						await page.locator(sel.ourCreatorItem).click();
						// The community "Node details" view of the panel, with the node's own description. n8n 2.40:
						// the search result row, which shows the same description, stays in the panel underneath the
						// view, so the row's own description element is left out (2.8.4 has only the view's).
						const details = page.locator(sel.creator);
						await details
							.getByText('Calls a chat model with conversation- or node-scoped memory')
							.and(page.locator(':not([data-test-id="node-creator-item-description"])'))
							.waitFor();
						await details.getByRole('button', { name: 'Add to workflow' }).click();
					}

					await expectCount(sel.canvasNodes, nodesBefore + 1);
					await expectCount(sel.edges, edgesBefore + 1);
					// n8n opens the settings panel of a freshly added node by itself.
					await page.locator(sel.ndv).waitFor({ state: 'visible' });
					await page.locator('[data-test-id="ndv-close-button"]').first().click();
					await page.locator(sel.ndv).waitFor({ state: 'hidden' });
					await page.locator(sel.creator).waitFor({ state: 'hidden' });

					const node = page.locator(sel.ourCanvasNode);
					await node.waitFor({ state: 'visible' });
					assert.equal(await node.count(), 1);
					assert.equal(await node.getAttribute('data-node-name'), NODE_NAME);
					// The new edge runs from the Chat Trigger into our node.
					const edge = `${sel.edges}[data-source-node-name="When chat message received"][data-target-node-name="${NODE_NAME}"]`;
					assert.equal(await count(edge), 1, 'our node is connected after the Chat Trigger');
					// Default subtitle shown on the canvas ("Conversation memory").
					await node.getByText('Conversation memory').waitFor({ state: 'visible' });
					await page.locator('[data-test-id="zoom-to-fit"]').click();
					await shot('2-node-on-canvas.png');
				});
			},
		);

		it(
			'shows the Memory Mode selector with Conversation, Node and None in its settings panel',
			{ timeout: 60_000 },
			async () => {
				await step('settings panel', async () => {
					await page.locator(sel.ourCanvasNode).dblclick();
					const ndv = page.locator(sel.ndv);
					await ndv.waitFor({ state: 'visible' });
					const title = ndv.locator(
						'[data-test-id="node-title-container"] [data-test-id="inline-edit-preview"]',
					);
					await title.waitFor({ state: 'visible' });
					assert.equal((await title.innerText()).trim(), NODE_NAME);

					const label = ndv.locator('label[for="memoryMode"]');
					await label.waitFor({ state: 'visible' });
					assert.equal((await label.innerText()).trim(), 'Memory Mode');
					const input = page.locator(sel.memoryModeInput);
					await input.waitFor({ state: 'visible' });
					assert.equal(await input.inputValue(), 'Conversation', 'default memory mode');
					await page.mouse.move(700, 8); // park the pointer on the backdrop above the panel: no hover effects
					await shot('3-settings-panel.png');

					await input.click();
					// element-plus select: the input names its listbox through aria-controls.
					const listboxId = await input.getAttribute('aria-controls');
					assert.ok(listboxId, 'the selector has a listbox');
					const listbox = page.locator(`[id="${listboxId}"]`);
					await listbox.waitFor({ state: 'visible' });
					const options: Locator = listbox.locator('[role="option"] .option-headline');
					await expectCount(`[id="${listboxId}"] [role="option"]`, MEMORY_MODES.length);
					assert.deepEqual(
						(await options.allInnerTexts()).map((s) => s.trim()),
						MEMORY_MODES,
					);
					for (const option of await options.all()) assert.ok(await option.isVisible());
					assert.equal(await input.getAttribute('aria-expanded'), 'true');
					await shot('4-memory-mode-options.png');

					// The selector works: "None" hides the conversation-ID field that the memory modes need.
					assert.equal(await ndv.locator('label[for="conversationIdType"]').count(), 1);
					await options.filter({ hasText: /^None$/ }).click();
					await listbox.waitFor({ state: 'hidden' });
					assert.equal(await input.inputValue(), 'None');
					await ndv.locator('label[for="conversationIdType"]').waitFor({ state: 'detached' });

					if (process.env.UPDATE_DOCS_SCREENSHOT === '1') {
						copyFileSync(
							path.join(ARTIFACTS, '4-memory-mode-options.png'),
							path.join(REPO_ROOT, 'docs/settings-panel.png'),
						);
					}
					await page.locator('[data-test-id="ndv-close-button"]').first().click();
					await ndv.waitFor({ state: 'hidden' });
				});
			},
		);

		it(
			'accepts the node dropped onto the canvas, where it was dropped',
			{ timeout: 60_000 },
			async () => {
				await step('drop on canvas', async () => {
					assert.equal(await count(sel.ourCanvasNode), 1);
					const canvas = page.locator('[data-test-id="canvas"]');
					const box = await canvas.boundingBox();
					assert.ok(box);
					const at = {
						clientX: Math.round(box.x + box.width * 0.25),
						clientY: Math.round(box.y + box.height * 0.7),
					};
					// What n8n's node panel puts on a drag (DRAG_EVENT_DATA_KEY = "nodesAndConnections").
					const payload = JSON.stringify({
						nodes: [{ type: NODE_TYPE, openDetail: true }],
						connections: [],
					});
					const dataTransfer = await page.evaluateHandle(
						`(() => { const d = new DataTransfer(); d.setData('nodesAndConnections', ${JSON.stringify(payload)}); return d; })()`,
					);
					for (const type of ['dragenter', 'dragover', 'drop'])
						await canvas.dispatchEvent(type, { dataTransfer, ...at });

					await expectCount(sel.ourCanvasNode, 2);
					// A dropped node opens its settings panel, like one added from the panel.
					await page.locator(sel.ndv).waitFor({ state: 'visible' });
					await page.locator('[data-test-id="ndv-close-button"]').first().click();
					await page.locator(sel.ndv).waitFor({ state: 'hidden' });

					const dropped = page.locator(`${sel.ourCanvasNode}[data-node-name="${NODE_NAME}1"]`);
					await dropped.waitFor({ state: 'visible' });
					const nb = await dropped.boundingBox();
					assert.ok(nb);
					assert.ok(
						Math.abs(nb.x - at.clientX) < 40 && Math.abs(nb.y - at.clientY) < 40,
						`dropped at ${at.clientX},${at.clientY}; node at ${nb.x},${nb.y}`,
					);
					await dropped.getByText('Conversation memory').waitFor({ state: 'visible' });
					await shot('5-node-dropped-on-canvas.png');
				});
			},
		);
	},
);
