// One user in a base, for Forget User: the conversations that hold their messages, found in their own
// partition (a read of one partition, whatever the base holds), and their partitions removed once
// those conversations were forgotten (a partition's manifests name its owner: nothing of the user may
// stay). A base in an older layout, or a partition that is gone or damaged, is searched the long way:
// every conversation's log.
import { forEachListed } from '../store/storage';
import { sessionPages, sessionUsers } from './capture-log';
import { BaseIndexes } from './base-indexes';
import type { BaseParts } from './parts';
import { userPart } from './partitions';
import { register, registered } from './registry';
import { inBatches } from './types';

/**
 * The conversations whose messages the user's partition holds or lists as open: every captured
 * message of a user is in the partition's manifest or in an open log it lists (log-folding.ts).
 * Undefined when the partition cannot say (older layout, gone although made, segments lost).
 */
async function fromPartition(p: BaseParts, userId: string): Promise<string[] | undefined> {
	const indexes = await BaseIndexes.open(p);
	if (indexes.kind !== 'partitioned') return undefined;
	const part = userPart(userId);
	const words = await indexes.lexicalPart(part).loadAll();
	if (words.manifest.version === null)
		return (await registered(p, 'lexical', part)) ? undefined : [];
	if (words.missing.length > 0) return undefined;
	const vectors = await indexes.vectorPart(part).readManifest();
	const found = new Set<string>();
	for (const seg of words.loaded) for (const d of seg.docs) found.add(d.session_id);
	for (const o of words.manifest.doc.open ?? []) found.add(o.session_id);
	for (const r of vectors.version === null ? [] : vectors.doc.segments)
		for (const s of r.sessions) found.add(s);
	return [...found].sort();
}

/** The conversations in which the base captured this user's messages. */
export async function conversationsOfUser(p: BaseParts, userId: string): Promise<string[]> {
	const known = await fromPartition(p, userId);
	if (known) return known;
	const out: string[] = [];
	for await (const page of sessionPages(p)) {
		const users = await inBatches(page, (s) => sessionUsers(p, s));
		out.push(...page.filter((_, i) => users[i].includes(userId)));
	}
	return out.sort();
}

/**
 * Deletes the user's partitions (their word and vector index, emptied by forgetting the user's
 * conversations first) and takes them out of the registry; returns the keys deleted and rewritten.
 */
export async function deleteUserPartitions(
	p: BaseParts,
	userId: string,
): Promise<{ deleted: string[]; rewritten: string[] }> {
	const indexes = await BaseIndexes.open(p);
	if (indexes.kind === 'single') return { deleted: [], rewritten: [] };
	const part = userPart(userId);
	const deleted: string[] = [];
	for (const index of [indexes.lexicalPart(part), indexes.vectorPart(part)]) {
		const folder = index.manifestKey.slice(0, -'manifest.json'.length);
		const held = new Set<string>();
		await forEachListed(p.storage, folder, (o) => {
			held.add(o.key);
		});
		if (held.size === 0) continue;
		await index.clear((key) => {
			if (held.has(key)) deleted.push(key);
		});
	}
	const rewritten = [
		...(await register(p, 'lexical', [part], true)),
		...(await register(p, 'vector', [part], true)),
	];
	return { deleted, rewritten: [...new Set(rewritten)] };
}
