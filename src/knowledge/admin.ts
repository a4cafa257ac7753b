// The Memory Base's side of admin/ (see store/memory-admin.ts): a conversation's captures in the bases
// in scope (by default the one whose ID is the workflow's, what the Memory Base nodes use unless told
// otherwise) deleted, exported, imported and expired; a user's conversations found and forgotten in
// every base. Bases are not kept by workflow, so a workflow's own keys hold none of their objects.
import { InvalidExportError, MemoryError } from '../errors';
import { validateId, validateKeyPrefix } from '../keys/ids';
import type {
	AdminScope,
	ConversationRef,
	ExpiryReport,
	ForgetReport,
	HeldObject,
	MemoryAdmin,
} from '../store/memory-admin';
import { expiryReport } from '../store/memory-admin';
import { arrayAt, invalid, isRecord } from '../store/parse';
import { folderNames } from '../store/storage';
import type { MemoryStorage } from '../store/storage';
import { captureLogKey, MEMORY_BASE_ROOT } from './keys';
import { listMemoryBases } from './listing';
import { MemoryBase } from './memory-base';
import type { ExternalVectorStore } from '../indexes';
import type { CapturedMessage } from './records';
import { checkCapturedMessages } from './transfer';

/** One base's captures of the conversation, as exported. */
export interface ExportedCaptures {
	baseId: string;
	messages: CapturedMessage[];
}

export class KnowledgeAdmin implements MemoryAdmin<ExportedCaptures[], number> {
	/** Every base folder of the storage, listed once per pass (Forget User looks and deletes). */
	private folders?: Promise<MemoryBase[]>;

	/**
	 * `vectorStore`: where Forget User deletes the vectors of bases that keep theirs in a connected
	 * vector store (bases with an embedded index never use it).
	 */
	constructor(
		readonly storage: MemoryStorage,
		readonly keyPrefix?: string,
		readonly vectorStore?: ExternalVectorStore,
	) {}

	private base(baseId: string, vectorStore?: ExternalVectorStore): MemoryBase {
		return new MemoryBase({
			storage: this.storage,
			baseId,
			keyPrefix: this.keyPrefix,
			vectorStore,
		});
	}

	/** The bases a conversation's captures are looked for in: those named, or the workflow's own. */
	private basesOf(ref: ConversationRef): MemoryBase[] {
		const ids = ref.memoryBaseIds ?? [ref.appId];
		return [...new Set(ids.map((id) => validateId('memory_base_id', id)))].map((id) =>
			this.base(id),
		);
	}

	/** Every base with a folder, configured or not (a half-deleted base may still hold captures). */
	private everyFolder(): Promise<MemoryBase[]> {
		this.folders ??= (async () => {
			const root = `${validateKeyPrefix('key prefix', this.keyPrefix)}${MEMORY_BASE_ROOT}/`;
			return (await folderNames(this.storage, root)).map((id) => this.base(id));
		})();
		return this.folders;
	}

	/** None: a Memory Base is kept by base, not by workflow. */
	async listWorkflow(): Promise<HeldObject[]> {
		return [];
	}

	async eachInWorkflow(): Promise<void> {}

	/** The conversation's capture log in each base of the scope that has one. */
	async listConversation(ref: ConversationRef): Promise<HeldObject[]> {
		const out: HeldObject[] = [];
		for (const base of this.basesOf(ref)) {
			const key = captureLogKey(base.baseId, ref.conversationId, this.keyPrefix);
			for (const object of await this.storage.list(key))
				out.push({
					object,
					conversationId: ref.conversationId,
					...(object.key === key ? { kind: 'capture_log' } : {}),
				});
		}
		return out;
	}

	/** None: captures are not kept under a workflow's keys (Re-Encrypt of the whole storage covers them). */
	prefixes(): string[] {
		return [];
	}

	/** Forgets the conversation in every base of the scope that captured it; returns the deleted keys. */
	async deleteConversation(ref: ConversationRef): Promise<string[]> {
		const deleted: string[] = [];
		for (const base of this.basesOf(ref))
			if ((await base.captured(ref.conversationId)) > 0)
				deleted.push(...(await base.forget(ref.conversationId)).deleted);
		return deleted;
	}

	/** The conversation's captures in every base of the scope that has any. */
	async exportConversation(ref: ConversationRef): Promise<ExportedCaptures[]> {
		const out: ExportedCaptures[] = [];
		for (const base of this.basesOf(ref)) {
			const messages = await base.exportSession(ref.conversationId);
			if (messages) out.push({ baseId: base.baseId, messages: [...messages] });
		}
		return out;
	}

