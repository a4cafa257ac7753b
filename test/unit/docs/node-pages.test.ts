// The user documentation against the code, so it cannot silently fall behind:
//   - every node's page (the one its codex links to, docs/nodes/<node>.md) names every field of the
//     node's settings panel (every non-notice parameter's displayName, fields inside Options-style
//     collections included) and every choice of its option lists; the credential's page names every
//     credential field;
//   - every relative link in README.md, CONTRIBUTING.md, src/README.md and docs/**/*.md points to a file
//     that exists (and, for a #fragment into a Markdown file, to a heading that exists).
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import type { ICredentialType, INodeProperties, INodeType } from 'n8n-workflow';

const ROOT = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const PAGES = `${String(pkg.repository.url)
	.replace(/^git\+/, '')
	.replace(/\.git$/, '')}/blob/main/`;

/** What a settings panel shows a reader: field names, and the choices of option lists. */
interface PanelWords {
	fields: Set<string>;
	choices: Set<string>;
}

/** Every field (and choice) of a list of node parameters, collections and fixed collections included. */
export function panelWords(properties: INodeProperties[]): PanelWords {
	const words: PanelWords = { fields: new Set(), choices: new Set() };
	const walk = (props: INodeProperties[]) => {
		for (const p of props) {
			if (p.type === 'notice') continue; // a sentence shown in the panel, not a field
			words.fields.add(p.displayName);
			if (p.type === 'options' || p.type === 'multiOptions')
				for (const o of (p.options ?? []) as Array<{ name: string }>) words.choices.add(o.name);
			if (p.type === 'collection')
				walk((p.options ?? []) as INodeProperties[]); // Options → …, Versioned Data Options → …
			if (p.type === 'fixedCollection')
				for (const group of (p.options ?? []) as Array<{
					displayName: string;
					values: INodeProperties[];
				}>) {
					words.fields.add(group.displayName);
					walk(group.values);
				}
		}
	};
	walk(properties);
	return words;
}

/** The words of `words` that `page` does not contain. */
export function missingFrom(page: string, words: Iterable<string>): string[] {
	return [...words].filter((w) => !page.includes(w));
}

