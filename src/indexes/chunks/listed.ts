// Parts as a manifest lists them: which ones storage no longer holds (one listing of the segments
// folder), whether a key is one of them, and whether a segment read is the one listed.
import { CorruptDocumentError } from '../../errors';
import { forEachKey } from '../../store/storage';
import type { MemoryStorage } from '../../store/storage';
import { tierPartKey } from './tiering';
import type { PartNames } from './tiering';

/** What a manifest says of a segment it lists (both indexes' refs have these). */
export interface ListedSegment {
	key: string;
	/** Chunks stored in it. */
	count: number;
	/** Its stored size. */
	bytes: number;
}

/**
 * Checks that a segment read holds the chunks (and, read from storage now, the bytes) its listing
 * says: a segment replaced by another, valid one (another segment's object copied over it) would
 * otherwise count some chunks twice and lose others without a word.
 */
export function checkListed(ref: ListedSegment, chunks: number, bytes?: number): void {
	if (chunks !== ref.count || (bytes !== undefined && bytes !== ref.bytes))
		throw new CorruptDocumentError(
			ref.key,
			`it holds ${chunks} chunks${bytes === undefined ? '' : ` in ${bytes} bytes`}, but its manifest lists ${ref.count}${bytes === undefined ? '' : ` in ${ref.bytes} bytes`}`,
		);
}

/** A tier's parts as its manifest names them (chunks/tiering.ts tierPartKey). */
export interface NamedParts {
	kind: string;
	ext: string;
	tier: PartNames;
	/** Parts 0 … count − 1. */
	count: number;
}

/** Its tier's parts, and which of them a listing showed (for `missing`). */
interface TierEntry {
	parts: NamedParts;
	seen?: Uint8Array;
}

/**
 * The keys a manifest lists: its segments and other parts by key, its tiers' parts by tier (ID, part
 * count, versions). A base-wide index's tiers name tens of thousands of buckets, keys of a hundred
 * bytes each; a set of them all would weigh megabytes and grow with the base, where a tier's entry
 * weighs what its manifest entry does.
 */
export class ListedKeys {
	private readonly plain = new Map<string, boolean>();
	private readonly tiers = new Map<string, TierEntry>();

	constructor(
		readonly prefix: string,
		keys: Iterable<string>,
		tiers: readonly NamedParts[] = [],
	) {
		for (const key of keys) this.plain.set(key, false);
		for (const parts of tiers) {
			// A tier whose names do not read back (an ID or a version with a "-") is listed key by key.
			const named = (b: number) => tierPartKey(prefix, parts.kind, parts.tier, b, parts.ext);
			const readsBack = (b: number) => this.tierOf(named(b))?.b === b;
			const id = `${parts.kind}-${parts.tier.id}`;
			if (this.tiers.has(id)) continue;
			this.tiers.set(id, { parts });
			const checked = [0, parts.count - 1, ...Object.keys(parts.tier.versions ?? {}).map(Number)];
			if (parts.count > 0 && checked.every((b) => !(b < parts.count) || readsBack(b))) continue;
			this.tiers.delete(id);
			for (let b = 0; b < parts.count; b++) this.plain.set(named(b), false);
		}
	}

	/** The tier part a key names, if it names one of the listed tiers' parts. */
	private tierOf(key: string): { entry: TierEntry; b: number } | undefined {
		if (!key.startsWith(this.prefix)) return undefined;
		const dot = key.lastIndexOf('.');
		const [kind, id, part, version, ...rest] = key.slice(this.prefix.length, dot).split('-');
		const entry = this.tiers.get(`${kind}-${id}`);
		if (!entry || rest.length > 0 || !/^\d+$/.test(part ?? '')) return undefined;
		const { ext, tier, count } = entry.parts;
		const b = Number(part);
		if (key.slice(dot + 1) !== ext || b >= count || String(b) !== part) return undefined;
		return tier.versions?.[b] === version ? { entry, b } : undefined;
	}

	/** Whether the manifest lists nothing. */
	get empty(): boolean {
		return this.plain.size === 0 && [...this.tiers.values()].every((t) => t.parts.count === 0);
	}

	/** Whether the manifest lists `key`. */
	has(key: string): boolean {
		return this.plain.has(key) || this.tierOf(key) !== undefined;
	}

	/** Notes that storage holds `key` (see `missing`). */
	see(key: string): void {
		if (this.plain.has(key)) this.plain.set(key, true);
		const at = this.tierOf(key);
		if (!at) return;
		at.entry.seen ??= new Uint8Array(at.entry.parts.count);
		at.entry.seen[at.b] = 1;
	}

	/** The listed keys never seen, in the order given (the tiers' parts in part order). */
	missing(): string[] {
		const out = [...this.plain].filter(([, seen]) => !seen).map(([key]) => key);
		for (const { parts, seen } of this.tiers.values())
			for (let b = 0; b < parts.count; b++)
				if (!seen?.[b]) out.push(tierPartKey(this.prefix, parts.kind, parts.tier, b, parts.ext));
		return out;
	}
}

/** The keys `listed` names that are not among the objects under its prefix (one listing of keys). */
export async function missingFrom(storage: MemoryStorage, listed: ListedKeys): Promise<string[]> {
	if (listed.empty) return [];
	await forEachKey(storage, listed.prefix, (key) => listed.see(key));
	return listed.missing();
}
