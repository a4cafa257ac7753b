// Chat memory's side of admin/ (see store/memory-admin.ts): a conversation's documents (its shared
// one and each node's), their sealed objects and summaries, and its copied files, listed, deleted,
// exported and imported, pruned, expired and forgotten over chat memory's own keys.
import { InvalidExportError, NoMemoryStoredError } from '../errors';
import { validateKeyPrefix } from '../keys/ids';
import { deleteListed } from '../store/memory-admin';
import type {
	AdminScope,
	AgePass,
	ConversationRef,
	ExpiryReport,
	ForgetReport,
	HeldObject,
	MemoryAdmin,
} from '../store/memory-admin';
import { at, invalid } from '../store/parse';
import type { MemoryStorage } from '../store/storage';
import { expireChat, pruneChat } from './housekeeping';
import { chatAppPrefixes, FILES_ROOT } from './keys';
import {
	exportConversationMemory,
	importConversationMemory,
	parseConversationMemoryExport,
} from './memory-transfer';
import type { ConversationMemoryExport, ImportResult } from './memory-transfer';
import {
	chatConversationPrefixes,
	holdChat,
	listChatConversation,
	eachChatObject,
	listChatObjects,
} from './objects';

/** A conversation's chat memory in a whole-conversation export: null when it has none. */
export type ChatExport = ConversationMemoryExport | null;

export class HistoryAdmin implements MemoryAdmin<ChatExport, ImportResult | null> {
	constructor(
		readonly storage: MemoryStorage,
		readonly keyPrefix?: string,
	) {}

	async listWorkflow(appId: string): Promise<HeldObject[]> {
		const objects = await listChatObjects(this.storage, appId, this.keyPrefix);
		return objects.map((o) => holdChat(o, this.keyPrefix));
	}

	async eachInWorkflow(appId: string, visit: (h: HeldObject) => void): Promise<void> {
		await eachChatObject(
			this.storage,
			appId,
			(o) => visit(holdChat(o, this.keyPrefix)),
			this.keyPrefix,
		);
	}

	listConversation(ref: ConversationRef): Promise<HeldObject[]> {
		return listChatConversation(this.storage, ref.appId, ref.conversationId, this.keyPrefix);
	}

	prefixes(where: { appId: string; conversationId?: string }): string[] {
		return where.conversationId === undefined
			? chatAppPrefixes(where.appId, this.keyPrefix)
			: chatConversationPrefixes(where.appId, where.conversationId, this.keyPrefix);
	}

	async deleteConversation(ref: ConversationRef): Promise<string[]> {
		// Documents go first (listConversation lists them first): a writer still holding one then fails
		// its compare-and-swap instead of referencing the sealed objects deleted next.
		return deleteListed(this.storage, await this.listConversation(ref), this.prefixes(ref));
	}

	async exportConversation(ref: ConversationRef): Promise<ChatExport> {
		try {
			return await exportConversationMemory(this.storage, ref.appId, ref.conversationId, {
				keyPrefix: this.keyPrefix,
			});
		} catch (error) {
			if (error instanceof NoMemoryStoredError) return null;
			throw error;
		}
	}

	parseExport(value: unknown, path: string): ChatExport {
		if (value === null) return null;
		return at(path, () => {
			try {
				return parseConversationMemoryExport(value);
			} catch (error) {
				if (error instanceof InvalidExportError)
					invalid(error.path === '' ? path : `${path}.${error.path}`, error.reason);
				throw error;
			}
		});
	}

	async importConversation(ref: ConversationRef, data: ChatExport): Promise<ImportResult | null> {
		if (!data) return null;
		return importConversationMemory(this.storage, ref.appId, data, {
			keyPrefix: this.keyPrefix,
			conversationId: ref.conversationId,
		});
	}

	prune(pass: AgePass): Promise<void> {
		return pruneChat(this.storage, this.keyPrefix, pass);
	}

	expire(scope: AdminScope, options: { now: Date; dryRun?: boolean }): Promise<ExpiryReport> {
		return expireChat(this.storage, this.keyPrefix, scope.appId, options);
	}

	/** None: chat memory is kept by conversation, never by user. */
	async conversationsOfUser(): Promise<string[]> {
		return [];
	}

	/** The conversations found in one listing of each root (page by page), deleted in every workflow that holds them. */
	async forget(conversationIds: ReadonlySet<string>): Promise<ForgetReport> {
		const held = new Map<string, Set<string>>();
		await eachChatObject(
			this.storage,
			undefined,
			(o) => {
				const { appId, conversationId } = holdChat(o, this.keyPrefix);
				if (appId === undefined || !conversationIds.has(conversationId)) return;
				if (!held.has(appId)) held.set(appId, new Set());
				held.get(appId)?.add(conversationId);
			},
			this.keyPrefix,
		);
		const deleted: string[] = [];
		for (const [appId, ids] of held)
			for (const conversationId of ids)
				deleted.push(...(await this.deleteConversation({ appId, conversationId })));
		const filesRoot = `${validateKeyPrefix('key prefix', this.keyPrefix)}${FILES_ROOT}/`;
		const files = deleted.filter((key) => key.startsWith(filesRoot)).length;
		return {
			workflows: [...held.keys()],
			deleted,
			counts: { chatMemory: deleted.length - files, files },
		};
	}
}
