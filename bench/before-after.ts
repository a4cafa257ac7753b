/**
 * Before and after, side by side (not a test): a chat turn's cost (bench/turn.ts) and a Memory Base
 * capture's cost (bench/capture.ts) in an earlier commit and in this tree, measured in one run. The
 * earlier commit (BEFORE_REF, default main) is checked out as a detached git worktree in a temp dir,
 * with this tree's node_modules linked in, and removed at the end. Each round runs every benchmark once
 * in each tree as a child process, before then after in rounds 1, 3, 5… and after then before in rounds
 * 2, 4…, so a shared machine's load weighs on both sides alike. Prints one markdown table per benchmark: each
 * row's p50 in both trees (the median of its per-round p50s), the ratio after/before, and the range of
 * the per-round p50s (the noise to read the ratio against).
 * A benchmark file missing in the earlier tree (bench/turn.ts came later) runs there as this tree's copy,
 * against that tree's code; a file without a size knob runs its default size (both noted in the output).
 * Needs git and the history of BEFORE_REF (a shallow clone may lack it: then it exits with status 2).
 * Capture measures radosgw too: it uses RGW_ENDPOINT, or starts one radosgw for the whole run.
 * Knobs: BEFORE_REF (main), BEFORE_AFTER_ROUNDS (7), TURN_BENCH_TURNS (100), CAPTURE_BENCH_TURNS (100),
 * MANIFEST_BENCH_ROUNDS (41; bench/manifests.ts, the base-wide manifests' decoding, runs by default too);
 * BEFORE_AFTER_BENCHES, comma-separated files, runs those only (bench/wide-search.ts, a search of every
 * conversation on kept bases, runs only when named, with its WIDE_SEARCH_ROOTS);
 * BEFORE_AFTER_SAME_BENCHES=1, this tree's benchmark files run in the earlier tree too;
 * BEFORE_AFTER_COLUMN, a column of milliseconds compared instead of p50 (its header contains the text:
 * "event loop held" for bench/wide-search.ts), rows still named by the cells before p50.
 */
import { execFileSync, spawn } from 'node:child_process';
import {
	copyFileSync,
	existsSync,
	mkdtempSync,
	readFileSync,
	realpathSync,
	rmSync,
	symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { loadLine, machineLine, median } from './stats';

const AFTER = path.resolve(__dirname, '..');
const BEFORE_REF = process.env.BEFORE_REF || 'main';
const ROUNDS = Number(process.env.BEFORE_AFTER_ROUNDS ?? 7);
/** The column compared instead of p50 (its header contains this text), in milliseconds too. */
const COLUMN = process.env.BEFORE_AFTER_COLUMN ?? '';
const SHOWN = COLUMN ? `"${COLUMN}" (median of rounds)` : 'p50';

interface Bench {
	file: string;
	knob: string;
	size: string;
}
const ONLY = (process.env.BEFORE_AFTER_BENCHES ?? '').split(',').filter(Boolean);
/** The benchmark files of this tree run in the earlier one too (a bench that gained a knob since). */
const SAME_BENCHES = process.env.BEFORE_AFTER_SAME_BENCHES === '1';
const BENCHES: Bench[] = [
	{ file: 'bench/turn.ts', knob: 'TURN_BENCH_TURNS', size: process.env.TURN_BENCH_TURNS ?? '100' },
	{
		file: 'bench/capture.ts',
		knob: 'CAPTURE_BENCH_TURNS',
		size: process.env.CAPTURE_BENCH_TURNS ?? '100',
	},
	{
		file: 'bench/manifests.ts',
		knob: 'MANIFEST_BENCH_ROUNDS',
		size: process.env.MANIFEST_BENCH_ROUNDS ?? '41',
	},
	{
		file: 'bench/wide-search.ts',
		knob: 'WIDE_SEARCH_SEARCHES',
		size: process.env.WIDE_SEARCH_SEARCHES ?? '20',
	},
].filter((b) => (ONLY.length ? ONLY.includes(b.file) : b.file !== 'bench/wide-search.ts'));

const git = (...args: string[]) =>
	execFileSync('git', args, {
		cwd: AFTER,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'pipe'],
	}).trim();
const log = (line: string) => console.error(line);

/** "d0fb479 (main, 2026-11-27 12:56, house.ts: lint)": the subject cut at 60 characters. */
function describe(rev: string, name: string): string {
	const [sha, date, subject] = git(
		'log',
		'-1',
		'--format=%h%n%cd%n%s',
		'--date=format:%Y-%m-%d %H:%M',
		rev,
	).split('\n');
	return `${sha} (${name}, ${date}, ${subject.length > 60 ? `${subject.slice(0, 59)}…` : subject})`;
}

