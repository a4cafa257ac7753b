// What admin/ asks of each memory. Chat history (history/admin.ts), versioned data
// (snapshots/admin.ts), facts (facts/admin.ts) and the Memory Base (knowledge/admin.ts) each implement MemoryAdmin over their
// own keys, so admin/ loops over the memories instead of sorting storage keys by root. One instance
// serves one pass: it is built over a storage and a key prefix, and keeps nothing between passes.
import { byText, FirstListed } from '../common/first-of';
import { CorruptDocumentError, EncryptionKeyError } from '../errors';
import { forgetCachedUnder } from './document-store';
import type { ListedObject, MemoryStorage } from './storage';

/** One conversation of one workflow. */
export interface ConversationRef {
	appId: string;
	conversationId: string;
	/**
	 * The Memory Base only: the bases whose captures of the conversation count. Default: the base whose
	 * ID is the workflow's (what the Memory Base nodes use unless told otherwise). Captures are kept per
	 * base, not per workflow, so a look at what the workflow's own keys hold names none (`[]`).
	 */
	memoryBaseIds?: readonly string[];
}

/** Where a pass over many conversations works. */
export interface AdminScope {
	/** One workflow; every workflow when omitted. */
	appId?: string;
	/** The Memory Base only: these bases; by default the workflow's own with `appId`, every base without. */
	memoryBaseIds?: readonly string[];
}

/** A listed object, with what its memory reads in its key. */
export interface HeldObject {
	object: ListedObject;
	/** The workflow its key names (none for a Memory Base's objects: bases are not per workflow). */
	appId?: string;
	/** The conversation its key names. */
	conversationId: string;
	/**
	 * What it is, in its memory's words (chat memory: `conversation`, `node`, `sealed`, `summary`, `file`;
	 * versioned data: `branch`, `version_counter`, `version`; facts: `facts`; Memory Base:
	 * `capture_log`). Undefined for an object in the memory's folders that it does not name.
	 */
	kind?: string;
	/** Chat memory: the node whose memory it belongs to. */
	nodeId?: string;
}

/**
 * One pass of Prune (memory not written for N days), shared by the memories in turn: a memory that
 * keeps something of a conversation marks it live, and the memories after it keep their part too.
 */
export interface AgePass {
	appId?: string;
	/** The pass's clock. */
	now: Date;
	/** Memory last written before this (ms since the epoch) is old. */
	cutoff: number;
	dryRun: boolean;
	/** Conversations (see conversationName) with something recent or kept. */
	live: Set<string>;
	deleted: string[];
	skipped: string[];
}

/**
 * What a Prune Expired result names one by one, at most, of each list (by ID or key); the rest are
 * counted: a storage's sweep may delete millions of keys.
 */
export const REPORT_LISTED = 1000;

/** A memory Prune Expired kept, and why. */
export interface Skipped {
	id: string;
	reason: string;
}

/** What Prune Expired found in one memory: each list counted, its first REPORT_LISTED kept. */
export interface ExpiryReport {
	/** What expired, by ID (`app/conversation[/node]`, `base/session`). */
	ids: FirstListed<string>;
	/** Every key deleted (or, in a dry run, that would be). */
	deleted: FirstListed<string>;
	/** Expired, but kept: written since it was judged, unreadable, or busy; with the reason. */
	skipped: FirstListed<Skipped>;
	/** Chat memory: copied files that went with the last memory of their conversation. */
	files?: number;
	/** The Memory Base: captured messages deleted. */
	messages?: number;
}

/** Skipped memories in the order a report lists them: by ID. */
export const bySkipped = (a: Skipped, b: Skipped) => byText(a.id, b.id);

/** An empty Prune Expired report of one memory. */
export function expiryReport(): ExpiryReport {
	return {
		ids: new FirstListed(REPORT_LISTED, byText),
		deleted: new FirstListed(REPORT_LISTED, byText),
		skipped: new FirstListed(REPORT_LISTED, bySkipped),
	};
}

/** What Forget User reports deleted objects as. */
export type ForgottenKind = 'chatMemory' | 'files' | 'versionedData' | 'facts' | 'memoryBase';

/** What one memory deleted of the conversations Forget User named. */
export interface ForgetReport {
	/** The workflows that held any of them. */
	workflows: string[];
	deleted: string[];
	/** Objects written anew without the forgotten data (index manifests and segments). */
	rewritten?: string[];
	counts: Partial<Record<ForgottenKind, number>>;
}

