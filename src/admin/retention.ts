// Prune Expired: every memory past the Expire After stored with it, in one workflow or all, deleted as
// judged. Chat documents (with their sealed objects, summaries and, once a conversation keeps none,
// its copied files), versioned data (as a whole, once every branch expired), facts (a subject's
// document as a whole, past the Expire After stored with it) and Memory Base captures
// (with their vectors and lexical entries). Each kind's own expiry check does the deleting, so the
// sweep and a reader that touches an expired memory delete it the same way.
import { validateId } from '../keys/ids';
import { byText, FirstListed } from '../common/first-of';
import { bySkipped, REPORT_LISTED } from '../store/memory-admin';
import type { ExpiryReport, Skipped } from '../store/memory-admin';
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

/**
 * What was expired, by kind: how many, and which (IDs as `app/conversation[/node]`, `base/session`):
 * the first REPORT_LISTED, in order.
 */
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
	/** The keys deleted (or, in a dry run, that would be): the first REPORT_LISTED, in order. */
	deleted: string[];
	/** How many keys were deleted. */
	deletedCount: number;
	/** Expired, but kept: written since it was judged, unreadable, or busy; with the reason (the first REPORT_LISTED by ID). */
	skipped: Skipped[];
	/** How many were kept. */
	skippedCount: number;
}

/** The first REPORT_LISTED of the memories' lists together, in their order, and how many in all. */
function together<T>(lists: ReadonlyArray<FirstListed<T>>, order: (a: T, b: T) => number) {
	const all = new FirstListed<T>(REPORT_LISTED, order);
	for (const list of lists) all.push(...list.sorted());
	return { items: all.sorted(), count: lists.reduce((n, l) => n + l.count, 0) };
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
	const kind = (r: ExpiryReport): ExpiredKind => ({ count: r.ids.count, ids: r.ids.sorted() });
	const deleted = together(
		reports.map((r) => r.deleted),
		byText,
	);
	const skipped = together(
		reports.map((r) => r.skipped),
		bySkipped,
	);
	return {
		chatMemory: kind(chat),
		versionedData: kind(data),
		facts: kind(facts),
		captures: { ...kind(captures), messages: captures.messages ?? 0 },
		files: chat.files ?? 0,
		deleted: deleted.items,
		deletedCount: deleted.count,
		skipped: skipped.items,
		skippedCount: skipped.count,
	};
}
