// Chat memory's passes over many conversations: Prune (documents not written for N days, with what
// goes with them) and Prune Expired (documents past their stored Expire After). Every delete names the
// version that was judged, so a document written meanwhile stays.
import { CorruptDocumentError } from '../errors';
import { headCodec } from '../store/codec';
import { DocumentStore } from '../store/document-store';
import { conversationName, expiryReport, unreadable } from '../store/memory-admin';
import type { AgePass, ExpiryReport } from '../store/memory-admin';
import { MessageLog } from '../store/message-log';
import { deleteIfUnchanged, LEFTOVER_SAFE_AGE_MS } from '../store/retention';
import type { HeadDocument } from '../store/schema';
import type { ListedObject, MemoryStorage } from '../store/storage';
import { deleteExpiredHead, isExpiredHead } from './expiry';
import { parseChatKey } from './keys';
import { listChatObjects } from './objects';

/** One Prune pass over chat memory. */
interface Pass {
	storage: MemoryStorage;
	keyPrefix?: string;
	age: AgePass;
	deletedHeads: Set<string>;
}

/** `app/conversation` of a chat key ('' for other keys). */
function conversationOf(o: ListedObject, keyPrefix?: string): string {
	const k = parseChatKey(o.key, keyPrefix);
	return k ? conversationName(k.appId, k.conversationId) : '';
}

/**
 * Deletes one listed object only if it is still the version that was judged (a conditional delete):
 * true when deleted (or, in a dry run, when it would be); false when it was written meanwhile, which
 * is recorded as skipped.
 */
async function tryDelete(pass: Pass, o: ListedObject): Promise<boolean> {
	const { storage, age } = pass;
	if (age.dryRun || (await deleteIfUnchanged(storage, o.key, o.version))) {
		age.deleted.push(o.key);
		return true;
	}
	age.skipped.push(o.key);
	return false;
}

/** Deletes old memory documents (heads); groups the sealed objects and summaries that go with them. */
async function pruneDocuments(pass: Pass, objects: ListedObject[]) {
	const sealedOf = new Map<string, ListedObject[]>();
	const summaries: ListedObject[] = [];
	for (const o of objects) {
		const parsed = parseChatKey(o.key, pass.keyPrefix);
		const conversation = conversationOf(o, pass.keyPrefix);
		if (!parsed || parsed.kind === 'file') continue;
		if (parsed.kind === 'sealed') {
			const headKey = parsed.headKey as string;
			sealedOf.set(headKey, [...(sealedOf.get(headKey) ?? []), o]);
		} else if (parsed.kind === 'summary') summaries.push(o);
		else if (o.lastModified.getTime() >= pass.age.cutoff) pass.age.live.add(conversation);
		else if (await tryDelete(pass, o)) pass.deletedHeads.add(o.key);
		else pass.age.live.add(conversation);
	}
	return { sealedOf, summaries };
}

/**
 * Whether a head is still there (not deleted by this pass) and the sealed objects it references;
 * undefined when it is unreadable (then all are kept: it is an error for its readers, never empty).
 */
async function referencedBy(
	pass: Pass,
	headKey: string,
): Promise<{ live: boolean; refs: Set<string> } | undefined> {
	if (pass.deletedHeads.has(headKey)) return { live: false, refs: new Set() };
	const store = new DocumentStore(pass.storage, headCodec());
	try {
		const { doc, version } = await store.read(headKey);
		if (version === null) return { live: false, refs: new Set() };
		return { live: true, refs: await new MessageLog(store, headKey).reachable(doc) };
	} catch (error) {
		if (!(error instanceof CorruptDocumentError)) throw error;
		return undefined;
	}
}

/** Sealed objects go with their head, or once unreferenced and older than LEFTOVER_SAFE_AGE_MS. */
async function pruneSealed(
	pass: Pass,
	sealedOf: Map<string, ListedObject[]>,
	sealedCutoff: number,
) {
	for (const [headKey, sealed] of sealedOf) {
		const conversation = conversationOf(sealed[0], pass.keyPrefix);
		const head = await referencedBy(pass, headKey);
		if (!head || head.live) pass.age.live.add(conversation);
		if (!head) {
			pass.age.skipped.push(...sealed.map((o) => o.key));
			continue;
		}
		for (const o of sealed)
			if (!head.refs.has(o.key) && o.lastModified.getTime() < sealedCutoff)
				await tryDelete(pass, o);
	}
}

/**
 * A document's summaries of older turns go with it: once the document was deleted by this pass or is
 * not there at all. They are derived from it, so a document that stays keeps them, however old.
 */
async function pruneSummaries(pass: Pass, summaries: ListedObject[], listed: Set<string>) {
	for (const o of summaries) {
		const headKey = parseChatKey(o.key, pass.keyPrefix)?.headKey as string;
		if (pass.deletedHeads.has(headKey) || !listed.has(headKey)) await tryDelete(pass, o);
	}
}

/**
 * Deletes the copied files among `objects` whose conversation (`app/conversation`) `goes`, last
 * written before `before` (ms). Each delete is re-checked: a turn that stored the
 * same bytes again meanwhile refreshed the file, and the time shows it, so it stays (skipped).
 */
