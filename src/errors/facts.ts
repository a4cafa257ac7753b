// Errors of long-term facts (src/facts). None of them quotes what a model answered or what a user said:
// those are personal data, and errors end up in logs.
import { MemoryError } from './base';

/**
 * The model's answer to a fact extraction is not the JSON asked for. Nothing was applied: the turns
 * stay unread for the next extraction. Reported with the turn, never fatal.
 */
export class FactsReplyError extends MemoryError {
	constructor(readonly reason: string) {
		super(`The fact extraction answer could not be read: ${reason}. Nothing was applied.`);
	}
}

/** The model call of a fact extraction failed. Nothing was applied; the turns stay unread. */
export class FactsExtractionError extends MemoryError {
	constructor(reason: string, options?: { cause?: unknown }) {
		super(`Facts were not extracted: the model call failed: ${reason}`, options);
	}
}

/** A fact named by an edit that the document does not hold, or holds as no longer current. */
export class UnknownFactError extends MemoryError {
	constructor(
		readonly scope: string,
		readonly factId: string,
		readonly status: 'missing' | 'superseded' | 'retired',
	) {
		super(
			status === 'missing'
				? `Fact "${factId}" does not exist in the facts of ${scope}`
				: `Fact "${factId}" of ${scope} is ${status}: only a current fact can be edited or retired`,
		);
	}
}

/** Every attempt to save a change of the facts lost its compare-and-swap to another writer. Nothing was applied. */
export class FactsConflictError extends MemoryError {
	constructor(
		readonly scope: string,
		readonly attempts: number,
	) {
		super(
			`The facts of ${scope} could not be saved: ${attempts} attempts in a row conflicted with other writers. Nothing was applied.`,
		);
	}
}

/** An import into facts that already hold versions, without overwrite. Nothing was written. */
export class FactsExistError extends MemoryError {
	constructor(
		readonly scope: string,
		readonly keys: string[],
	) {
		super(
			`The facts of ${scope} already hold ${keys.length} stored object(s) (e.g. "${keys[0]}"); import with { overwrite: true } to replace them`,
		);
	}
}
