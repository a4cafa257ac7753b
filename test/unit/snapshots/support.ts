// Shared by the versioned-data tests (unit and storage): what storage holds, and realistic data.
import type { MemoryStorage } from '../../../src/internal';

/** Every stored object, key → bytes (base64), for "nothing was written" and "same bytes" checks. */
export async function storedObjects(
	storage: MemoryStorage,
	prefix = '',
): Promise<Map<string, string>> {
	const out = new Map<string, string>();
	const listed = (await storage.list(prefix)).sort((a, b) => (a.key < b.key ? -1 : 1));
	for (const o of listed) {
		const got = await storage.get(o.key);
		if (got) out.set(o.key, Buffer.from(got.body).toString('base64'));
	}
	return out;
}

/** The same objects with their keys relative to `prefix` (to compare two conversations). */
export async function storedUnder(
	storage: MemoryStorage,
	prefix: string,
): Promise<Map<string, string>> {
	const all = await storedObjects(storage, prefix);
	return new Map([...all].map(([k, v]) => [k.slice(prefix.length), v]));
}

/** A toxicity record like the seed's (about 1 KB), varied by `i`. */
export function toxicity(i: number) {
	return {
		inci: 'WATER',
		category: i % 2 === 0 ? 'PERFUME' : 'FRAGRANCE',
		cas: '7732-18-5',
		acute_toxicity: {
			ld50_oral_mg_kg: 90_000 + i,
			noael_mg_kg_day: 1000 + (i % 7),
			source: 'ECHA',
		},
		references: Array.from({ length: 6 }, (_, k) => ({ id: `ref-${k}`, note: `checked ${i}` })),
		edited: i,
	};
}
