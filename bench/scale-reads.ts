/**
 * What a search of every conversation reads (not a test): prints a markdown table of its GETs per search
 * by what was read, on bases `bench/scale.ts` keeps (SCALE_BENCH_KEEP=1 prints their folders), given as
 * SCALE_READS_ROOTS, comma-separated `users=folder` (local disk). For each base, SCALE_READS_SEARCHES
 * (20) searches for three words of random filler users' messages, MemoryBase.search(query, { allUsers:
 * true, k: 5 }) in SCALE_READS_MODE (hybrid), twice: warm (after two searches, the caches as this
 * process configures them) and cold (the caches emptied before each search). Means per search, and
 * the median of each search's GETs.
 */
import { clearAllCaches, LocalDiskStorage, MemoryBase } from '../src/internal';
import type { GetOptions, NotModified, SearchMode, StoredObject } from '../src/internal';
import { BASE_ID, Counted, f, HashEmbedder, n, queryOf } from './scale';
import { loadLine, machineLine, median } from './stats';

/** What a key is, for the table: its kind of object, not its name. */
const KINDS: Array<[RegExp, string]> = [
	[/\.vcl$/, 'buckets of the cell tiers (vectors near the query)'],
	[/\.vcb$/, 'codebook of the cell tiers'],
	[/\.trm$/, 'buckets of the term tiers (the query’s words)'],
	[/\.lex$/, 'word-index segments (the best word matches’ chunks, the newest segments)'],
	[/\.vec$/, 'vector segments (the newest, read whole; the returned matches’ own)'],
	[/\/sessions\/[^/]+\/log\.json$/, 'open capture logs'],
	[/manifest\.json$/, 'manifests of the base-wide indexes'],
	[/\.json$/, 'configuration and embedding metadata'],
];
const kindOf = (key: string) => KINDS.find(([re]) => re.test(key))?.[1] ?? 'other';

/** Counts GETs by kind as well. */
class ByKind extends Counted {
	kinds = new Map<string, number>();

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		const kind = kindOf(key);
		this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
		return super.get(key, options);
	}
}

interface Measured {
	median: number;
	kinds: Map<string, number>;
}

/** A seeded generator (the same queries for every base and run). */
function lcg(seed: number): () => number {
	let s = seed;
	return () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

async function measure(root: string, users: number, cold: boolean): Promise<Measured> {
	const storage = new ByKind(new LocalDiskStorage({ root }));
	const base = new MemoryBase({ storage, baseId: BASE_ID, embedder: new HashEmbedder() });
	const mode = (process.env.SCALE_READS_MODE ?? 'hybrid') as SearchMode;
	const searches = Number(process.env.SCALE_READS_SEARCHES ?? 20);
	const rand = lcg(12_345);
	const query = () => queryOf(Math.floor(rand() * users), rand).text;
	clearAllCaches();
	if (!cold) for (let i = 0; i < 2; i++) await base.search(query(), { allUsers: true, k: 5, mode });
	storage.kinds.clear();
	const per: number[] = [];
	for (let i = 0; i < searches; i++) {
		if (cold) clearAllCaches();
		const before = storage.c.get;
		await base.search(query(), { allUsers: true, k: 5, mode });
		per.push(storage.c.get - before);
	}
	const kinds = new Map([...storage.kinds].map(([k, v]) => [k, v / searches]));
	return { median: median(per), kinds };
}

async function main(): Promise<void> {
	const roots = (process.env.SCALE_READS_ROOTS ?? '').split(',').filter(Boolean);
	if (roots.length === 0)
		throw new Error('SCALE_READS_ROOTS: users=folder,… (bases bench/scale.ts kept)');
	const columns: Array<{ label: string; m: Measured }> = [];
	for (const entry of roots) {
		const [users, root] = entry.split('=');
		for (const cold of [false, true])
			columns.push({
				label: `${n(Number(users))} users ${cold ? 'cold' : 'warm'}`,
				m: await measure(root, Number(users), cold),
			});
	}
	const kinds = [...new Set([...KINDS.map(([, k]) => k), 'other'])].filter((k) =>
		columns.some((c) => c.m.kinds.has(k)),
	);
	console.log(`\n${machineLine(loadLine())}\n`);
	console.log(`| what is read | ${columns.map((c) => c.label).join(' | ')} |`);
	console.log(`|---|${columns.map(() => '---:').join('|')}|`);
	for (const k of kinds)
		console.log(`| ${k} | ${columns.map((c) => f(c.m.kinds.get(k) ?? 0, 1)).join(' | ')} |`);
	console.log(`| median per search | ${columns.map((c) => n(c.m.median)).join(' | ')} |`);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
