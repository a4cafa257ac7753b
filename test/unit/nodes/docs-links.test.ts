// The documentation links n8n shows for our nodes (codex resources) and credential (documentationUrl).
// n8n appends a query string (?utm_source=…) to them, which breaks a link with a #fragment (the query
// lands inside the fragment), so each must point to a page of its own in the repository: no `#`, a
// docs/ page that exists, one page per node.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import type { ICredentialType } from 'n8n-workflow';

const ROOT = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const REPO = String(pkg.repository.url)
	.replace(/^git\+/, '')
	.replace(/\.git$/, '');
const PAGES = `${REPO}/blob/main/`;

/** Where a documentation URL of ours points in the repository (throws for any other URL). */
function repoFile(url: string): string {
	assert.ok(url.startsWith(PAGES), `${url} is a page of ${PAGES}`);
	return url.slice(PAGES.length);
}

/** Every documentation URL n8n shows, with where it comes from. */
function documentationUrls(): Array<{ from: string; url: string; primary: boolean }> {
	const urls: Array<{ from: string; url: string; primary: boolean }> = [];
	for (const entry of pkg.n8n.nodes as string[]) {
		const codexFile = entry.replace(/^dist\//, '').replace(/\.js$/, '.json');
		const codex = JSON.parse(readFileSync(path.join(ROOT, codexFile), 'utf8'));
		for (const kind of ['primaryDocumentation', 'credentialDocumentation']) {
			const links = codex.resources?.[kind] as Array<{ url: string }> | undefined;
			assert.ok(links?.length, `${codexFile} has ${kind}`);
			for (const { url } of links)
				urls.push({ from: `${codexFile} ${kind}`, url, primary: kind === 'primaryDocumentation' });
		}
	}
	for (const entry of pkg.n8n.credentials as string[]) {
		const source = path.join(ROOT, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
		const name = path.basename(source, '.credentials.ts');
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const Credential = require(source)[name] as new () => ICredentialType;
		const url = new Credential().documentationUrl;
		assert.ok(url, `${entry} has a documentationUrl`);
		urls.push({ from: `${entry} documentationUrl`, url, primary: false });
	}
	return urls;
}

describe('documentation links of the nodes and the credential', () => {
	const urls = documentationUrls();

	it('none has a #fragment, so a query string n8n appends keeps them working', () => {
		for (const { from, url } of urls) {
			assert.ok(!url.includes('#'), `${from}: ${url}`);
			const withQuery = new URL(
				`${url}?utm_source=n8n_app&utm_medium=node_settings_modal-credential_link`,
			);
			assert.equal(withQuery.pathname, new URL(url).pathname, from);
		}
	});

	it('each points to a docs page that exists in the repository, with a first paragraph', () => {
		for (const { from, url } of urls) {
			const file = repoFile(url);
			assert.match(file, /^docs\/.+\.md$/, from);
			assert.ok(existsSync(path.join(ROOT, file)), `${from}: ${file} exists`);
			const text = readFileSync(path.join(ROOT, file), 'utf8');
			const paragraph = text.split(/\n\s*\n/).find((p) => p.trim() && !p.startsWith('#'));
			assert.ok(paragraph && paragraph.length > 80, `${file} says what it documents`);
		}
	});

	it('each node has a page of its own', () => {
		const primary = urls.filter((u) => u.primary).map((u) => u.url);
		assert.equal(primary.length, (pkg.n8n.nodes as string[]).length);
		assert.equal(new Set(primary).size, primary.length, primary.join('\n'));
	});
});
