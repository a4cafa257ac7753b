// The layering rules of src/ (see src/README.md), checked with the project's own ESLint config, so
// that `npm run lint` failing on them is proven here rather than assumed.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const p = path.join(dir, name);
		return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
	});
}

describe('src/ is framework-free', () => {
	it(
		'ESLint refuses an n8n import, or an import of nodes/ or tests, in src/',
		{ timeout: 60_000 },
		async () => {
			const eslint = new ESLint({ cwd: ROOT });
			const probe = [
				"import { NodeOperationError } from 'n8n-workflow';",
				"import { x } from '../../nodes/shared/errors';",
				"import { y } from '../../test/support/storages';",
				'export const all = [NodeOperationError, x, y];',
			].join('\n');
			const [result] = await eslint.lintText(probe, {
				filePath: path.join(ROOT, 'src/store/probe.ts'),
			});
			const restricted = result.messages
				.filter((m) => m.ruleId === 'no-restricted-imports')
				.map((m) => m.line);
			assert.deepEqual(restricted, [1, 2, 3]);
			// The same imports are fine in nodes/.
			const [inNodes] = await eslint.lintText(
				probe.replace('../../nodes/shared/errors', '../shared/errors'),
				{
					filePath: path.join(ROOT, 'nodes/shared/probe.ts'),
				},
			);
			assert.deepEqual(
				inNodes.messages.filter((m) => m.ruleId === 'no-restricted-imports'),
				[],
			);
		},
	);

	it('no file in src/ imports n8n today', () => {
		for (const file of sourceFiles(path.join(ROOT, 'src'))) {
			const text = readFileSync(file, 'utf8');
			assert.doesNotMatch(
				text,
				/from '(n8n-workflow|n8n-core|@n8n\/[^']*)'/,
				path.relative(ROOT, file),
			);
		}
	});
});

/** Which folders of src/ each folder may import (besides errors/, which every folder may use). */
const LAYERS: Record<string, string[]> = {
	errors: [],
	common: [],
	keys: ['common'],
	tokens: ['common'],
	store: ['common', 'keys'],
	prompt: ['common', 'keys', 'store', 'tokens'],
	// The three memories stand side by side on store/: none imports another.
	history: ['common', 'keys', 'store', 'tokens', 'prompt'],
	snapshots: ['common', 'keys', 'store'],
	// The index room: the Memory Base's word and vector indexes and rank fusion, below knowledge/.
	indexes: ['common', 'keys', 'store', 'tokens'],
	knowledge: ['common', 'keys', 'store', 'tokens', 'indexes'],
	// Long-term facts, beside the three: kept as versions, so it stands on versioned data's machinery.
	facts: ['common', 'keys', 'store', 'tokens', 'prompt', 'snapshots'],
	// The two folders above all the memories: whole conversations, and one chat turn.
	admin: [
		'common',
		'keys',
		'store',
		'tokens',
		'prompt',
		'history',
		'snapshots',
		'knowledge',
		'facts',
	],
	turn: [
		'common',
		'keys',
		'store',
		'tokens',
		'prompt',
		'history',
		'snapshots',
		'knowledge',
		'facts',
	],
};

const SRC = path.join(ROOT, 'src');

/** What a file imports from src/ (relative imports only), as paths relative to src/ with "/". */
function importedPaths(file: string): string[] {
	const text = readFileSync(file, 'utf8');
	const out = new Set<string>();
	for (const m of text.matchAll(/from '(\.{1,2}\/[^']*)'/g)) {
		const target = path.relative(SRC, path.resolve(path.dirname(file), m[1]));
		if (!target.startsWith('..')) out.add(target.split(path.sep).join('/'));
	}
	return [...out];
}

/** The folder an import reaches, relative to src/ ('' for src/ itself): a folder's index.ts is in it. */
function folderOf(target: string): string {
	const abs = path.join(SRC, target);
	if (existsSync(abs) && statSync(abs).isDirectory()) return target;
	return path.posix.dirname(target) === '.' ? '' : path.posix.dirname(target);
}

/** The src/ folders a file imports (top level; relative imports only). */
function importedFolders(file: string): string[] {
	const folders = importedPaths(file).map((t) => folderOf(t).split('/')[0]);
	return [...new Set(folders.filter((f) => f !== ''))];
}

