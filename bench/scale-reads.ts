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
import type { SearchMode } from '../src/internal';
import { ByKind, kindRows } from './read-kinds';
import { BASE_ID, f, HashEmbedder, n, queryOf } from './scale';
import { lcg, loadLine, machineLine, median } from './stats';

interface Measured {
	median: number;
	kinds: Map<string, number>;
	/** GETs of an object the same search had read already, per search. */
	repeats: number;
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
	storage.repeats = 0;
	const per: number[] = [];
	for (let i = 0; i < searches; i++) {
		if (cold) clearAllCaches();
		storage.seen.clear();
		const before = storage.c.get;
		await base.search(query(), { allUsers: true, k: 5, mode });
		per.push(storage.c.get - before);
	}
	const kinds = new Map([...storage.kinds].map(([k, v]) => [k, v / searches]));
	return { median: median(per), kinds, repeats: storage.repeats / searches };
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
	console.log(`\n${machineLine(loadLine())}\n`);
	console.log(`| what is read | ${columns.map((c) => c.label).join(' | ')} |`);
	console.log(`|---|${columns.map(() => '---:').join('|')}|`);
	for (const row of kindRows(columns.map((c) => c.m.kinds))) console.log(row);
	console.log(
		`| of these, an object the search read already | ${columns.map((c) => f(c.m.repeats, 1)).join(' | ')} |`,
	);
	console.log(`| median per search | ${columns.map((c) => n(c.m.median)).join(' | ')} |`);
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
