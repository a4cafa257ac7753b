// Every node package.json registers ships what n8n loads with it: the class, its codex and both icons.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import type { INodeType } from 'n8n-workflow';

const ROOT = path.resolve(__dirname, '../../..');
const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

describe('nodes registered in package.json', () => {
	const registered: string[] = pkg.n8n.nodes;

	it('includes the five nodes', () => {
		assert.deepEqual(
			registered.map((p) => path.basename(p, '.node.js')),
			['LlmWithMemory', 'LlmMemoryStore', 'LlmMemoryManager', 'MemoryBase', 'MemoryBaseTool'],
		);
	});

	for (const entry of registered) {
		const name = path.basename(entry, '.node.js');
		it(`${name}: source, codex and light and dark icons`, () => {
			assert.match(entry, /^dist\/nodes\/[A-Za-z]+\/[A-Za-z]+\.node\.js$/);
			const dir = path.join(ROOT, path.dirname(entry).replace(/^dist\//, ''));
			const source = path.join(dir, `${name}.node.ts`);
			assert.ok(existsSync(source), `${source} exists`);
			// eslint-disable-next-line @typescript-eslint/no-require-imports
			const NodeClass = require(source)[name] as new () => INodeType;
			const { description } = new NodeClass();
			const codex = JSON.parse(readFileSync(path.join(dir, `${name}.node.json`), 'utf8'));
			assert.equal(codex.node, `${pkg.name}.${description.name}`);
			assert.ok(codex.categories.length > 0);
			const icon = description.icon as { light: string; dark: string };
			for (const file of [icon.light, icon.dark]) {
				assert.match(file, /^file:[A-Za-z]+(\.dark)?\.svg$/);
				const svg = readFileSync(path.join(dir, file.slice('file:'.length)), 'utf8');
				assert.match(svg, /^<svg [^>]*viewBox="0 0 60 60"/);
			}
			assert.notEqual(icon.light, icon.dark);
		});
	}
});
