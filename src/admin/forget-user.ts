// Forget User: everything stored about one user, or one conversation, in every workflow and every
// Memory Base of a storage: chat documents (every node's too), copied files, versioned data, facts
// (the user's, the conversation's own, and what was learned in a forgotten conversation, from every
// other subject's facts and their older versions), captured messages and their index entries. The
// user's conversations are found through the Memory Bases, where captures carry user IDs, and through
// the user's facts, which name the conversations they were learned in; chat memory is keyed by
// conversation only.
import { InvalidInputError } from '../errors';
import { validateId, validateKeyPrefix } from '../keys/ids';
import type { ExternalVectorStore } from '../knowledge/types';
import type { ForgottenKind } from '../store/memory-admin';
import type { MemoryStorage } from '../store/storage';
import { memoriesOf } from './memories';

export interface ForgetUserTarget {
	/** Every conversation in which this user's messages were captured into a Memory Base. */
	userId?: string;
	/** One conversation, in every workflow and base. */
	conversationId?: string;
}

export interface ForgetUserResult {
	userId: string | null;
	/** The conversations forgotten, by ID. */
	conversationIds: string[];
	/** Workflows that held any of them. */
	workflows: number;
	/** Deleted objects by kind (chat documents and their segments, files, versioned data, facts, captures). */
	counts: {
		chatMemory: number;
		files: number;
		versionedData: number;
		facts: number;
		memoryBase: number;
	};
	deleted: string[];
	/**
	 * Objects written anew without the user's data: the Memory Bases' index manifests, the index
	 * segments that replace deleted ones (they hold other users' chunks), and other subjects' facts
	 * without what was learned in a forgotten conversation (their branch head, counter, a new version
	 * and each older version that held any of it).
	 */
	rewritten: string[];
}

/**
 * Deletes everything of a user (or of one conversation) from the storage. Chat memory, files and
 * versioned data go first, in every workflow; the Memory Base captures, through which a user's
 * conversations are found, go last. So a run that stops midway leaves the rest findable, and running
 * it again finishes the work (and then reports nothing left).
 */
export async function forgetUser(
	storage: MemoryStorage,
	target: ForgetUserTarget,
	options: { keyPrefix?: string; vectorStore?: ExternalVectorStore } = {},
): Promise<ForgetUserResult> {
	const prefix = validateKeyPrefix('key prefix', options.keyPrefix);
	const userId = target.userId === undefined ? undefined : validateId('user_id', target.userId);
	const conversationId =
		target.conversationId === undefined
			? undefined
			: validateId('conversation_id', target.conversationId);
	if (!userId && !conversationId)
		throw new InvalidInputError('userId', 'name a user or a conversation to forget');
	const memories = memoriesOf(storage, prefix, options.vectorStore).all;
	const conversations = new Set<string>();
	if (userId)
		for (const m of memories)
			for (const id of await m.conversationsOfUser(userId)) conversations.add(id);
	if (conversationId) conversations.add(conversationId);
	const workflows = new Set<string>();
	const deleted: string[] = [];
	const rewritten: string[] = [];
	const counts: ForgetUserResult['counts'] = {
		chatMemory: 0,
		files: 0,
		versionedData: 0,
		facts: 0,
		memoryBase: 0,
	};
	// In the memories' order: facts and the Memory Base's captures are what finds the user's
	// conversations, so they go last.
	for (const m of memories) {
		const report = await m.forget(conversations, { userId });
		for (const w of report.workflows) workflows.add(w);
		deleted.push(...report.deleted);
		rewritten.push(...(report.rewritten ?? []));
		for (const kind of Object.keys(counts) as ForgottenKind[])
			counts[kind] += report.counts[kind] ?? 0;
	}
	return {
		userId: userId ?? null,
		conversationIds: [...conversations].sort(),
		workflows: workflows.size,
		counts,
		deleted,
		rewritten: [...new Set(rewritten)].filter((k) => !deleted.includes(k)),
	};
}
