// Versioned data's side of admin/ (see store/memory-admin.ts): a conversation's write-once versions,
// branch heads and counter, listed, deleted, exported and imported, pruned, expired and forgotten over
// versioned data's own keys.
import { validateKeyPrefix } from '../keys/ids';
import { conversationName, deleteListed, expiryReport, reportExpiry } from '../store/memory-admin';
import type {
	AdminScope,
	AgePass,
	ConversationRef,
	ExpiryReport,
	ForgetReport,
	HeldObject,
	MemoryAdmin,
} from '../store/memory-admin';
import { deleteIfUnchanged } from '../store/retention';
import { forEachListed } from '../store/storage';
import type { ListedObject, MemoryStorage } from '../store/storage';
import {
	parseVersionedDataKey,
	VERSIONED_DATA_ROOT,
	versionedDataAppPrefix,
	versionedDataPrefix,
} from './keys';
import { purgeIfExpired } from './retention';
import { exportVersionedData, parseVersionedDataExport, writeVersionedData } from './transfer';
import type { VersionedDataExport } from './transfer';
import { VersionStore } from './version-store';

/** What importing a conversation's versioned data stored. */
export interface VersionedDataImport {
	versions: number;
	branches: number;
}

const isVersion = (h: HeldObject) => h.kind === 'version';

export class SnapshotsAdmin implements MemoryAdmin<VersionedDataExport, VersionedDataImport> {
	constructor(
		readonly storage: MemoryStorage,
		readonly keyPrefix?: string,
	) {}

	/** A listed object with what its key says; `kind` undefined for a key versioned data does not name. */
	private hold(o: ListedObject): HeldObject {
		const k = parseVersionedDataKey(o.key, this.keyPrefix);
		if (k) return { object: o, appId: k.appId, conversationId: k.conversationId, kind: k.kind };
		// Still the conversation's, by its folder: `versioned_data/{app}/{conversation}/…`.
		const rest = o.key.slice(validateKeyPrefix('key prefix', this.keyPrefix).length).split('/');
		return {
			object: o,
			appId: rest[1],
			conversationId: (rest[2] ?? '').replace(/\.(json|log)$/, ''),
		};
	}

	/** Every object of one app, or of every app: one listing. */
	private async listAll(appId: string | undefined): Promise<HeldObject[]> {
		return (await this.storage.list(this.prefixOf(appId))).map((o) => this.hold(o));
	}

	/** The folder of one app's versioned data, or of every app's. */
	private prefixOf(appId: string | undefined): string {
		return appId !== undefined
			? versionedDataAppPrefix(appId, this.keyPrefix)
			: `${validateKeyPrefix('key prefix', this.keyPrefix)}${VERSIONED_DATA_ROOT}/`;
	}

	listWorkflow(appId: string): Promise<HeldObject[]> {
		return this.listAll(appId);
	}

	eachInWorkflow(appId: string, visit: (h: HeldObject) => void): Promise<void> {
		return forEachListed(this.storage, this.prefixOf(appId), (o) => visit(this.hold(o)));
	}

	/** Branch heads and the counter first, then the versions they point to. */
	async listConversation(ref: ConversationRef): Promise<HeldObject[]> {
		const prefix = versionedDataPrefix(ref.appId, ref.conversationId, this.keyPrefix);
		const held = (await this.storage.list(prefix)).map((o) => this.hold(o));
		return [...held.filter((h) => !isVersion(h)), ...held.filter(isVersion)];
	}

	prefixes(where: { appId: string; conversationId?: string }): string[] {
		return [
			where.conversationId === undefined
				? versionedDataAppPrefix(where.appId, this.keyPrefix)
				: versionedDataPrefix(where.appId, where.conversationId, this.keyPrefix),
		];
	}

	async deleteConversation(ref: ConversationRef): Promise<string[]> {
		// Branch heads go first: a save still holding one then fails its compare-and-swap instead of
		// pointing at versions deleted next.
		return deleteListed(this.storage, await this.listConversation(ref), this.prefixes(ref));
	}

