/**
 * Decoded documents of this process, each valid for one stored version only. A read still asks storage
 * for the current version (a conditional GET, or a stat), so the cache never serves a stale document:
 * it only saves transferring, parsing and validating one that has not changed.
 * Entries are deeply frozen because every reader in the process shares them.
 */
interface Entry {
	version: string;
	doc: unknown;
	weight: number;
}

function deepFreeze<T>(value: T): T {
	if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
	for (const v of Object.values(value)) deepFreeze(v);
	return Object.freeze(value);
}

export class DocumentCache {
	private readonly entries = new Map<string, Entry>();
	private weight = 0;

	constructor(private readonly maxWeight: number) {}

	get<T>(id: string): { version: string; doc: T } | undefined {
		const entry = this.entries.get(id);
		if (entry) {
			this.entries.delete(id); // most recently used goes last
			this.entries.set(id, entry);
		}
		return entry as { version: string; doc: T } | undefined;
	}

	/** Caches (and freezes) a document; `weight` approximates its heap size (twice its stored bytes). */
	set<T>(id: string, version: string, doc: T, weight: number): T {
		this.delete(id);
		if (weight > this.maxWeight) return deepFreeze(doc);
		const frozen = deepFreeze(doc);
		this.entries.set(id, { version, doc: frozen, weight });
		this.weight += weight;
		for (const [oldest, entry] of this.entries) {
			if (this.weight <= this.maxWeight) break;
			this.entries.delete(oldest);
			this.weight -= entry.weight;
		}
		return frozen;
	}

	delete(id: string): void {
		const entry = this.entries.get(id);
		if (!entry) return;
		this.entries.delete(id);
		this.weight -= entry.weight;
	}

	clear(): void {
		this.entries.clear();
		this.weight = 0;
	}
}

/** The process-wide cache every document store uses (about 128 MB of decoded documents at most). */
export const documentCache = new DocumentCache(128 * 2 ** 20);
