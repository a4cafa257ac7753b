/**
 * The one cache of the engine: least recently used entries go first once the cache holds more than
 * its limits (entries and/or weight, e.g. bytes). Every in-process cache of the package is one of
 * these, so each has a limit of its own and `cacheStats()` can say what they all hold.
 *
 * A group (for example one knowledge base) may be capped below the cache's own limit: past its cap,
 * the group's own least recently used entries go, never another group's. So one caller's setting can
 * never grow or shrink what another caller may keep.
 */
export interface BoundedCacheOptions<V> {
	/** Shown by cacheStats(). */
	name: string;
	/** Entries at most (default: unlimited, so maxWeight must be set). */
	maxEntries?: number;
	/** Total weight at most (default: unlimited, so maxEntries must be set). */
	maxWeight?: number;
	/** Called for every entry that leaves the cache, by eviction, delete or clear. */
	onEvict?: (value: V, key: string) => void;
}

interface Entry<V> {
	value: V;
	weight: number;
	group?: string;
}

export interface CacheStats {
	name: string;
	entries: number;
	weight: number;
	maxEntries: number | null;
	maxWeight: number | null;
}

const registry = new Set<BoundedCache<unknown>>();

export class BoundedCache<V> {
	readonly name: string;
	readonly maxEntries: number;
	readonly maxWeight: number;
	private readonly entries = new Map<string, Entry<V>>();
	private readonly groups = new Map<string, number>();
	private total = 0;
	private readonly onEvict?: (value: V, key: string) => void;

	constructor(options: BoundedCacheOptions<V>) {
		if (options.maxEntries === undefined && options.maxWeight === undefined)
			throw new RangeError(`cache ${options.name}: set maxEntries or maxWeight`);
		this.name = options.name;
		this.maxEntries = options.maxEntries ?? Infinity;
		this.maxWeight = options.maxWeight ?? Infinity;
		this.onEvict = options.onEvict;
		registry.add(this as BoundedCache<unknown>);
	}

	get size(): number {
		return this.entries.size;
	}

	get weight(): number {
		return this.total;
	}

	/** The value, now the most recently used; undefined when absent. */
	get(key: string): V | undefined {
		const entry = this.entries.get(key);
		if (!entry) return undefined;
		this.entries.delete(key);
		this.entries.set(key, entry);
		return entry.value;
	}

	has(key: string): boolean {
		return this.entries.has(key);
	}

	/**
	 * Keeps a value (weight 1 unless given). A value heavier than the cache (or its group's cap) is not
	 * kept at all. `group` and `groupMax` cap one group's total weight.
	 */
	set(
		key: string,
		value: V,
		options: { weight?: number; group?: string; groupMax?: number } = {},
	): V {
		this.delete(key);
		const weight = options.weight ?? 1;
		const cap = Math.min(this.maxWeight, options.groupMax ?? Infinity);
		if (weight > cap) return value;
		this.entries.set(key, { value, weight, group: options.group });
		this.total += weight;
		if (options.group !== undefined)
			this.groups.set(options.group, (this.groups.get(options.group) ?? 0) + weight);
		if (options.group !== undefined && options.groupMax !== undefined)
			this.evictGroup(options.group, options.groupMax);
		this.evict();
		return value;
	}

	/** The cached value, or `make()`'s, kept. */
	getOrSet(key: string, make: () => V): V {
		const hit = this.get(key);
		return hit !== undefined ? hit : this.set(key, make());
	}

	delete(key: string): boolean {
		const entry = this.entries.get(key);
		if (!entry) return false;
		this.entries.delete(key);
		this.total -= entry.weight;
		if (entry.group !== undefined) {
			const left = (this.groups.get(entry.group) ?? 0) - entry.weight;
			if (left > 0) this.groups.set(entry.group, left);
			else this.groups.delete(entry.group);
		}
		this.onEvict?.(entry.value, key);
		return true;
	}

	/** Drops every entry whose key starts with `prefix` (what a delete, import or regenerate made stale). */
	deletePrefix(prefix: string): number {
		let n = 0;
		for (const key of [...this.entries.keys()]) if (key.startsWith(prefix) && this.delete(key)) n++;
		return n;
	}

	clear(): void {
		for (const key of [...this.entries.keys()]) this.delete(key);
	}

	stats(): CacheStats {
		return {
			name: this.name,
			entries: this.entries.size,
			weight: this.total,
			maxEntries: Number.isFinite(this.maxEntries) ? this.maxEntries : null,
			maxWeight: Number.isFinite(this.maxWeight) ? this.maxWeight : null,
		};
	}

	private evict(): void {
		for (const [key] of this.entries) {
			if (this.entries.size <= this.maxEntries && this.total <= this.maxWeight) return;
			this.delete(key);
		}
	}

	private evictGroup(group: string, max: number): void {
		for (const [key, entry] of this.entries) {
			if ((this.groups.get(group) ?? 0) <= max) return;
			if (entry.group === group) this.delete(key);
		}
	}
}

/** What every cache of this process holds (name, entries, weight, limits). */
export function cacheStats(): CacheStats[] {
	return [...registry].map((c) => c.stats());
}

/** Empties every cache of this process (tests and benchmarks of cold reads). */
export function clearAllCaches(): void {
	for (const c of registry) c.clear();
}