async function deleteFilesOf(
	storage: MemoryStorage,
	objects: ListedObject[],
	options: {
		goes: (conversation: string) => boolean;
		before: number;
		keyPrefix?: string;
		dryRun?: boolean;
	},
): Promise<{ deleted: string[]; skipped: string[] }> {
	const out = { deleted: [] as string[], skipped: [] as string[] };
	for (const o of objects) {
		if (parseChatKey(o.key, options.keyPrefix)?.kind !== 'file') continue;
		if (!options.goes(conversationOf(o, options.keyPrefix))) continue;
		if (o.lastModified.getTime() >= options.before) continue;
		const since = new Date(options.before);
		const gone = options.dryRun || (await deleteIfUnchanged(storage, o.key, o.version, since));
		(gone ? out.deleted : out.skipped).push(o.key);
	}
	return out;
}

/**
 * Prune over chat memory: documents untouched since the cutoff go; their sealed objects and summaries
 * go with them; sealed objects no document references (left by a writer that lost its compare-and-swap
 * or was killed) go once older than LEFTOVER_SAFE_AGE_MS, and one a live document references never
 * does; a conversation's copied files go once none of its documents remain. Conversations with a
 * document that stays are marked live in the pass.
 */
export async function pruneChat(
	storage: MemoryStorage,
	keyPrefix: string | undefined,
	age: AgePass,
): Promise<void> {
	const pass: Pass = { storage, keyPrefix, age, deletedHeads: new Set() };
	// Unreferenced sealed objects younger than this may belong to a head being written right now.
	const sealedCutoff = Math.min(age.now.getTime(), Date.now()) - LEFTOVER_SAFE_AGE_MS;
	const objects = await listChatObjects(storage, age.appId, keyPrefix);
	const { sealedOf, summaries } = await pruneDocuments(pass, objects);
	await pruneSealed(pass, sealedOf, sealedCutoff);
	await pruneSummaries(pass, summaries, new Set(objects.map((o) => o.key)));
	const files = await deleteFilesOf(storage, objects, {
		goes: (conversation) => !age.live.has(conversation),
		before: age.cutoff,
		keyPrefix,
		dryRun: age.dryRun,
	});
	age.deleted.push(...files.deleted);
	age.skipped.push(...files.skipped);
}

/** `app/conversation[/node]`: how Prune Expired names a chat memory. */
function idOf(o: ListedObject, keyPrefix?: string): string {
	const k = parseChatKey(o.key, keyPrefix);
	return k?.nodeId === undefined
		? conversationOf(o, keyPrefix)
		: `${k.appId}/${k.conversationId}/${k.nodeId}`;
}

/** One chat document: deleted when expired (the keys), kept (undefined) when not, or reported. */
async function expireHead(
	store: DocumentStore<HeadDocument>,
	o: ListedObject,
	now: Date,
	dryRun: boolean,
): Promise<{ deleted?: string[]; skipped?: string }> {
	try {
		const read = await store.read(o.key);
		if (!isExpiredHead(read, now)) return {};
		if (dryRun) return { deleted: [o.key] };
		const deleted = await deleteExpiredHead(store, o.key, read);
		return deleted ? { deleted } : { skipped: 'written since it was judged expired' };
	} catch (error) {
		const reason = unreadable(error);
		if (!reason) throw error;
		return { skipped: reason };
	}
}

/**
 * Prune Expired over chat memory: each document past its stored rule goes as judged (with its sealed
 * objects and summaries); a conversation's copied files go with its last chat memory.
 */
export async function expireChat(
	storage: MemoryStorage,
	keyPrefix: string | undefined,
	appId: string | undefined,
	options: { now: Date; dryRun?: boolean },
): Promise<ExpiryReport> {
	const { now } = options;
	const report: ExpiryReport = { ...expiryReport(), files: 0 };
	const objects = await listChatObjects(storage, appId, keyPrefix);
	const store = new DocumentStore(storage, headCodec());
	const swept = new Set<string>();
	const kept = new Set<string>();
	for (const o of objects) {
		const kind = parseChatKey(o.key, keyPrefix)?.kind;
		if (kind !== 'conversation' && kind !== 'node') continue;
		const { deleted, skipped } = await expireHead(store, o, now, options.dryRun === true);
		const conversation = conversationOf(o, keyPrefix);
		if (skipped) report.skipped.push({ id: idOf(o, keyPrefix), reason: skipped });
		if (!deleted) {
			kept.add(conversation);
			continue;
		}
		swept.add(conversation);
		report.ids.push(idOf(o, keyPrefix));
		report.deleted.push(...deleted);
	}
	// Files go with the last chat memory of their conversation. Turns copy files before they are saved,
	// so files younger than a write takes are left for the next sweep.
	const files = await deleteFilesOf(storage, objects, {
		goes: (c) => swept.has(c) && !kept.has(c),
		before: Math.min(now.getTime(), Date.now()) - LEFTOVER_SAFE_AGE_MS,
		keyPrefix,
		dryRun: options.dryRun,
	});
	report.files = files.deleted.length;
	report.deleted.push(...files.deleted);
	return report;
}
