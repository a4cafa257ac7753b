/**
 * The house's figures (for contributors; see CONTRIBUTING.md): how the code is laid out, measured.
 *   node --import tsx scripts/house.ts           everything
 *   node --import tsx scripts/house.ts loads     only the files each node loads (one process per node)
 * 1. Files each node loads: each node file required in a fresh process; the files of src/ and nodes/
 *    in require.cache, and their lines.
 * 2. A chat turn's walk through nodes/: one turn of LLM with Memory, and one of the stand-in agent with
 *    the LLM Memory Store, run in-process (n8n-core's WorkflowExecute, the scripted model); V8's precise
 *    coverage taken around the turn (after a first turn, so loading and first-use code are not counted):
 *    the files of nodes/ with a function that ran, and the lines those functions' executed blocks span.
 * 3. Imports of a key layout module (keys/layout.ts before each memory kept its own keys; files
 *    importing keys/layout or a memory's keys.ts), and the values src/index.ts exports.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { Session } from 'node:inspector/promises';

const ROOT = path.resolve(__dirname, '..');
const NODE_FILES = [
	'nodes/LlmWithMemory/LlmWithMemory.node.ts',
	'nodes/LlmMemoryStore/LlmMemoryStore.node.ts',
	'nodes/LlmMemoryManager/LlmMemoryManager.node.ts',
	'nodes/MemoryBase/MemoryBase.node.ts',
	'nodes/MemoryBase/MemoryBaseTool.node.ts',
];

const ours = (file: string) =>
	file.startsWith(path.join(ROOT, 'src')) || file.startsWith(path.join(ROOT, 'nodes'));
const linesOf = (file: string) => readFileSync(file, 'utf8').split('\n').length;

/** In a child process: require one node file, print the repository files loaded. */
function loadsOf(nodeFile: string): { files: number; lines: number } {
	const out = execFileSync(
		process.execPath,
		['--import', 'tsx', __filename, 'load-one', nodeFile],
		{ cwd: ROOT, encoding: 'utf8', env: { ...process.env, NODE_NO_WARNINGS: '1' } },
	);
	return JSON.parse(out.trim().split('\n').at(-1)!);
}

function loadOne(nodeFile: string): void {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	require(path.join(ROOT, nodeFile));
	const files = Object.keys(require.cache).filter(ours);
	console.log(
		JSON.stringify({ files: files.length, lines: files.reduce((n, f) => n + linesOf(f), 0) }),
	);
}

function sourceFiles(dir: string): string[] {
	return readdirSync(dir).flatMap((name) => {
		const p = path.join(dir, name);
		return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
	});
}

/** Files of src/, nodes/, test/, bench/ and demo/ that import keys/layout. */
function layoutImports(): number {
	const dirs = ['src', 'nodes', 'test', 'bench', 'demo'].map((d) => path.join(ROOT, d));
	return dirs
		.flatMap(sourceFiles)
		.filter((f) => /from '[^']*keys\/layout'/.test(readFileSync(f, 'utf8'))).length;
}

/** Files that import some memory's keys module (history/keys, snapshots/keys, knowledge/keys). */
function memoryKeyImports(): number {
	const dirs = ['src', 'nodes', 'test', 'bench', 'demo'].map((d) => path.join(ROOT, d));
	return dirs
		.flatMap(sourceFiles)
		.filter((f) =>
			/from '[^']*(history|snapshots|knowledge)\/keys'|from '\.\/keys'/.test(
				readFileSync(f, 'utf8'),
			),
		).length;
}

interface Range {
	startOffset: number;
	endOffset: number;
	count: number;
}

/** The lines of a file that the executed blocks of its functions (not its top level) span. */
function executedLines(text: string, functions: Array<{ ranges: Range[] }>): Set<number> {
	const lineAt = (offset: number) => text.slice(0, offset).split('\n').length;
	const lines = new Set<number>();
	for (const fn of functions) {
		const [outer, ...inner] = fn.ranges;
		if (outer.count === 0 || outer.startOffset === 0) continue;
		const skipped = inner.filter((r) => r.count === 0);
		for (let l = lineAt(outer.startOffset); l <= lineAt(outer.endOffset); l++) lines.add(l);
		for (const r of skipped)
			for (let l = lineAt(r.startOffset) + 1; l < lineAt(r.endOffset); l++) lines.delete(l);
	}
	return lines;
}

/** Runs `turn` under precise coverage and reports the nodes/ files and lines it ran. */
async function walk(turn: () => Promise<void>): Promise<{ files: number; lines: number }> {
	const session = new Session();
	session.connect();
	await session.post('Profiler.enable');
	await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
	await session.post('Profiler.takePreciseCoverage'); // resets the counts
	await turn();
	const { result } = (await session.post('Profiler.takePreciseCoverage')) as {
		result: Array<{ url: string; functions: Array<{ ranges: Range[] }> }>;
	};
	await session.post('Profiler.stopPreciseCoverage');
	session.disconnect();
	let files = 0;
	let lines = 0;
	for (const script of result) {
		const file = script.url.startsWith('file://') ? new URL(script.url).pathname : script.url;
		if (!file.startsWith(path.join(ROOT, 'nodes'))) continue;
		const ran = executedLines(readFileSync(file, 'utf8'), script.functions);
		if (ran.size === 0) continue;
		files++;
		lines += ran.size;
	}
	return { files, lines };
}

async function walks(): Promise<Record<string, { files: number; lines: number }>> {
	const { turns } = await import('./house-turns');
	const out: Record<string, { files: number; lines: number }> = {};
	for (const [name, turn] of Object.entries(turns())) {
		await turn(); // first use: lazy loads and caches
		out[name] = await walk(turn);
	}
	return out;
}

async function main(): Promise<void> {
	const [what, arg] = process.argv.slice(2);
	if (what === 'load-one') return loadOne(arg);
	const lines: string[] = [
		'| node file | files of src/ and nodes/ loaded | their lines |',
		'|---|---:|---:|',
	];
	for (const f of NODE_FILES) {
		const l = loadsOf(f);
		lines.push(`| ${path.basename(f)} | ${l.files} | ${l.lines.toLocaleString('en')} |`);
	}
	console.log(lines.join('\n'));
	if (what === 'loads') return;
	console.log('\n| a chat turn through | nodes/ files run | their lines run |\n|---|---:|---:|');
	for (const [name, w] of Object.entries(await walks()))
		console.log(`| ${name} | ${w.files} | ${w.lines} |`);
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const index = require(path.join(ROOT, 'src/index.ts')) as Record<string, unknown>;
	console.log(
		`\nFiles importing keys/layout: ${layoutImports()}; a memory's keys.ts: ${memoryKeyImports()}`,
	);
	console.log(`Values src/index.ts exports: ${Object.keys(index).length}`);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
