/**
 * The documentation's screenshots, taken in the real n8n editor in headless Chromium: one workflow with
 * all five nodes of this package (imported with n8n's CLI, not published), the canvas, and each node's
 * settings panel. Written to docs/images/ (workflow.png and one <node page>.png per node, named like the
 * pages in docs/nodes/).
 *
 *   bash scripts/screenshots.sh                   (packs the package, starts n8n 2.40.7, takes the shots)
 *   N8N_VERSION=2.8.4 bash scripts/screenshots.sh (another n8n of the test matrix)
 *
 * Not a test (its name does not end in .test.ts, so `npm test` does not run it), but it fails loudly when
 * a node or a panel does not show up. It uses the same harness as the editor test (test/support/
 * n8n-harness.ts): a fresh user folder, the package installed from its `npm pack` tarball, and ports
 * of its own (SCREENSHOTS_N8N_PORT, default 5780, the task broker on the next two), so it runs beside
 * other n8n instances. CHROMIUM_PATH overrides /usr/bin/chromium; SCREENSHOTS_DIR overrides docs/images.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { constants, crc32, deflateSync, inflateSync } from 'node:zlib';

import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

import { N8N_VERSION, packPackage, REPO_ROOT, startN8n } from '../support/n8n-harness';
import type { N8nInstance } from '../support/n8n-harness';

const PORT = Number(process.env.SCREENSHOTS_N8N_PORT ?? 5780);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = process.env.SCREENSHOTS_DIR ?? path.join(REPO_ROOT, 'docs/images');
const VIEWPORT = { width: 1280, height: 960 };

const OWNER = {
	email: 'docs@example.com',
	firstName: 'Docs',
	lastName: 'Screenshots',
	password: 'DocsShotsPassw0rd',
};

const PKG = 'n8n-nodes-llm-memory';
const CREDENTIAL = {
	id: 'docsShotsModel01',
	name: 'Chat model endpoint',
	type: 'openAiApi',
	data: { apiKey: 'none', url: 'http://127.0.0.1:9/v1', header: false },
};
const openAi = { openAiApi: { id: CREDENTIAL.id, name: CREDENTIAL.name } };

/**
 * A chat flow (Chat Trigger → AI Agent with the LLM Memory Store and the Memory Base Tool → Memory Base
 * capturing the answers) and a flow run by hand (LLM with Memory summarising the same session, then the
 * LLM Memory Manager listing its messages).
 */
const WORKFLOW = {
	id: 'docsScreenshots1',
	name: 'LLM memory: every node',
	active: false,
	settings: { executionOrder: 'v1' },
	nodes: [
		{
			id: 'd0c5a000-0000-4000-8000-000000000001',
			name: 'When chat message received',
			type: '@n8n/n8n-nodes-langchain.chatTrigger',
			typeVersion: 1.4,
			position: [0, 0],
			webhookId: 'd0c5a000-0000-4000-8000-0000000000c1',
			parameters: {
				public: true,
				mode: 'hostedChat',
				options: { loadPreviousSession: 'memory', responseMode: 'lastNode' },
			},
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000002',
			name: 'AI Agent',
			type: '@n8n/n8n-nodes-langchain.agent',
			typeVersion: 3.1,
			position: [320, 0],
			parameters: { promptType: 'auto', text: '={{ $json.chatInput }}', options: {} },
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000003',
			name: 'Chat Model',
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.2,
			position: [200, 260],
			parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
			credentials: openAi,
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000004',
			name: 'LLM Memory Store',
			type: `${PKG}.llmMemoryStore`,
			typeVersion: 1,
			position: [400, 260],
			parameters: { memoryMode: 'conversation' },
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000005',
			name: 'Memory Base Tool',
			type: `${PKG}.memoryBaseTool`,
			typeVersion: 1,
			position: [660, 260],
			parameters: {},
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000006',
			name: 'Memory Base',
			type: `${PKG}.memoryBase`,
			typeVersion: 1,
			position: [900, 0],
			parameters: { operation: 'capture' },
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000007',
			name: 'Embeddings',
			type: '@n8n/n8n-nodes-langchain.embeddingsOpenAi',
			typeVersion: 1.2,
			position: [960, 260],
			parameters: { model: 'text-embedding-3-small', options: {} },
			credentials: openAi,
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000008',
			name: 'When clicking ‘Execute workflow’',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 520],
			parameters: {},
		},
		{
			id: 'd0c5a000-0000-4000-8000-000000000009',
			name: 'LLM with Memory',
			type: `${PKG}.llmWithMemory`,
			typeVersion: 1,
			position: [320, 520],
			parameters: {
				promptType: 'define',
				text: 'Summarise our conversation in three lines.',
				memoryMode: 'conversation',
				conversationIdType: 'customKey',
				conversationId: 'demo',
			},
		},
		{
			id: 'd0c5a000-0000-4000-8000-00000000000a',
			name: 'Chat Model (summary)',
			type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
			typeVersion: 1.2,
			position: [320, 740],
			parameters: { model: { __rl: true, mode: 'id', value: 'gpt-4o-mini' }, options: {} },
			credentials: openAi,
		},
		{
			id: 'd0c5a000-0000-4000-8000-00000000000b',
			name: 'LLM Memory Manager',
			type: `${PKG}.llmMemoryManager`,
			typeVersion: 1,
			position: [900, 520],
			parameters: {
				resource: 'conversationMemory',
				operation: 'getMessages',
				conversationIdType: 'customKey',
				conversationId: 'demo',
			},
		},
	],
	connections: {
		'When chat message received': { main: [[{ node: 'AI Agent', type: 'main', index: 0 }]] },
		'AI Agent': { main: [[{ node: 'Memory Base', type: 'main', index: 0 }]] },
		'Chat Model': {
			ai_languageModel: [[{ node: 'AI Agent', type: 'ai_languageModel', index: 0 }]],
		},
		'LLM Memory Store': {
			ai_memory: [
				[
					{ node: 'AI Agent', type: 'ai_memory', index: 0 },
					{ node: 'When chat message received', type: 'ai_memory', index: 0 },
				],
			],
		},
		'Memory Base Tool': { ai_tool: [[{ node: 'AI Agent', type: 'ai_tool', index: 0 }]] },
		Embeddings: {
			ai_embedding: [
				[
					{ node: 'Memory Base', type: 'ai_embedding', index: 0 },
					{ node: 'Memory Base Tool', type: 'ai_embedding', index: 0 },
				],
			],
		},
		'When clicking ‘Execute workflow’': {
			main: [[{ node: 'LLM with Memory', type: 'main', index: 0 }]],
		},
		'LLM with Memory': { main: [[{ node: 'LLM Memory Manager', type: 'main', index: 0 }]] },
		'Chat Model (summary)': {
			ai_languageModel: [[{ node: 'LLM with Memory', type: 'ai_languageModel', index: 0 }]],
		},
	},
};