/** Folder → the folders its own files import, over every folder and subfolder of src/ ('' is src/). */
function folderGraph(): Map<string, Set<string>> {
	const graph = new Map<string, Set<string>>();
	for (const file of sourceFiles(SRC)) {
		const from = path.relative(SRC, path.dirname(file)).split(path.sep).join('/');
		const edges = graph.get(from) ?? new Set<string>();
		graph.set(from, edges);
		for (const to of importedPaths(file).map(folderOf)) if (to !== from) edges.add(to);
	}
	return graph;
}

/** The import cycles of a folder graph: its strongly connected parts of two folders or more (Tarjan). */
function folderCycles(graph: Map<string, Set<string>>): string[][] {
	const index = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const out: string[][] = [];
	const visit = (v: string) => {
		index.set(v, index.size);
		low.set(v, index.get(v)!);
		stack.push(v);
		for (const w of graph.get(v) ?? []) {
			if (!index.has(w)) {
				visit(w);
				low.set(v, Math.min(low.get(v)!, low.get(w)!));
			} else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
		}
		if (low.get(v) !== index.get(v)) return;
		const part: string[] = [];
		for (let w = stack.pop()!; ; w = stack.pop()!) {
			part.push(w === '' ? 'src/' : w);
			if (w === v) break;
		}
		if (part.length > 1) out.push(part.sort());
	};
	for (const v of graph.keys()) if (!index.has(v)) visit(v);
	return out;
}

/** The graph with one more import, as a probe. */
function withImport(graph: Map<string, Set<string>>, from: string, to: string) {
	const copy = new Map([...graph].map(([k, v]) => [k, new Set(v)]));
	copy.set(from, (copy.get(from) ?? new Set()).add(to));
	return copy;
}

/** Functions longer than this many lines, and files longer than FILE_LINES, must be listed in src/README.md. */
const FUNCTION_LINES = 60;
const FILE_LINES = 420;

/** A function that returns n8n fields (a field list: long by nature, one entry per field). */
function isFieldList(n: ts.Node): boolean {
	const type = (n as ts.FunctionDeclaration).type?.getText() ?? '';
	return /^INodeProperties\[\]$/.test(type);
}

function longFunctions(file: string, exceptFieldLists = false): string[] {
	const text = readFileSync(file, 'utf8');
	const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
	const out: string[] = [];
	const visit = (n: ts.Node) => {
		const named =
			ts.isFunctionDeclaration(n) ||
			ts.isMethodDeclaration(n) ||
			ts.isConstructorDeclaration(n) ||
			ts.isGetAccessor(n);
		if (named) {
			const first = sf.getLineAndCharacterOfPosition(n.getStart()).line;
			const last = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
			const name = (n as ts.FunctionDeclaration).name?.getText() ?? 'constructor';
			const excepted = exceptFieldLists && isFieldList(n);
			if (last - first + 1 > FUNCTION_LINES && !excepted) out.push(name);
		}
		ts.forEachChild(n, visit);
	};
	visit(sf);
	return out;
}

/** The exceptions src/README.md lists, as "folder/file.ts name" (name "(file)" for a long file). */
function listedExceptions(): Set<string> {
	const readme = readFileSync(path.join(ROOT, 'src/README.md'), 'utf8');
	const section = readme
		.split('<!-- size exceptions -->')[1]
		?.split('<!-- /size exceptions -->')[0];
	assert.ok(section, 'src/README.md has a size exceptions table');
	const out = new Set<string>();
	for (const m of section.matchAll(/^\| `([^`]+)` \| `([^`]+)` \|/gm)) out.add(`${m[1]} ${m[2]}`);
	return out;
}

