// A signed-in n8n editor in headless Chromium (Debian's /usr/bin/chromium through playwright-core; no
// Playwright browser download), for the UI tests in test/ui.
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

import type { N8nInstance } from './n8n-harness';
import { setUpOwner, TEST_OWNER } from './n8n-owner';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

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

/**
 * Sets up the owner of a fresh n8n (a shared one has its owner already), launches Chromium and signs
 * in; whenever a first-run pop-up covers the page before an action, it is closed and the action carries on.
 */
export async function openEditor(n8n: N8nInstance): Promise<{ browser: Browser; page: Page }> {
	if (!n8n.ownerCookie) await setUpOwner(n8n.baseUrl);
	const browser = await chromium.launch({
		executablePath: CHROMIUM,
		headless: true,
		// playwright-core gives every launch a fresh temporary user-data-dir.
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
	const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
	const page = await context.newPage();
	page.setDefaultTimeout(30_000);
	page.setDefaultNavigationTimeout(60_000);
	await page.addLocatorHandler(
		page.locator(POPUPS),
		async (popup) => {
			const close = popup
				.locator('.el-dialog__headerbtn, [data-test-id="close-button"], button[aria-label="Close"]')
				.first();
			if (await close.isVisible()) await close.click();
			else await page.keyboard.press('Escape');
		},
		{ noWaitAfter: true },
	);
	await page.goto(`${n8n.baseUrl}/signin`);
	await page.locator('input[type=email]').fill(TEST_OWNER.email);
	await page.locator('input[type=password]').fill(TEST_OWNER.password);
	await page.getByRole('button', { name: /sign in/i }).click();
	await page.waitForURL((url) => !url.pathname.startsWith('/signin'), { timeout: 60_000 });
	return { browser, page };
}
