/**
 * What a search's GETs read, by kind of object (not a test): the storage wrapper the read benches count
 * with, and the table rows they print.
 */
import type { GetOptions, NotModified, StoredObject } from '../src/internal';
import { Counted, f } from './scale';

/** What a key is, for the table: its kind of object, not its name. */
export const KINDS: Array<[RegExp, string]> = [
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
export class ByKind extends Counted {
	kinds = new Map<string, number>();
	/** Keys read since `seen` was last cleared (one search), and GETs of one of them again. */
	seen = new Set<string>();
	repeats = 0;

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		const kind = kindOf(key);
		this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1);
		if (this.seen.has(key)) this.repeats++;
		this.seen.add(key);
		return super.get(key, options);
	}
}

/** The table's rows: one per kind any column read, means per search to one decimal. */
export function kindRows(columns: ReadonlyArray<Map<string, number>>): string[] {
	const kinds = [...new Set([...KINDS.map(([, k]) => k), 'other'])].filter((k) =>
		columns.some((c) => c.has(k)),
	);
	return kinds.map((k) => `| ${k} | ${columns.map((c) => f(c.get(k) ?? 0, 1)).join(' | ')} |`);
}