/** The node classes package.json registers, with the docs page their codex links to. */
function nodesWithPages(): Array<{ name: string; description: INodeType['description']; page: string }> {
	return (pkg.n8n.nodes as string[]).map((entry) => {
		const dir = path.join(ROOT, path.dirname(entry).replace(/^dist\//, ''));
		const name = path.basename(entry, '.node.js');
		// The path with its extension: "X.node" alone resolves to the codex JSON next to it.
		// eslint-disable-next-line @typescript-eslint/no-require-imports
		const NodeClass = require(path.join(dir, `${name}.node.ts`))[name] as new () => INodeType;
		const codex = JSON.parse(readFileSync(path.join(dir, `${name}.node.json`), 'utf8'));
		const url = String(codex.resources.primaryDocumentation[0].url);
		assert.ok(url.startsWith(PAGES), `${name}: ${url} is a page of this repository`);
		return { name, description: new NodeClass().description, page: url.slice(PAGES.length) };
	});
}

function read(file: string): string {
	return readFileSync(path.join(ROOT, file), 'utf8');
}

describe('node pages name every field of their node', () => {
	const nodes = nodesWithPages();

	it('covers the five nodes, each with a page of its own in docs/nodes/', () => {
		assert.equal(nodes.length, 5);
		for (const { name, page } of nodes) {
			assert.match(page, /^docs\/nodes\/[a-z-]+\.md$/, name);
			assert.ok(existsSync(path.join(ROOT, page)), `${name}: ${page} exists`);
		}
		assert.equal(new Set(nodes.map((n) => n.page)).size, nodes.length);
	});

	for (const { name, description, page } of nodes) {
		it(`${page} names every field of ${description.displayName}`, () => {
			const { fields } = panelWords(description.properties);
			assert.ok(fields.size > 5, `${name} has fields`);
			assert.deepEqual(missingFrom(read(page), fields), [], `fields of ${name} missing from ${page}`);
		});

		it(`${page} names every choice of ${description.displayName}'s option lists`, () => {
			const { choices } = panelWords(description.properties);
			assert.deepEqual(
				missingFrom(read(page), choices),
				[],
				`choices of ${name} missing from ${page}`,
			);
		});

		it(`${page} shows ${description.displayName} in the editor (docs/images/)`, () => {
			const images = [...read(page).matchAll(/!\[[^\]]*\]\(([^)]+\.png)\)/g)].map((m) => m[1]);
			assert.ok(images.length > 0, `${page} has a screenshot`);
			for (const image of images) {
				const file = path.join(ROOT, path.dirname(page), image);
				assert.ok(existsSync(file), `${image} exists`);
				assert.ok(statSync(file).size < 300 * 1024, `${image} is under 300 KB`);
			}
		});
	}

	it("the credential's page names every credential field", () => {
		for (const entry of pkg.n8n.credentials as string[]) {
			const source = path.join(ROOT, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
			const name = path.basename(source, '.credentials.ts');
			// eslint-disable-next-line @typescript-eslint/no-require-imports
			const credential = new (require(source)[name] as new () => ICredentialType)();
			const page = String(credential.documentationUrl).slice(PAGES.length);
			const text = read(page);
			assert.ok(text.includes(credential.displayName), `${page} names ${credential.displayName}`);
			const { fields } = panelWords(credential.properties);
			assert.deepEqual(missingFrom(text, fields), [], `fields of ${name} missing from ${page}`);
		}
	});

	it('the check itself fails for a page that lacks a field or a choice', () => {
		const { description, page } = nodes[0];
		const words = panelWords(description.properties);
		const field = [...words.fields].find((f) => f.length > 8) as string;
		const choice = [...words.choices][0];
		const text = read(page).split(field).join('').split(choice).join('');
		assert.deepEqual(missingFrom(text, [field]), [field]);
		assert.deepEqual(missingFrom(text, [choice]), [choice]);
		// Fields inside a collection count: LLM with Memory's Options → Max History Tokens is one.
		assert.ok(words.fields.has('Max History Tokens'));
		assert.ok(!words.fields.has(description.properties.find((p) => p.type === 'notice')!.displayName));
	});
});

/** Markdown files whose links are checked. */
function markdownFiles(): string[] {
	const docs: string[] = [];
	const walk = (dir: string) => {
		for (const name of readdirSync(path.join(ROOT, dir))) {
			const rel = path.posix.join(dir, name);
			if (statSync(path.join(ROOT, rel)).isDirectory()) walk(rel);
			else if (name.endsWith('.md')) docs.push(rel);
		}
	};
	walk('docs');
	return ['README.md', 'CONTRIBUTING.md', 'src/README.md', ...docs].filter((f) =>
		existsSync(path.join(ROOT, f)),
	);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
	return heading
		.trim()
		.toLowerCase()
		.replace(/[^\p{L}\p{N}\s_-]/gu, '')
		.replace(/\s/g, '-');
}

function anchorsOf(markdown: string): Set<string> {
	const text = markdown.replace(/^```[\s\S]*?^```/gm, '');
	return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1])));
}

/** Relative link targets of a Markdown text (code blocks and inline code left out). */
export function relativeLinks(markdown: string): string[] {
	const text = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
	return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
		.map((m) => m[1])
		.filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target)); // http:, https:, mailto: …
}

describe('relative links in the documentation', () => {
	const files = markdownFiles();

	it('checks README.md, CONTRIBUTING.md and the docs pages', () => {
		for (const f of ['README.md', 'CONTRIBUTING.md', 'docs/storage.md']) assert.ok(files.includes(f));
	});

	it('finds relative links, and not those in code', () => {
		assert.deepEqual(
			relativeLinks('[a](docs/a.md) [b](https://x.y/z) `[c](no.md)` [d](../e.png#f) [g](#h)'),
			['docs/a.md', '../e.png#f', '#h'],
		);
	});

	for (const file of files) {
		it(`${file}: every relative link points to an existing file and heading`, () => {
			const broken: string[] = [];
			for (const target of relativeLinks(read(file))) {
				const [filePart, fragment] = target.split('#', 2);
				const resolved = filePart
					? path.join(ROOT, path.dirname(file), decodeURIComponent(filePart))
					: path.join(ROOT, file);
				if (!existsSync(resolved)) {
					broken.push(`${target} (no such file)`);
					continue;
				}
				if (fragment && resolved.endsWith('.md')) {
					if (!anchorsOf(readFileSync(resolved, 'utf8')).has(fragment))
						broken.push(`${target} (no such heading)`);
				}
			}
			assert.deepEqual(broken, [], `${file} has broken links`);
		});
	}
});
