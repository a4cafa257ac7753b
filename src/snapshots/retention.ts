// Versioned data's retention, stored on the branch heads (store/retention.ts has the shared rule):
// - Expire After: the conversation's versioned data goes as a whole once every branch is past its
//   rule (a branch without one keeps everything); until then each branch reads as it is.
// - Keep Last N Versions: a save deletes its branch's versions older than the newest N, except those
//   another branch still reaches; the head says where its history was cut (`truncated_before`).
import { forgetCachedUnder } from '../store/document-store';
import type { Versioned } from '../store/document-store';
import { deleteIfUnchanged, isExpired, ruleOnWrite } from '../store/retention';
import type { ListedObject } from '../store/storage';
import type { BranchHead, VersionRecord } from './records';
import type { VersionStore } from './version-store';

/** The retention settings of one save (undefined keeps what the head stores, 0 removes it). */
export interface SaveRules {
	expireAfterDays?: number;
	keepLast?: number;
}

/**
 * The versions of a branch's history from `from` down, newest first, at most `limit`: following parent
 * pointers, stopping at the first version, below `cut` (deleted by an earlier cut), or at a version that
 * is not stored (a cut that was recorded but not finished deleting).
 */
export async function chainFrom(
	vs: VersionStore,
	from: number | null,
	limit: number,
	cut = 0,
): Promise<VersionRecord[]> {
	const out: VersionRecord[] = [];
	for (let n = from; n !== null && n >= cut && out.length < limit;) {
		const record = await vs.readVersion(n);
		if (!record) break;
		out.push(record);
		n = record.parent;
	}
	return out;
}

/**
 * The head a save writes for `record`: the rules it sets (or the stored ones), and, with Keep Last N,
 * where the branch's history is now cut: its N newest versions are walked (one conditional read each,
 * of objects this process mostly holds decoded already).
 */
export async function headAfterSave(
	vs: VersionStore,
	branch: string,
	prev: BranchHead | null,
	record: VersionRecord,
	rules: SaveRules,
	updatedAt: string,
): Promise<BranchHead> {
	const head: BranchHead = { branch, version: record.version, updated_at: updatedAt };
	const days = ruleOnWrite(prev ?? {}, rules.expireAfterDays);
	// The same rule for the number kept: none given keeps the stored one, 0 removes it.
	const keep = rules.keepLast === undefined ? prev?.keep_last : rules.keepLast || undefined;
	if (days !== undefined) head.expire_after_days = days;
	let cut = prev?.truncated_before;
	if (keep !== undefined) {
		head.keep_last = keep;
		const kept = [record, ...(await chainFrom(vs, record.parent, keep - 1, cut))];
		const oldest = kept[kept.length - 1];
		if (oldest.parent !== null) cut = oldest.version;
	}
	if (cut !== undefined) head.truncated_before = cut;
	return head;
}

/**
 * After a save that cut its branch at `head.truncated_before`: deletes the branch's versions below the
 * cut (down to the first version, or to one an earlier pass deleted), except those another branch's
 * history reaches. Returns the deleted version numbers. Versions only ever go after the head that no
 * longer shows them was written, so an interrupted pass leaves versions nobody shows, which the next
 * save's pass deletes.
 */
export async function deleteBelowCut(vs: VersionStore, head: BranchHead): Promise<number[]> {
	const cut = head.truncated_before;
	if (cut === undefined) return [];
	const below = await vs.readVersion(cut);
	const doomed = await chainFrom(vs, below?.parent ?? null, Number.POSITIVE_INFINITY);
	if (doomed.length === 0) return [];
	const lowest = doomed[doomed.length - 1].version;
	const reached = new Set<number>();
	for (const other of await vs.listBranches()) {
		if (other.branch === head.branch) continue;
		const walk = await chainFrom(vs, other.version, Number.POSITIVE_INFINITY, lowest);
		for (const r of walk) reached.add(r.version);
	}
	const deleted: number[] = [];
	for (const r of doomed)
		if (!reached.has(r.version)) {
			await vs.objects.delete(vs.versionKey(r.version));
			deleted.push(r.version);
		}
	return deleted;
}

/** Whether every branch head is past its stored rule at `now` (none: false; a head without a rule never is). */
function allExpired(heads: Versioned<BranchHead>[], now: Date): boolean {
	return heads.length > 0 && heads.every((h) => h.version === null || isExpired(h.doc, now));
}

/** What an expiry check found and did: `deleted` when the data was expired and is gone. */
export interface PurgeResult {
	/** Every branch was past its rule. */
	expired: boolean;
	/** The keys deleted (branch heads first, then the counter, then versions). */
	deleted: string[];
	/** The keys kept because they were written after they were judged (a save won the race). */
	skipped: string[];
}

/**
 * Deletes a conversation's versioned data once every branch is past its rule. Everything is listed
 * first and each object deleted only as listed or judged (conditional deletes): branch heads first, so
 * a save that read one fails its compare-and-swap and starts over on an empty branch; a head written
 * since stops the pass before any version goes. Versions a save creates after the listing are not
 * touched. With `dryRun`, only judges.
 */
export async function purgeIfExpired(
	vs: VersionStore,
	now: Date,
	options: { dryRun?: boolean } = {},
): Promise<PurgeResult> {
	const listed = await vs.storage.list(vs.prefix);
	const kind = (o: ListedObject) => vs.layout.parse(o.key);
	const branchObjects = listed.filter((o) => kind(o)?.kind === 'branch');
	const heads = await Promise.all(
		branchObjects.map((o) => vs.heads(kind(o)?.branch as string).read(o.key)),
	);
	const result: PurgeResult = { expired: allExpired(heads, now), deleted: [], skipped: [] };
	if (!result.expired) return result;
	const rest = listed.filter((o) => kind(o)?.kind !== 'branch');
	// The counter before the versions: it only ever points past them.
	rest.sort((a, b) => Number(kind(b)?.kind !== 'version') - Number(kind(a)?.kind !== 'version'));
	const steps = [
		...branchObjects.map((o, i) => ({ key: o.key, version: heads[i].version as string })),
		...rest.map((o) => ({ key: o.key, version: o.version })),
	];
	for (const [i, step] of steps.entries()) {
		if (step.version === null) continue; // a head deleted between the listing and its read
		if (options.dryRun || (await deleteIfUnchanged(vs.storage, step.key, step.version))) {
			result.deleted.push(step.key);
			continue;
		}
		result.skipped.push(...steps.slice(i).map((s) => s.key));
		break;
	}
	if (!options.dryRun) forgetCachedUnder(vs.storage, vs.prefix);
	return result;
}
