// Facts' side of admin/ (see store/memory-admin.ts). Facts are kept per space (the Memory Base ID), not
// per workflow: a conversation's own facts (those kept when no User ID was set) are looked for in the
// spaces in scope (by default the one whose ID is the workflow's), a user's in every space. Forget
// deletes a user's facts and a forgotten conversation's own, and takes what was learned in a forgotten
// conversation out of every other subject's facts, older versions included (redact.ts).
import { StorageError } from '../errors';
import { isValidId, validateId } from '../keys/ids';
import { deleteListed, expiryReport, reportExpiry } from '../store/memory-admin';
import type {
	AdminScope,
	ConversationRef,
	ExpiryReport,
	ForgetReport,
	HeldObject,
	MemoryAdmin,
} from '../store/memory-admin';
import { arrayAt, invalid, isRecord, at } from '../store/parse';
import { folderNames, forEachListed } from '../store/storage';
import type { ListedObject, MemoryStorage } from '../store/storage';
import { purgeIfExpired } from '../snapshots/retention';
import type { VersionedDataExport } from '../snapshots/transfer';
import { exportVersions } from '../snapshots/transfer';
import { factsLayout, factsPrefix, factsRoot, factsSpacePrefix, parseFactsKey } from './keys';
import type { SubjectRef } from './keys';
import { FORGETTING, forgetInFacts } from './redact';
import { FactsStore } from './store';
import { parseFactsVersions, writeFacts } from './transfer';

/** One space's facts of a conversation, as exported. */
export interface ExportedFacts {
	space: string;
	versionedData: VersionedDataExport;
}

/** One subject's folder, as a listing found it. */
interface Folder {
	space: string;
	subject: SubjectRef;
	prefix: string;
	objects: ListedObject[];
}

const conversation = (id: string): SubjectRef => ({ kind: 'conversation', id });
const isHead = (f: Folder, o: ListedObject) => o.key.startsWith(`${f.prefix}branches/`);

export class FactsAdmin implements MemoryAdmin<ExportedFacts[], number> {
	constructor(
		readonly storage: MemoryStorage,
		readonly keyPrefix?: string,
	) {}

	private store(space: string, subject: SubjectRef): FactsStore {
		const s = subject.kind === 'user' ? { userId: subject.id } : { conversationId: subject.id };
		return new FactsStore({ storage: this.storage, space, subject: s, keyPrefix: this.keyPrefix });
	}

	/** The subject folders under `prefix`, heads first in each (what refers to versions goes first). */
	private async foldersUnder(prefix: string): Promise<Folder[]> {
		const out: Folder[] = [];
		await this.eachFolder(prefix, async (f) => {
			out.push(f);
		});
		return out;
	}

	/**
	 * Visits the subject folders under `prefix` one at a time, heads first in each, from a listing read
	 * page by page: a storage of many users' facts lists millions of keys, and only one folder's are
	 * held. A listing gives a folder's keys together (in key order on S3, folder by folder on disk).
	 */
	private async eachFolder(prefix: string, visit: (f: Folder) => Promise<void>): Promise<void> {
		const done = new Set<string>();
		let open: Folder | undefined;
		const close = async () => {
			if (!open) return;
			const f = open;
			open = undefined;
			done.add(f.prefix);
			const heads = f.objects.filter((o) => isHead(f, o));
			await visit({ ...f, objects: [...heads, ...f.objects.filter((o) => !isHead(f, o))] });
		};
		await forEachListed(this.storage, prefix, async (o) => {
			const k = parseFactsKey(o.key, this.keyPrefix);
			if (!k) return;
			if (open?.prefix !== k.prefix) {
				await close();
				if (done.has(k.prefix))
					throw new StorageError(
						`The listing of ${prefix} did not give ${k.prefix} together`,
						o.key,
					);
				open = { space: k.space, subject: k.subject, prefix: k.prefix, objects: [] };
			}
			open.objects.push(o);
		});
		await close();
	}

	private spacesOf(ref: { appId: string; memoryBaseIds?: readonly string[] }): string[] {
		const ids = ref.memoryBaseIds ?? [ref.appId];
		return [...new Set(ids.map((id) => validateId('memory_base_id', id)))];
	}

	/** None: facts are kept per space, not per workflow. */
	async listWorkflow(): Promise<HeldObject[]> {
		return [];
	}

	async eachInWorkflow(): Promise<void> {}

	/** The conversation's own facts (kept without a User ID) in each space of the scope. */
	async listConversation(ref: ConversationRef): Promise<HeldObject[]> {
		const out: HeldObject[] = [];
		for (const space of this.spacesOf(ref))
			for (const f of await this.foldersUnder(
				factsPrefix(space, conversation(ref.conversationId), this.keyPrefix),
			))
				for (const object of f.objects)
					out.push({ object, conversationId: ref.conversationId, kind: 'facts' });
		return out;
	}

	/** The conversation's own facts in the workflow's space, or the whole space. */
	prefixes(where: { appId: string; conversationId?: string }): string[] {
		return [
			where.conversationId === undefined
				? factsSpacePrefix(where.appId, this.keyPrefix)
				: factsPrefix(where.appId, conversation(where.conversationId), this.keyPrefix),
		];
	}

