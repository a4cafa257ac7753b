// Prune Expired: every memory past the Expire After stored with it, in one workflow or all, deleted as
// judged. Chat documents (with their sealed objects, summaries and, once a conversation keeps none,
// its copied files), versioned data (as a whole, once every branch expired), facts (a subject's
// document as a whole, past the Expire After stored with it) and Memory Base captures
// (with their vectors and lexical entries). Each kind's own expiry check does the deleting, so the
// sweep and a reader that touches an expired memory delete it the same way.
import { validateId } from '../keys/ids';
import type { ExpiryReport } from '../store/memory-admin';
import type { MemoryStorage } from '../store/storage';
import type { ScopeOptions } from './housekeeping';
import { memoriesOf } from './memories';

export interface PruneExpiredOptions extends ScopeOptions {
	/** Only this app (n8n workflow); every app when omitted. */
	appId?: string;
	/**
	 * Memory Bases whose captures (and facts spaces whose facts) to sweep. Default: with `appId`, the
	 * base whose ID is the app's (what the nodes use unless told otherwise); without, every base.
	 */
	memoryBaseIds?: string[];
	/** The clock (default: now). */
	now?: Date;
	/** Report what is expired, delete nothing. */
	dryRun?: boolean;
}

/** What was expired, by kind: how many, and which (IDs as `app/conversation[/node]`, `base/session`). */
export interface ExpiredKind {
	count: number;
	ids: string[];
}

export interface PruneExpiredResult {
	chatMemory: ExpiredKind;
	versionedData: ExpiredKind;
	/** Facts documents, by `space/user:id` or `space/conversation:id`. */
	facts: ExpiredKind;
	captures: ExpiredKind & { messages: number };
	/** Copied files of conversations that keep no chat memory any more. */
	files: number;
	/** Every key deleted (or, in a dry run, that would be). */
	deleted: string[];
	/** Expired, but kept: written since it was judged, unreadable, or busy; with the reason. */
	skipped: { id: string; reason: string }[];
}

/**
 * Deletes every memory past the Expire After stored with it (see the module comment): in one app or
 * in all, chat memory, versioned data, facts and Memory Base captures. Every object is judged as read
 * and deleted only as judged (a conditional delete), so a memory written after the sweep listed it
 * stays (reported as skipped); an unreadable one is kept and reported, never deleted.
 */
export async function pruneExpired(
	storage: MemoryStorage,
	options: PruneExpiredOptions = {},
): Promise<PruneExpiredResult> {
	if (options.appId !== undefined) validateId('app_id', options.appId);
	const now = options.now ?? new Date();
	const scope = { appId: options.appId, memoryBaseIds: options.memoryBaseIds };
	const reports: ExpiryReport[] = [];
	for (const m of memoriesOf(storage, options.keyPrefix).all)
		reports.push(await m.expire(scope, { now, dryRun: options.dryRun }));
	// In the memories' order: chat memory, versioned data, facts, Memory Base captures.
	const [chat, data, facts, captures] = reports;
	const kind = (r: ExpiryReport): ExpiredKind => ({ count: r.ids.length, ids: [...r.ids].sort() });
	return {
		chatMemory: kind(chat),
		versionedData: kind(data),
		facts: kind(facts),
		captures: { ...kind(captures), messages: captures.messages ?? 0 },
		files: chat.files ?? 0,
		deleted: reports.flatMap((r) => r.deleted),
		skipped: reports.flatMap((r) => r.skipped),
	};
}
