// One subject's facts document as versions (snapshots/): read the current one, and change it by
// compare-and-swap of the branch head. A change that loses its race to another writer is applied
// again to the newer document (its operations re-checked there), so concurrent writers never lose
// one; the history of versions is every change of belief, with diff and rollback.
import { sleep } from '../common/sleep';
import { FactsConflictError, VersionConflictError } from '../errors';
import { VersionedData } from '../snapshots/versioned-data';
import type { VersionRecord } from '../snapshots/records';
import type { MemoryStorage } from '../store/storage';
import { factsLayout, subjectRef } from './keys';
import type { FactsSubject, SubjectRef } from './keys';
import { emptyFacts, validateFacts } from './records';
import type { FactsDocument } from './records';

export interface FactsOptions {
	storage: MemoryStorage;
	/** The facts space: the Memory Base ID (workflows sharing a Memory Base share a user's facts). */
	space: string;
	/** Whose facts: the user, or the conversation when no User ID is set. */
	subject: FactsSubject;
	keyPrefix?: string;
	/** Expire After (days), stored with the facts and counted from their last change (0 removes it). */
	expireAfterDays?: number;
	/** Keep Last N Versions of the facts document (0 keeps every version). */
	keepLastVersions?: number;
	/** Attempts of one change against other writers before FactsConflictError (default 12). */
	maxAttempts?: number;
	now?: () => Date;
}

/** The facts as stored now: the version (null before the first change) and the document. */
export interface FactsState {
	version: number | null;
	doc: FactsDocument;
	/** When that version was saved. */
	savedAt: string | null;
}

/** A change to save: the next document and what changed, for history. */
export interface FactsChange {
	doc: FactsDocument;
	summary: string;
}

/** Validated documents by the (frozen, cached) version record they were read from. */
const validated = new WeakMap<VersionRecord, FactsDocument>();

export class FactsStore {
	readonly storage: MemoryStorage;
	readonly space: string;
	readonly subject: SubjectRef;
	readonly versions: VersionedData;
	private readonly options: FactsOptions;

	constructor(options: FactsOptions) {
		this.options = options;
		this.storage = options.storage;
		this.space = options.space;
		this.subject = subjectRef(options.subject);
		const layout = factsLayout(options.space, this.subject, options.keyPrefix);
		this.versions = new VersionedData({
			storage: options.storage,
			appId: options.space,
			conversationId: this.subject.id,
			keyPrefix: options.keyPrefix,
			maxAttempts: options.maxAttempts,
			now: options.now,
			layout,
		});
	}

	/** How errors name these facts: `{space}/user:{id}` or `{space}/conversation:{id}`. */
	get scope(): string {
		return this.versions.scope;
	}

	now(): Date {
		return this.versions.now();
	}

	/** The document of a version record, checked once per record. */
	documentOf(record: VersionRecord): FactsDocument {
		let doc = validated.get(record);
		if (!doc) {
			doc = validateFacts(this.versions.versionKey(record.version), record.data);
			validated.set(record, doc);
		}
		return doc;
	}

	/** The current facts: one conditional read of the branch head (and its version when changed). */
	async read(): Promise<FactsState> {
		const record = await this.versions.getCurrent();
		if (!record) return { version: null, doc: emptyFacts(), savedAt: null };
		return { version: record.version, doc: this.documentOf(record), savedAt: record.created_at };
	}

	/**
	 * Applies `change` to the current document and saves the result as a new version, only if the
	 * branch is still at the version read (compare-and-swap); otherwise reads again and applies
	 * `change` again to the newer document. `change` returns undefined when nothing changes (nothing
	 * is saved). FactsConflictError after `maxAttempts` lost races.
	 */
	async change(
		change: (doc: FactsDocument, state: FactsState) => FactsChange | undefined,
	): Promise<{ state: FactsState; written: boolean; attempts: number }> {
		const attempts = this.options.maxAttempts ?? 12;
		for (let attempt = 1; attempt <= attempts; attempt++) {
			const state = await this.read();
			const next = change(state.doc, state);
			if (!next) return { state, written: false, attempts: attempt };
			try {
				const record = await this.versions.saveVersion({
					data: next.doc,
					summary: next.summary,
					expectedVersion: state.version,
					expireAfterDays: this.options.expireAfterDays,
					keepLastVersions: this.options.keepLastVersions,
				});
				const doc = this.documentOf(record);
				return {
					state: { version: record.version, doc, savedAt: record.created_at },
					written: true,
					attempts: attempt,
				};
			} catch (error) {
				if (!(error instanceof VersionConflictError)) throw error;
				await sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
			}
		}
		throw new FactsConflictError(this.scope, attempts);
	}
}