	/** Deletes the conversation's own facts in the spaces in scope (a user's facts stay: see forget). */
	async deleteConversation(ref: ConversationRef): Promise<string[]> {
		const deleted: string[] = [];
		for (const space of this.spacesOf(ref)) {
			const prefix = factsPrefix(space, conversation(ref.conversationId), this.keyPrefix);
			const held = await this.listConversation({ ...ref, memoryBaseIds: [space] });
			deleted.push(...(await deleteListed(this.storage, held, [prefix])));
		}
		return deleted;
	}

	async exportConversation(ref: ConversationRef): Promise<ExportedFacts[]> {
		const out: ExportedFacts[] = [];
		for (const space of this.spacesOf(ref)) {
			const layout = factsLayout(space, conversation(ref.conversationId), this.keyPrefix);
			const versionedData = await exportVersions(this.storage, layout);
			if (versionedData.versions.length > 0) out.push({ space, versionedData });
		}
		return out;
	}

	/** Checks exported facts (an array of { space, versionedData }); InvalidExportError naming where. */
	parseExport(value: unknown, path: string): ExportedFacts[] {
		if (value === undefined) return [];
		return arrayAt(value, path).map((entry, i) => {
			if (!isRecord(entry)) invalid(`${path}[${i}]`, 'must be an object');
			const space = at(`${path}[${i}].space`, () => validateId('facts_space', entry.space));
			const versionedData = parseFactsVersions(entry.versionedData, `${path}[${i}].versionedData`);
			return { space, versionedData };
		});
	}

	/** Stores exported facts as the conversation's own in each space; returns the versions stored. */
	async importConversation(
		ref: ConversationRef,
		facts: ExportedFacts[],
		options: { overwrite?: boolean },
	): Promise<number> {
		let n = 0;
		for (const f of facts) {
			const target = {
				storage: this.storage,
				space: f.space,
				subject: { conversationId: ref.conversationId },
				keyPrefix: this.keyPrefix,
			};
			await writeFacts(target, f.versionedData, options);
			n += f.versionedData.versions.length;
		}
		return n;
	}

	/** Nothing: facts have no age rule of their own (Expire After, Prune Expired and Forget reach them). */
	async prune(): Promise<void> {}

	/** Each subject of each space in scope whose facts are past their Expire After. */
	async expire(scope: AdminScope, options: { now: Date; dryRun?: boolean }): Promise<ExpiryReport> {
		const report: ExpiryReport = expiryReport();
		const spaces = scope.memoryBaseIds ?? (scope.appId !== undefined ? [scope.appId] : undefined);
		const prefixes = spaces
			? spaces.map((s) => factsSpacePrefix(s, this.keyPrefix))
			: [factsRoot(this.keyPrefix)];
		for (const prefix of prefixes)
			await this.eachFolder(prefix, (f) => this.expireFolder(f, report, options));
		return report;
	}

	private async expireFolder(
		f: Folder,
		report: ExpiryReport,
		options: { now: Date; dryRun?: boolean },
	): Promise<void> {
		if (!f.objects.some((o) => isHead(f, o))) return;
		const id = `${f.space}/${f.subject.kind}:${f.subject.id}`;
		await reportExpiry(report, id, 'the facts changed since they were judged expired', () =>
			purgeIfExpired(this.store(f.space, f.subject).versions, options.now, {
				dryRun: options.dryRun,
			}),
		);
	}

	/** The conversations a user's facts were learned in (their read positions), in every space. */
	async conversationsOfUser(userId: string): Promise<string[]> {
		const found = new Set<string>();
		const user: SubjectRef = { kind: 'user', id: validateId('user_id', userId) };
		// The user's folder in each space (the spaces: one listing of folder names), not every folder.
		const spaces = (await folderNames(this.storage, factsRoot(this.keyPrefix))).filter(isValidId);
		for (const space of spaces)
			for (const f of await this.foldersUnder(factsPrefix(space, user, this.keyPrefix))) {
				const { doc } = await this.store(f.space, f.subject).read();
				for (const c of doc.cursors) found.add(c.conversation_id);
			}
		return [...found];
	}

	/**
	 * Deletes the user's facts and the forgotten conversations' own in every space, and takes what was
	 * learned in those conversations out of every other subject's facts, older versions included.
	 */
	async forget(
		conversationIds: ReadonlySet<string>,
		target: { userId?: string } = {},
	): Promise<ForgetReport> {
		const deleted: string[] = [];
		const rewritten: string[] = [];
		await this.eachFolder(factsRoot(this.keyPrefix), async (f) => {
			const whole =
				(f.subject.kind === 'user' && f.subject.id === target.userId) ||
				(f.subject.kind === 'conversation' && conversationIds.has(f.subject.id));
			if (whole) {
				const held = f.objects.map((object) => ({ object, conversationId: f.subject.id }));
				deleted.push(...(await deleteListed(this.storage, held, [f.prefix])));
				return;
			}
			const pending = f.objects.some((o) => o.key === `${f.prefix}${FORGETTING}`);
			if (conversationIds.size === 0 && !pending) return;
			const store = this.store(f.space, f.subject);
			rewritten.push(...(await forgetInFacts(store, conversationIds, { pending })));
		});
		return { workflows: [], deleted, rewritten, counts: { facts: deleted.length } };
	}
}