	exportConversation(ref: ConversationRef): Promise<VersionedDataExport> {
		return exportVersionedData(this.storage, ref.appId, ref.conversationId, {
			keyPrefix: this.keyPrefix,
		});
	}

	parseExport(value: unknown, path: string): VersionedDataExport {
		return parseVersionedDataExport(value, path);
	}

	async importConversation(
		ref: ConversationRef,
		data: VersionedDataExport,
	): Promise<VersionedDataImport> {
		await writeVersionedData(this.storage, ref.appId, ref.conversationId, data, this.keyPrefix);
		return { versions: data.versions.length, branches: data.branches.length };
	}

	/**
	 * A conversation's versioned data goes as a whole once none of it and none of what the memories
	 * before it keep of the conversation is recent; branch heads and the counter first, so a writer
	 * holding one fails its compare-and-swap instead of saving on top of versions deleted next. A write
	 * meanwhile keeps the rest.
	 */
	async prune(pass: AgePass): Promise<void> {
		const byConversation = new Map<string, HeldObject[]>();
		for (const h of await this.listAll(pass.appId)) {
			if (h.kind === undefined) continue;
			const name = conversationName(h.appId as string, h.conversationId);
			byConversation.set(name, [...(byConversation.get(name) ?? []), h]);
		}
		for (const [name, group] of byConversation) {
			const recent = group.some((h) => h.object.lastModified.getTime() >= pass.cutoff);
			if (pass.live.has(name) || recent) continue;
			const ordered = [...group.filter((h) => !isVersion(h)), ...group.filter(isVersion)];
			for (const [i, { object: o }] of ordered.entries()) {
				if (pass.dryRun || (await deleteIfUnchanged(this.storage, o.key, o.version))) {
					pass.deleted.push(o.key);
					continue;
				}
				pass.skipped.push(...ordered.slice(i).map((h) => h.object.key));
				break;
			}
		}
	}

	/** Each conversation with a branch: expired as a whole once every branch is past its rule. */
	async expire(scope: AdminScope, options: { now: Date; dryRun?: boolean }): Promise<ExpiryReport> {
		const report: ExpiryReport = expiryReport();
		const conversations = new Map<string, { appId: string; conversationId: string }>();
		for (const h of await this.listAll(scope.appId))
			if (h.kind === 'branch')
				conversations.set(conversationName(h.appId as string, h.conversationId), {
					appId: h.appId as string,
					conversationId: h.conversationId,
				});
		for (const [id, { appId, conversationId }] of conversations) {
			const vs = new VersionStore({
				storage: this.storage,
				appId,
				conversationId,
				keyPrefix: this.keyPrefix,
			});
			await reportExpiry(
				report,
				id,
				'a branch was saved to since it was judged expired',
				async () => await purgeIfExpired(vs, options.now, { dryRun: options.dryRun }),
			);
		}
		return report;
	}

	/** None: versioned data is kept by conversation, never by user. */
	async conversationsOfUser(): Promise<string[]> {
		return [];
	}

	/** The conversations found in one listing (page by page), deleted in every workflow that holds them. */
	async forget(conversationIds: ReadonlySet<string>): Promise<ForgetReport> {
		const held = new Map<string, Set<string>>();
		// Page by page: only the conversations named are kept of what every workflow holds.
		await forEachListed(this.storage, this.prefixOf(undefined), (o) => {
			const { appId, conversationId } = this.hold(o);
			if (appId === undefined || !conversationIds.has(conversationId)) return;
			if (!held.has(appId)) held.set(appId, new Set());
			held.get(appId)?.add(conversationId);
		});
		const deleted: string[] = [];
		for (const [appId, ids] of held)
			for (const conversationId of ids)
				deleted.push(...(await this.deleteConversation({ appId, conversationId })));
		return { workflows: [...held.keys()], deleted, counts: { versionedData: deleted.length } };
	}
}