/**
 * What admin/ does with one memory. `Export` is the memory's part of a whole-conversation export,
 * `Imported` what storing that part reports.
 */
export interface MemoryAdmin<Export = unknown, Imported = unknown> {
	/** Every object of one workflow (one listing of each of the memory's folders of it). */
	listWorkflow(appId: string): Promise<HeldObject[]>;
	/** The same, visited a page of the listing at a time (a workflow of many conversations lists many keys). */
	eachInWorkflow(appId: string, visit: (h: HeldObject) => void): Promise<void>;
	/** One conversation's objects, in the order they are deleted: what refers to others first. */
	listConversation(ref: ConversationRef): Promise<HeldObject[]>;
	/**
	 * The key prefixes a workflow's objects (or, with `conversationId`, one conversation's) live under:
	 * what Re-Encrypt rewrites, a sweep clears of temporary copies, and caches drop.
	 */
	prefixes(where: { appId: string; conversationId?: string }): string[];
	/** Deletes a conversation's objects (and temporary copies of them); returns the keys. */
	deleteConversation(ref: ConversationRef): Promise<string[]>;
	exportConversation(ref: ConversationRef): Promise<Export>;
	/** Checks an exported part before anything is written: InvalidExportError naming where under `path`. */
	parseExport(value: unknown, path: string): Export;
	/**
	 * Stores a checked part into a conversation that holds none of it (`overwrite`: or replaces what it
	 * holds); `path` is where the part sits in the export, for errors.
	 */
	importConversation(
		ref: ConversationRef,
		data: Export,
		options: { overwrite?: boolean; path?: string },
	): Promise<Imported>;
	/** Prune: deletes what was not written since `pass.cutoff`, as judged (conditional deletes). */
	prune(pass: AgePass): Promise<void>;
	/** Prune Expired: deletes what is past the Expire After stored with it, as judged. */
	expire(scope: AdminScope, options: { now: Date; dryRun?: boolean }): Promise<ExpiryReport>;
	/** The conversations in which this memory kept a user's messages (none where it keeps no users). */
	conversationsOfUser(userId: string): Promise<string[]>;
	/**
	 * Deletes these conversations wherever it keeps them: in every workflow, in every base; with
	 * `target.userId`, also what it keeps of that user by user (facts).
	 */
	forget(conversationIds: ReadonlySet<string>, target?: { userId?: string }): Promise<ForgetReport>;
}

/** `app/conversation`: how passes name a conversation (IDs never hold "/"). */
export function conversationName(appId: string, conversationId: string): string {
	return `${appId}/${conversationId}`;
}

/** Why an object cannot be judged (kept and reported by a sweep, never deleted), or undefined. */
export function unreadable(error: unknown): string | undefined {
	return error instanceof CorruptDocumentError || error instanceof EncryptionKeyError
		? error.message
		: undefined;
}

/** One expiry judgement of a sweep (e.g. snapshots/retention.ts's purgeIfExpired). */
export interface Purged {
	/** It was past its rule. */
	expired: boolean;
	/** The keys deleted. */
	deleted: string[];
	/** The keys kept because they were written after they were judged. */
	skipped: string[];
}

/**
 * Adds one expiry judgement to a Prune Expired report: its deleted keys, and its ID as expired, or
 * skipped with `changed` when a write won the race, or with the reason when it is unreadable.
 */
export async function reportExpiry(
	report: ExpiryReport,
	id: string,
	changed: string,
	purge: () => Promise<Purged>,
): Promise<void> {
	try {
		const purged = await purge();
		if (!purged.expired) return;
		report.deleted.push(...purged.deleted);
		if (purged.skipped.length > 0) report.skipped.push({ id, reason: changed });
		else report.ids.push(id);
	} catch (error) {
		const reason = unreadable(error);
		if (!reason) throw error;
		report.skipped.push({ id, reason });
	}
}

/**
 * Deletes a conversation's listed objects in their order, drops this process's cached copies under
 * its prefixes, then removes temporary copies a killed writer left there (they hold its text too).
 * Returns the keys deleted, the listed ones first.
 */
export async function deleteListed(
	storage: MemoryStorage,
	objects: readonly HeldObject[],
	prefixes: readonly string[],
): Promise<string[]> {
	for (const o of objects) await storage.delete(o.object.key);
	for (const prefix of prefixes) forgetCachedUnder(storage, prefix);
	const leftovers: string[] = [];
	for (const prefix of prefixes) leftovers.push(...((await storage.sweep?.(prefix, 0)) ?? []));
	return [...objects.map((o) => o.object.key), ...leftovers];
}