describe('src/ layout: three memories side by side, small files and functions', () => {
	it('each folder imports only the folders below it; history, snapshots and knowledge never each other', () => {
		const src = path.join(ROOT, 'src');
		const folders = readdirSync(src).filter((n) => statSync(path.join(src, n)).isDirectory());
		assert.deepEqual(folders.sort(), Object.keys(LAYERS).sort(), 'every folder has a rule');
		const broken: string[] = [];
		for (const folder of folders)
			for (const file of sourceFiles(path.join(src, folder)))
				for (const used of importedFolders(file))
					if (used !== folder && used !== 'errors' && !LAYERS[folder].includes(used))
						broken.push(`${path.relative(src, file)} imports ${used}/`);
		assert.deepEqual(broken, []);
	});

	it('the rule can fail: a history file importing knowledge/ is reported', () => {
		const probe = path.join(ROOT, 'src/history/buffer-memory.ts');
		const used = importedFolders(probe);
		assert.ok(used.includes('store') && !used.includes('knowledge'));
		assert.equal(LAYERS.history.includes('knowledge'), false);
		assert.equal(LAYERS.knowledge.includes('history'), false);
		assert.equal(LAYERS.snapshots.includes('admin'), false);
		// Facts use versioned data's machinery, never the chat history or the Memory Base, nor they it.
		assert.equal(LAYERS.facts.includes('history') || LAYERS.facts.includes('knowledge'), false);
		assert.equal(LAYERS.snapshots.includes('facts') || LAYERS.knowledge.includes('facts'), false);
		// The index room is below the Memory Base, which reaches it through its door (a folder import).
		assert.equal(LAYERS.indexes.includes('knowledge'), false);
		assert.ok(importedFolders(path.join(SRC, 'knowledge/parts.ts')).includes('indexes'));
	});

	it('no import cycle between folders, nor between a folder and its subfolders', () => {
		const graph = folderGraph();
		assert.ok(graph.has('indexes/lexical') && graph.has('indexes/vector'), 'subfolders are seen');
		assert.deepEqual(folderCycles(graph), []);
	});

	it('the cycle rule can fail: one import back is reported', () => {
		// As the word index once was: knowledge/lexical imported knowledge/, which imported it.
		const old = new Map([
			['knowledge', new Set(['knowledge/lexical', 'store'])],
			['knowledge/lexical', new Set(['knowledge', 'store'])],
		]);
		assert.deepEqual(folderCycles(old), [['knowledge', 'knowledge/lexical']]);
		// Today's graph, with a word-index file importing the room's door, or the capture log.
		const graph = folderGraph();
		// (the fusion room stands on the word index's words, so the cycle runs through it too)
		assert.deepEqual(folderCycles(withImport(graph, 'indexes/lexical', 'indexes')), [
			['indexes', 'indexes/fusion', 'indexes/lexical'],
		]);
		assert.deepEqual(folderCycles(withImport(graph, 'indexes/lexical', 'knowledge')), [
			['indexes', 'indexes/fusion', 'indexes/lexical', 'knowledge'],
		]);
	});

	it('the index room knows nothing of the Memory Base, which uses it only through src/indexes/index.ts', () => {
		const broken: string[] = [];
		for (const file of sourceFiles(SRC)) {
			const rel = path.relative(SRC, file).split(path.sep).join('/');
			const room = rel.startsWith('indexes/');
			for (const target of importedPaths(file)) {
				// Keys are the memories' own: the Memory Base hands the indexes their folders.
				if (room && /(^|\/)keys(\/|$)/.test(target) && target !== 'keys/ids')
					broken.push(`${rel} imports ${target}`);
				// src/index.ts and src/internal.ts, the entries, may name the room's files.
				const deep = target.startsWith('indexes/') && target !== 'indexes/index';
				if (!room && rel.includes('/') && deep) broken.push(`${rel} imports ${target}`);
			}
		}
		assert.deepEqual(broken, []);
	});

	it(`no function over ${FUNCTION_LINES} lines and no file over ${FILE_LINES}, except those src/README.md lists with a reason`, () => {
		const listed = listedExceptions();
		const found: string[] = [];
		for (const file of sourceFiles(path.join(ROOT, 'src'))) {
			const rel = path.relative(path.join(ROOT, 'src'), file).split(path.sep).join('/');
			if (readFileSync(file, 'utf8').split('\n').length > FILE_LINES) found.push(`${rel} (file)`);
			for (const name of longFunctions(file)) found.push(`${rel} ${name}`);
		}
		assert.deepEqual(
			found.filter((f) => !listed.has(f)),
			[],
			'list them in src/README.md, or split them',
		);
		assert.deepEqual(
			[...listed].filter((l) => !found.includes(l)),
			[],
			'listed exceptions that are no longer long',
		);
	});
});

describe('nodes/ keeps the same size rule', () => {
	it(`no function over ${FUNCTION_LINES} lines and no file over ${FILE_LINES} in nodes/, field lists excepted`, () => {
		const found: string[] = [];
		for (const file of sourceFiles(path.join(ROOT, 'nodes'))) {
			const rel = path.relative(ROOT, file).split(path.sep).join('/');
			if (readFileSync(file, 'utf8').split('\n').length > FILE_LINES) found.push(`${rel} (file)`);
			for (const name of longFunctions(file, true)) found.push(`${rel} ${name}`);
		}
		assert.deepEqual(found, []);
	});

	it('the rule can fail: a long field list counts when field lists are not excepted', () => {
		const file = path.join(ROOT, 'nodes/shared/long-term/properties.ts');
		assert.ok(longFunctions(file).includes('longTermProperties'));
		assert.deepEqual(longFunctions(file, true), []);
	});
});