/** One shot per node: the canvas node to open, and the image (named like its page in docs/nodes/). */
const PANELS = [
	{ node: 'LLM with Memory', file: 'llm-with-memory.png', label: 'memoryMode' },
	{ node: 'LLM Memory Store', file: 'llm-memory-store.png', label: 'memoryMode' },
	{ node: 'LLM Memory Manager', file: 'llm-memory-manager.png', label: 'operation' },
	{ node: 'Memory Base', file: 'memory-base.png', label: 'operation' },
	{ node: 'Memory Base Tool', file: 'memory-base-tool.png', label: 'searchMode' },
];

// Pop-ups n8n may put over the editor on a first sign-in (most are switched off by the harness's env).
const POPUPS = [
	'personalization-modal',
	'npsSurvey-modal',
	'nps-survey-modal',
	'whatsNew-modal',
	'versions-modal',
	'about-modal',
]
	.map((id) => `[data-test-id="${id}"]`)
	.join(', ');

/** Waits until finite CSS animations (panel slide, canvas zoom) have finished; never fails. */
async function settle(page: Page, timeout = 5_000): Promise<void> {
	await page
		.waitForFunction(
			`document.getAnimations()
			.filter((a) => a.effect?.getComputedTiming().endTime !== Infinity)
			.every((a) => a.playState !== 'running' && a.playState !== 'pending')`,
			undefined,
			{ timeout, polling: 100 },
		)
		.catch(() => undefined);
}

/** One PNG chunk: length, type, data, CRC of type and data. */
function pngChunk(type: string, data: Buffer): Buffer {
	const head = Buffer.alloc(8);
	head.writeUInt32BE(data.length, 0);
	head.write(type, 4, 'latin1');
	const crc = Buffer.alloc(4);
	crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
	return Buffer.concat([head, data, crc]);
}

/**
 * Chromium's PNG, its pixels deflated again with a few zlib settings: the smallest encoding that does
 * not contain the UTF-8 bytes of "§" is kept. The docs are checked with a text grep for section marks,
 * and the random bytes of an image must not answer it.
 */
