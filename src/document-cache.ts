import type { MemoryDocument } from './document';

/**
 * Decoded memory documents of this process, each valid for one stored version only. A read still asks
 * storage for the current version (a conditional GET, or a stat), so the cache never serves a stale
 * document: it only saves transferring, parsing and validating one that has not changed.
 * Entries are frozen because every memory object of the process shares them.
 */
interface Entry {
	version: string;
	doc: MemoryDocument;
	weight: number;
}

/** Rough heap cost of a decoded document, for the size bound. */
function weightOf(doc: MemoryDocument): number {
	let n = 0;
	for (const m of doc.messages) n += 2 * m.content.length + 300 + 200 * m.files.length;
	return n;
}

function freeze(doc: MemoryDocument): MemoryDocument {
	for (const m of doc.messages) {
		if (Object.isFrozen(m)) continue;
		for (const f of m.files) Object.freeze(f);
		Object.freeze(m.files);
		Object.freeze(m);
	}
	Object.freeze(doc.messages);
	return Object.freeze(doc);
}

export class DocumentCache {
	private readonly entries = new Map<string, Entry>();
	private weight = 0;

	constructor(private readonly maxWeight: number) {}

	get(id: string): Entry | undefined {
		const entry = this.entries.get(id);
		if (entry) {
			this.entries.delete(id); // most recently used goes last
			this.entries.set(id, entry);
		}
		return entry;
	}

	set(id: string, version: string, doc: MemoryDocument): MemoryDocument {
		this.delete(id);
		const weight = weightOf(doc);
		if (weight > this.maxWeight) return doc;
		const frozen = freeze(doc);
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

/** The process-wide cache used by every memory object (about 128 MB of decoded documents at most). */
export const documentCache = new DocumentCache(128 * 2 ** 20);

/** Empties the process-wide document cache (benchmarks of cold reads, tests). */
export function clearDocumentCache(): void {
	documentCache.clear();
}
