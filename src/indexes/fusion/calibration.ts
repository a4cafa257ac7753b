// What a base has learned, in this process, from its searches: the log ratio of evidence of its vector
// and its word ranking (weights.ts) in its latest searches. It says how good the connected
// embedding model is on this base's content compared with words, which one query cannot say. Kept in
// memory only, per base and embedding model (a model with other dimensions, or another knowledge base,
// starts again), and bounded like every cache of the engine; a process starting anew learns again
// within a few searches.
import { BoundedCache } from '../../common/bounded-cache';
import { median } from './standout';

/** The latest searches a calibration keeps. */
export const CALIBRATION_WINDOW = 64;

export class Calibration {
	private readonly recent: number[] = [];

	/** Searches recorded (up to the window). */
	get count(): number {
		return this.recent.length;
	}

	/** The typical log ratio of evidence (vectors over words) of the latest searches. */
	typical(): number | undefined {
		return median(this.recent);
	}

	record(difference: number): void {
		if (!Number.isFinite(difference)) return;
		this.recent.push(difference);
		if (this.recent.length > CALIBRATION_WINDOW) this.recent.shift();
	}
}

const calibrations = new BoundedCache<Calibration>({
	name: 'fusion calibrations',
	maxEntries: 1024,
});

/** The calibration of one base and embedding model (`key` names both, and the storage). */
export function calibrationOf(key: string): Calibration {
	return calibrations.getOrSet(key, () => new Calibration());
}

export function clearCalibrations(): void {
	calibrations.clear();
	measured.clear();
}

/** A null, and the size of the scope it was measured in. */
interface MeasuredNull {
	value: number | undefined;
	size: number;
}

const measured = new BoundedCache<MeasuredNull>({ name: 'fusion nulls', maxEntries: 4096 });
/** A null is measured again in a scope this many times larger than the one it was measured in. */
const REMEASURE = 1.5;

/**
 * A ranking's null (`key` names the ranking with its base and model), measured by `measure` in the
 * scope of the search that first needs it, and again only when a search's scope is REMEASURE times
 * larger: a null describes the model and the kind of content, not one scope, and a larger scope
 * measures it better. What could not be measured (too little content) is cached too, so a small scope
 * is not probed at every search.
 */
export async function nullOf(
	key: string,
	size: number,
	measure: () => Promise<number | undefined>,
): Promise<number | undefined> {
	const cached = measured.get(key);
	if (cached && size < cached.size * REMEASURE) return cached.value;
	const value = await measure();
	// A scope where nothing could be measured keeps what a smaller scope measured before.
	if (value !== undefined || cached?.value === undefined)
		measured.set(key, { value, size: Math.max(size, cached?.size ?? 0) });
	return value ?? cached?.value;
}
