// What every node that names a Memory Base by its ID says when the ID names none on the storage.
import { listMemoryBases } from '../../src/knowledge/listing';
import type { MemoryBase } from '../../src/knowledge/memory-base';

/** Why a base cannot be used, naming the bases this storage holds; null when it exists. */
export async function unknownBase(
	base: MemoryBase,
): Promise<{ message: string; help: string } | null> {
	if ((await base.config()) !== null) return null;
	const bases = await listMemoryBases(base.storage);
	const names = bases.map((b) => `"${b}"`).join(', ');
	return {
		message: `No Memory Base named "${base.baseId}" (bases in this storage: ${names || 'none yet'})`,
		help: bases.length
			? 'Check "Memory Base ID" (by default the workflow ID: a Memory Base of another workflow needs that workflow’s ID) and the storage settings.'
			: 'Nothing was captured into this storage yet: capture first (Memory Base → Capture, or Long-Term Memory on LLM with Memory or the LLM Memory Store), or check the storage settings.',
	};
}