/** One table of a benchmark's output: per row (the cells before the p50 column), its p50 in ms. */
interface Table {
	label: string;
	title: string;
	p50: Map<string, number>;
}

/** The first markdown table of `out` with a p50 column; its title is the last heading before it. */
function parseTable(out: string): Table {
	const lines = out.split('\n');
	let title = '';
	for (let i = 0; i + 1 < lines.length; i++) {
		if (lines[i].startsWith('#')) title = lines[i].replace(/^#+\s*/, '');
		if (!lines[i].startsWith('|') || !/^\|[-:| ]+\|$/.test(lines[i + 1].trim())) continue;
		const cells = (line: string) =>
			line
				.trim()
				.replace(/^\||\|$/g, '')
				.split('|')
				.map((c) => c.trim());
		const head = cells(lines[i]);
		const col = head.findIndex((h) => /\bp50\b/.test(h));
		if (col < 1) continue;
		const from = COLUMN ? head.findIndex((h) => h.includes(COLUMN)) : col;
		if (from < 0) throw new Error(`no column "${COLUMN}" in: ${lines[i]}`);
		const p50 = new Map<string, number>();
		for (let j = i + 2; j < lines.length && lines[j].startsWith('|'); j++) {
			const row = cells(lines[j]);
			const ms = /^([\d.,]+)\s*ms$/.exec(row[from]);
			if (!ms) throw new Error(`no milliseconds in column "${head[from]}" of: ${lines[j]}`);
			p50.set(row.slice(0, col).join(', '), Number(ms[1].replace(/,/g, '')));
		}
		return { label: head.slice(0, col).join(', '), title, p50 };
	}
	throw new Error(`no markdown table with a p50 column in:\n${out}`);
}

/** Runs one benchmark file in one tree; its stdout. */
function run(tree: string, bench: Bench, env: NodeJS.ProcessEnv): Promise<string> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, ['--import', 'tsx', bench.file], {
			cwd: tree,
			env: { ...process.env, ...env, NODE_NO_WARNINGS: '1', [bench.knob]: bench.size },
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		let out = '';
		let err = '';
		child.stdout.on('data', (d: Buffer) => (out += d.toString()));
		child.stderr.on('data', (d: Buffer) => (err += d.toString()));
		child.on('error', reject);
		child.on('close', (code) =>
			code === 0
				? resolve(out)
				: reject(new Error(`${bench.file} in ${tree} exited with ${code}:\n${err.slice(-3000)}`)),
		);
	});
}

/** A detached worktree of `sha` in a temp dir, with this tree's node_modules; and its removal. */
function checkout(sha: string): { dir: string; remove: () => void } {
	const dir = mkdtempSync(path.join(tmpdir(), 'llm-memory-before-'));
	git('worktree', 'add', '--detach', dir, sha);
	symlinkSync(
		realpathSync(path.join(AFTER, 'node_modules')),
		path.join(dir, 'node_modules'),
		'dir',
	);
	let removed = false;
	const remove = () => {
		if (removed) return;
		removed = true;
		try {
			git('worktree', 'remove', '--force', dir);
		} catch {
			rmSync(dir, { recursive: true, force: true });
			git('worktree', 'prune');
		}
	};
	return { dir, remove };
}

/** Makes the earlier tree able to run every benchmark; the differences, for stderr. */
function prepare(before: string): string[] {
	const notes: string[] = [];
	for (const file of ['bench/stats.ts', ...BENCHES.map((b) => b.file)]) {
		const same = SAME_BENCHES && file !== 'bench/stats.ts';
		if (existsSync(path.join(before, file)) && !same) continue;
		copyFileSync(path.join(AFTER, file), path.join(before, file));
		notes.push(
			same
				? `${file}: this tree's copy runs in ${BEFORE_REF} too (BEFORE_AFTER_SAME_BENCHES), on that tree's code`
				: `${file} is not in ${BEFORE_REF}: this tree's copy runs there, on that tree's code`,
		);
	}
	for (const b of BENCHES)
		for (const [name, tree] of [
			['before', before],
			['after', AFTER],
		])
			if (!readFileSync(path.join(tree, b.file), 'utf8').includes(b.knob))
				notes.push(`${b.file} (${name}) has no ${b.knob}: it runs its default size`);
	return notes;
}

