// The objects of one conversation's versioned data: keys, document stores, and reading versions and
// heads. VersionedData (the public API) and saving (save.ts) work on these.
import { CorruptDocumentError, InvalidOptionError, UnknownBranchError } from '../errors';
import { versionedDataLayout } from './layout';
import type { VersionLayout } from './layout';
import { DocumentStore } from '../store/document-store';
import { isExpired } from '../store/retention';
import type { Versioned } from '../store/document-store';
import type { MemoryStorage } from '../store/storage';
import { counterCodec, decodeVersionRecord, headCodec } from './records';
import type { BranchHead, VersionCounter, VersionRecord } from './records';
import { compileSchema } from './schema';
import type { DataValidator } from './schema';
import { purgeIfExpired } from './retention';
import { MAIN_BRANCH } from './types';
import type { VersionedDataOptions } from './types';

export class VersionStore {
	readonly storage: MemoryStorage;
	readonly appId: string;
	readonly conversationId: string;
	readonly keyPrefix?: string;
	/** Where the versions live: versioned data's folder of the conversation, or the one given. */
	readonly layout: VersionLayout;
	protected readonly validate?: DataValidator;
	readonly maxAttempts: number;
	readonly objects: DocumentStore<unknown>;
	readonly counters: DocumentStore<VersionCounter>;
	private readonly clock: () => Date;

	constructor(options: VersionedDataOptions) {
		this.clock = options.now ?? (() => new Date());
		this.storage = options.storage;
		this.appId = options.appId;
		this.conversationId = options.conversationId;
		this.keyPrefix = options.keyPrefix;
		// Checks the IDs now.
		this.layout =
			options.layout ??
			versionedDataLayout(options.appId, options.conversationId, options.keyPrefix);
		if (options.schema !== undefined) this.validate = compileSchema(options.schema);
		const maxAttempts = options.maxAttempts ?? 12;
		if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
			throw new InvalidOptionError('maxAttempts', 'must be a positive integer');
		this.maxAttempts = maxAttempts;
		// Version objects only (readObject, create): its codec is never used. A version is written
		// once, but its number is reused after a delete or an overwriting import, so every read is
		// re-validated with storage (a conditional read) instead of trusting this process's copy.
		this.objects = new DocumentStore<unknown>(this.storage, counterCodec);
		this.counters = new DocumentStore(this.storage, counterCodec, { maxAttempts });
	}

	now(): Date {
		return this.clock();
	}

	/** `{app_id}/{conversation_id}` (or the layout's own name), as errors name it. */
	get scope(): string {
		return this.layout.scope;
	}

	/** `{prefix}versioned_data/{app_id}/{conversation_id}/` (or the layout's folder): every object of these versions. */
	get prefix(): string {
		return this.layout.prefix;
	}

	heads(branch: string): DocumentStore<BranchHead> {
		return new DocumentStore(this.storage, headCodec(branch), { maxAttempts: this.maxAttempts });
	}

	versionKey(n: number): string {
		return this.layout.versionKey(n);
	}

	branchKey(branch: string): string {
		return this.layout.branchKey(branch);
	}

	get counterKey(): string {
		return this.layout.counterKey;
	}

	async readVersion(n: number): Promise<VersionRecord | null> {
		const key = this.versionKey(n);
		const got = await this.objects.readObject(key, (bytes) => decodeVersionRecord(key, bytes, n));
		return got?.doc ?? null;
	}

	/**
	 * A branch head as readers may see it. A head past its stored Expire After is read once more after
	 * the conversation's versioned data was checked: gone (version null) when every branch had expired
	 * (it was then deleted), as stored when another branch still lives or a save came first.
	 */
	async liveHead(branch: string): Promise<Versioned<BranchHead>> {
		const key = this.branchKey(branch);
		const head = await this.heads(branch).read(key);
		if (head.version === null || !isExpired(head.doc, this.now())) return head;
		await purgeIfExpired(this, this.now());
		return await this.heads(branch).read(key);
	}

	/** The head of a branch with its stored version, or null when the branch is "main" and nothing was saved yet. */
	async headOf(branch: string): Promise<Versioned<BranchHead> | null> {
		const head = await this.liveHead(branch);
		if (head.version !== null) return head;
		if (branch === MAIN_BRANCH) return null;
		throw new UnknownBranchError(this.scope, branch);
	}

	async mustRead(n: number, referrer: string, what: string): Promise<VersionRecord> {
		const record = await this.readVersion(n);
		if (!record)
			throw new CorruptDocumentError(referrer, `${what} version ${n}, which does not exist`);
		return record;
	}

	/** Every branch with the version it is at, by name. Costs a listing of the branches and one read each. */
	async listBranches(): Promise<BranchHead[]> {
		const listed = await this.storage.list(`${this.prefix}branches/`);
		const names = listed
			.map((o) => this.layout.parse(o.key))
			.filter((p) => p?.kind === 'branch')
			.map((p) => p?.branch as string)
			.sort();
		const heads: BranchHead[] = [];
		for (let i = 0; i < names.length; i += 16) {
			const batch = await Promise.all(
				names.slice(i, i + 16).map(async (name) => {
					const { doc, version } = await this.heads(name).read(this.branchKey(name));
					return version === null ? undefined : doc; // deleted since the listing
				}),
			);
			for (const h of batch) if (h) heads.push(h);
		}
		return heads;
	}
}