	/** Checks exported captures (an array of { baseId, messages }); InvalidExportError naming where. */
	parseExport(value: unknown, path: string): ExportedCaptures[] {
		if (value === undefined) return [];
		return arrayAt(value, path).map((c, i) => {
			if (!isRecord(c)) invalid(`${path}[${i}]`, 'must be an object');
			try {
				validateId('memory_base_id', c.baseId);
			} catch (error) {
				throw new InvalidExportError(`${path}[${i}].baseId`, (error as Error).message);
			}
			const messages = checkCapturedMessages(`${path}[${i}].messages`, 'session', c.messages);
			return { baseId: c.baseId as string, messages };
		});
	}

	/** Stores exported captures as the conversation's in each base they name; returns the messages stored. */
	async importConversation(
		ref: ConversationRef,
		captures: ExportedCaptures[],
		options: { overwrite?: boolean; path?: string },
	): Promise<number> {
		let n = 0;
		for (const [i, c] of captures.entries())
			n += (
				await this.base(c.baseId).importSession(ref.conversationId, c.messages, {
					overwrite: options.overwrite,
					path: `${options.path ?? 'memoryBase'}[${i}].messages`,
				})
			).messages;
		return n;
	}

	/** Nothing: captures have no age rule (Prune Expired and Forget reach them). */
	async prune(): Promise<void> {}

	/** Each conversation of each base in scope whose capture log is past its rule. */
	async expire(scope: AdminScope, options: { now: Date; dryRun?: boolean }): Promise<ExpiryReport> {
		const report: ExpiryReport = { ...expiryReport(), messages: 0 };
		const ids =
			scope.memoryBaseIds ??
			(scope.appId !== undefined
				? [scope.appId]
				: await listMemoryBases(this.storage, { keyPrefix: this.keyPrefix }));
		for (const baseId of [...new Set(ids.map((id) => validateId('memory_base_id', id)))]) {
			const base = this.base(baseId);
			for await (const page of base.sessionPages())
				for (const sessionId of page) {
					const id = `${baseId}/${sessionId}`;
					try {
						const r = await base.expire(sessionId, options);
						if (r.skipped) report.skipped.push({ id, reason: r.skipped });
						if (!r.expired) continue;
						report.ids.push(id);
						report.messages = (report.messages ?? 0) + r.messages;
						report.deleted.push(...r.deleted);
					} catch (error) {
						// A base whose vectors are in a connected vector store is refused by name, as by Forget.
						if (!(error instanceof MemoryError)) throw error;
						report.skipped.push({ id, reason: error.message });
					}
				}
		}
		return report;
	}

	/** The conversations in which any base captured this user's messages (users.ts). */
	async conversationsOfUser(userId: string): Promise<string[]> {
		const found = new Set<string>();
		for (const base of await this.everyFolder())
			for (const id of await base.conversationsOfUser(userId)) found.add(id);
		return [...found];
	}

	/**
	 * Forgets the conversations in every base that captured them; with a user, then deletes that user's
	 * partitions in every base (their manifests name the user).
	 */
	async forget(
		conversationIds: ReadonlySet<string>,
		target: { userId?: string } = {},
	): Promise<ForgetReport> {
		const deleted: string[] = [];
		const rewritten: string[] = [];
		for (const folder of await this.everyFolder()) {
			const held: string[] = [];
			for (const id of conversationIds) if ((await folder.captured(id)) > 0) held.push(id);
			for (const [n, id] of held.entries()) {
				// A store input may be another base's store: it must hold the conversation's vectors.
				const base = this.vectorStore ? this.base(folder.baseId, this.vectorStore) : folder;
				// The base-wide indexes are swept once, with the last (listing them takes seconds).
				const last = n === held.length - 1;
				const forgot = await base.forget(id, { storeMustHold: true, sweepBaseWide: last });
				deleted.push(...forgot.deleted);
				rewritten.push(...forgot.rewritten);
			}
			if (target.userId === undefined) continue;
			const gone = await folder.deleteUserPartitions(target.userId);
			deleted.push(...gone.deleted);
			rewritten.push(...gone.rewritten);
		}
		return {
			workflows: [],
			deleted,
			rewritten: [...new Set(rewritten)].filter((k) => !deleted.includes(k)),
			counts: { memoryBase: deleted.length },
		};
	}
}