/** A radosgw for capture's second storage: RGW_ENDPOINT, or one started here for the whole run. */
function radosgw(): { endpoint: string; stop: () => void } {
	if (process.env.RGW_ENDPOINT) return { endpoint: process.env.RGW_ENDPOINT, stop: () => {} };
	const script = path.join(AFTER, 'scripts/rgw.sh');
	const dir = mkdtempSync(path.join(tmpdir(), 'llm-memory-rgw-'));
	const endpoint = execFileSync('bash', [script, 'up', dir], {
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'ignore'],
	}).trim();
	return {
		endpoint,
		stop: () => {
			execFileSync('bash', [script, 'down', dir], { stdio: 'ignore' });
			rmSync(dir, { recursive: true, force: true });
		},
	};
}

const f = (x: number) => x.toFixed(2);
const range = (xs: number[]) => `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

async function main(): Promise<void> {
	let sha: string;
	try {
		sha = git('rev-parse', '--verify', '--quiet', `${BEFORE_REF}^{commit}`);
	} catch {
		log(
			`before-after: ${BEFORE_REF} does not resolve to a commit here (a shallow clone?); skipped.`,
		);
		process.exit(2);
	}
	const started = performance.now();
	const startLoad = loadLine().replace('load ', '');
	const dirty = git('status', '--porcelain', '--untracked-files=no')
		? ', with uncommitted changes'
		: '';
	const header = `Before: ${describe(sha, BEFORE_REF)}.\nAfter: ${describe('HEAD', `${git('rev-parse', '--abbrev-ref', 'HEAD')}${dirty}`)}.`;
	const worktree = checkout(sha);
	let rgw: { endpoint: string; stop: () => void } | undefined;
	const cleanup = () => {
		rgw?.stop();
		worktree.remove();
	};
	for (const signal of ['SIGINT', 'SIGTERM'] as const)
		process.once(signal, () => {
			cleanup();
			process.exit(130);
		});
	try {
		const notes = prepare(worktree.dir);
		for (const note of notes) log(`note: ${note}`);
		// Only capture measures radosgw: the other benchmarks run without one.
		if (BENCHES.some((b) => b.file === 'bench/capture.ts')) rgw = radosgw();
		const trees = { before: worktree.dir, after: AFTER };
		const results = BENCHES.map(() => ({ before: [] as Table[], after: [] as Table[] }));
		for (let round = 0; round < ROUNDS; round++)
			for (const [i, bench] of BENCHES.entries())
				for (const side of round % 2
					? (['after', 'before'] as const)
					: (['before', 'after'] as const)) {
					const t0 = performance.now();
					const table = parseTable(
						await run(trees[side], bench, rgw ? { RGW_ENDPOINT: rgw.endpoint } : {}),
					);
					results[i][side].push(table);
					const p50s = [...table.p50.values()].map(f).join(' / ');
					log(
						`round ${round + 1}/${ROUNDS} ${bench.file} ${side}: p50 ${p50s} ms (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
					);
				}
		const minutes = (performance.now() - started) / 60_000;
		console.log(`\n## Before and after\n\n${header}\n`);
		console.log(
			machineLine(
				`${loadLine()} at the end, ${startLoad} at the start; ${ROUNDS} rounds alternating before/after, ${minutes.toFixed(1)} min`,
			),
		);
		for (const note of notes) console.log(`\nNote: ${note}.`);
		for (const [i, bench] of BENCHES.entries()) {
			const { before, after } = results[i];
			const rows = [...new Set([...before[0].p50.keys(), ...after[0].p50.keys()])];
			console.log(`\n### ${after[0].title} — ${bench.file}, ${bench.knob}=${bench.size}\n`);
			console.log(
				`| ${after[0].label} | before ${SHOWN} | after ${SHOWN} | after/before | before, per round | after, per round |`,
			);
			console.log('|---|---:|---:|---:|---:|---:|');
			for (const row of rows) {
				const b = before.map((t) => t.p50.get(row)).filter((x) => x !== undefined);
				const a = after.map((t) => t.p50.get(row)).filter((x) => x !== undefined);
				const cell = (xs: number[], g: (xs: number[]) => string) => (xs.length ? g(xs) : '—');
				console.log(
					`| ${row} | ${cell(b, (xs) => `${f(median(xs))} ms`)} | ${cell(a, (xs) => `${f(median(xs))} ms`)} | ${b.length && a.length ? `${f(median(a) / median(b))}×` : '—'} | ${cell(b, range)} | ${cell(a, range)} |`,
				);
			}
		}
	} finally {
		cleanup();
	}
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