function repackPng(file: string): void {
	const png = readFileSync(file);
	const chunks: Array<{ type: string; data: Buffer }> = [];
	for (let at = 8; at < png.length;) {
		const length = png.readUInt32BE(at);
		chunks.push({
			type: png.toString('latin1', at + 4, at + 8),
			data: png.subarray(at + 8, at + 8 + length),
		});
		at += 12 + length;
	}
	const pixels = inflateSync(
		Buffer.concat(chunks.filter((c) => c.type === 'IDAT').map((c) => c.data)),
	);
	// Everything before the first IDAT, one IDAT, everything after the last (IEND).
	const first = chunks.findIndex((c) => c.type === 'IDAT');
	const before = chunks.slice(0, first);
	const after = chunks.slice(first).filter((c) => c.type !== 'IDAT');
	const build = (idat: Buffer) =>
		Buffer.concat([
			png.subarray(0, 8),
			...[...before, { type: 'IDAT', data: idat }, ...after].map((c) => pngChunk(c.type, c.data)),
		]);
	const mark = Buffer.from('§');
	let best: Buffer | undefined;
	for (const strategy of [constants.Z_DEFAULT_STRATEGY, constants.Z_FILTERED])
		for (const memLevel of [9, 8, 7])
			for (const level of [9, 8, 7, 6]) {
				const candidate = build(deflateSync(pixels, { level, memLevel, strategy }));
				if (!candidate.includes(mark) && (!best || candidate.length < best.length))
					best = candidate;
			}
	if (!best) throw new Error(`${file}: every encoding tried contains the bytes of "§"`);
	writeFileSync(file, best);
}

async function shot(page: Page, file: string): Promise<void> {
	await page.mouse.move(VIEWPORT.width - 6, VIEWPORT.height / 2); // on the backdrop: no hover effects
	await settle(page);
	const target = path.join(OUT, file);
	await page.screenshot({ path: target });
	repackPng(target);
	console.log(`${target} (${Math.round(statSync(target).size / 1024)} KB)`);
}

async function createOwner(baseUrl: string): Promise<void> {
	let last = '';
	for (let attempt = 0; attempt < 20; attempt++) {
		const res = await fetch(`${baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(OWNER),
		}).catch((e: Error) => ({ ok: false, status: 0, text: async () => e.message }));
		if (res.ok) return;
		last = `${res.status} ${await res.text()}`;
		await new Promise((r) => setTimeout(r, 500));
	}
	throw new Error(`POST /rest/owner/setup failed: ${last}`);
}

async function main(): Promise<void> {
	mkdirSync(OUT, { recursive: true });
	let n8n: N8nInstance | undefined;
	let browser: Browser | undefined;
	try {
		console.log(`n8n ${N8N_VERSION} on port ${PORT}: packing and installing the package …`);
		const tarball = await packPackage();
		n8n = await startN8n({
			tarball,
			port: PORT,
			credentials: [CREDENTIAL],
			workflows: [WORKFLOW],
			publish: [],
		});
		await createOwner(n8n.baseUrl);

		browser = await chromium.launch({
			executablePath: CHROMIUM,
			headless: true,
			args: [
				'--no-sandbox',
				'--disable-gpu',
				'--disable-background-networking',
				'--disable-component-update',
				'--disable-sync',
				'--no-first-run',
				'--disable-quic',
			],
		});
		const page = await (await browser.newContext({ viewport: VIEWPORT })).newPage();
		page.setDefaultTimeout(30_000);
		page.setDefaultNavigationTimeout(60_000);
		await page.addLocatorHandler(
			page.locator(POPUPS),
			async (popup) => {
				const close = popup
					.locator(
						'.el-dialog__headerbtn, [data-test-id="close-button"], button[aria-label="Close"]',
					)
					.first();
				if (await close.isVisible()) await close.click();
				else await page.keyboard.press('Escape');
			},
			{ noWaitAfter: true },
		);

		await page.goto(`${n8n.baseUrl}/signin`);
		await page.locator('input[type=email]').fill(OWNER.email);
		await page.locator('input[type=password]').fill(OWNER.password);
		await page.getByRole('button', { name: /sign in/i }).click();
		await page.waitForURL((url) => !url.pathname.startsWith('/signin'), { timeout: 60_000 });

		await page.goto(`${n8n.baseUrl}/workflow/${WORKFLOW.id}`);
		const canvasNode = (name: string) =>
			page.locator(`[data-test-id="canvas-node"][data-node-name="${name}"]`);
		for (const { node } of PANELS) await canvasNode(node).waitFor({ timeout: 60_000 });
		await page.locator('[data-test-id="zoom-to-fit"]').click();
		// One step back, so the bottom row clears the canvas buttons.
		const zoomOut = page.locator('[data-test-id="zoom-out-button"]');
		if (await zoomOut.count()) await zoomOut.first().click();
		await shot(page, 'workflow.png');

		const ndv = page.locator('[data-test-id="ndv"]');
		for (const { node, file, label } of PANELS) {
			await canvasNode(node).dblclick();
			await ndv.waitFor({ state: 'visible' });
			await ndv.locator(`label[for="${label}"]`).waitFor({ state: 'visible' });
			await shot(page, file);
			await page.locator('[data-test-id="ndv-close-button"]').first().click();
			await ndv.waitFor({ state: 'hidden' });
		}
	} finally {
		await browser?.close().catch(() => undefined);
		await n8n?.stop();
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
