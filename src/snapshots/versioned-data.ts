import {
	BranchExistsError,
	InvalidInputError,
	SchemaViolationError,
	UnknownVersionError,
} from '../errors';
import { validateBranchName } from '../keys/ids';
import { checkExpireAfterDays } from '../store/retention';
import { diffJson } from './diff';
import { toJsonText } from './json';
import type { JsonValue } from './json';
import type { BranchHead, VersionRecord } from './records';
import { commit } from './save';
import {
	checkExpected,
	checkKeepLast,
	checkMessageId,
	checkSummary,
	checkVersionNumber,
	MAIN_BRANCH,
	MAX_HISTORY_PAGE,
	sizeOf,
} from './types';
import type {
	HistoryEntry,
	HistoryOptions,
	HistoryPage,
	RollbackOptions,
	SaveVersionInput,
	VersionDiff,
} from './types';
import { VersionStore } from './version-store';

/**
 * Versioned working data of one conversation (the "data memory" beside chat memory): JSON snapshots
 * with a summary each, on branches, with history, diff and rollback. Each version is a write-once object;
 * each branch a small head moved by compare-and-swap. See src/README.md ("Versioned data").
 *
 * Records returned are deeply frozen (they are shared through the process cache): copy a version's data
 * (structuredClone) before changing it.
 */
export class VersionedData extends VersionStore {
	/**
	 * Saves `data` as a new version on a branch and moves the branch to it. Costs the same at any number
	 * of versions: read the head and the counter, create the version (create-only), compare-and-swap the
	 * head, raise the counter. Concurrent saves on one branch from any number of processes all land, one
	 * after another (each new version's parent is the one before it); with `expectedVersion` a save that
	 * lost the race is refused instead (VersionConflictError). Bad input (non-JSON data, too large, no
	 * summary, schema violation, bad branch name) is refused before anything is written.
	 */
	async saveVersion(input: SaveVersionInput): Promise<VersionRecord> {
		if (typeof input !== 'object' || input === null)
			throw new InvalidInputError('input', 'must be an object with "data" and "summary"');
		const branch = validateBranchName(input.branch ?? MAIN_BRANCH);
		const summary = checkSummary(input.summary);
		const messageId = checkMessageId(input.messageId);
		const expected = checkExpected(input.expectedVersion);
		const rules = {
			expireAfterDays: checkExpireAfterDays(input.expireAfterDays, 'expireAfterDays'),
			keepLast: checkKeepLast(input.keepLastVersions),
		};
		const { text } = toJsonText('data', input.data);
		const data = JSON.parse(text) as JsonValue;
		if (this.validate) {
			const errors = this.validate(data);
			if (errors.length > 0) throw new SchemaViolationError(errors);
		}
		return commit(this, { branch, summary, messageId, dataText: text, data, expected, rules });
	}

	/**
	 * The version a branch is at (default "main"); null when nothing was saved on "main" yet. One
	 * conditional read of the head; the version it points to is read too unless this process already
	 * read (or wrote) it under this very head version.
	 */
	async getCurrent(branch: string = MAIN_BRANCH): Promise<VersionRecord | null> {
		const name = validateBranchName(branch);
		const head = await this.headOf(name);
		if (!head) return null;
		const headKey = this.branchKey(name);
		const known = this.objects.recall<VersionRecord>(headKey, head.version as string);
		if (known) return known;
		const record = await this.mustRead(head.doc.version, headKey, 'it points to');
		return this.objects.remember(headKey, head.version as string, record);
	}

	/** One version by number (on any branch); UnknownVersionError when there is none. */
	async getVersion(version: number): Promise<VersionRecord> {
		const n = checkVersionNumber('version', version);
		// Versioned data past its Expire After is gone for every read, by number too.
		await this.liveHead(MAIN_BRANCH);
		const record = await this.readVersion(n);
		if (record) return record;
		const cuts = (await this.listBranches()).map((h) => h.truncated_before ?? 0);
		const cut = Math.max(0, ...cuts);
		throw new UnknownVersionError(this.scope, n, n < cut ? cut : undefined);
	}

	/**
	 * One page of a branch's history, newest first, following parent pointers from the head (or from
	 * `before`'s parent). Costs one read per entry (O(page), whatever the number of versions), each a
	 * whole version object the first time in this process.
	 */
	async history(options: HistoryOptions = {}): Promise<HistoryPage> {
		const branch = validateBranchName(options.branch ?? MAIN_BRANCH);
		const limit = options.limit ?? 20;
		if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_HISTORY_PAGE)
			throw new InvalidInputError('limit', `must be an integer from 1 to ${MAX_HISTORY_PAGE}`);
		const head = await this.headOf(branch);
		const cut = head?.doc.truncated_before ?? 0;
		let next: number | null;
		let referrer: string;
		if (options.before !== undefined) {
			const from = await this.getVersion(checkVersionNumber('before', options.before));
			next = from.parent;
			referrer = this.versionKey(from.version);
		} else {
			next = head ? head.doc.version : null;
			referrer = this.branchKey(branch);
		}
		const entries: HistoryEntry[] = [];
		while (next !== null && next >= cut && entries.length < limit) {
			const r: VersionRecord = await this.mustRead(
				next,
				referrer,
				entries.length === 0 && options.before === undefined ? 'it points to' : 'its parent is',
			);
			entries.push({
				version: r.version,
				parent: r.parent,
				summary: r.summary,
				created_at: r.created_at,
				...(r.message_id !== undefined ? { message_id: r.message_id } : {}),
				size: sizeOf(r),
			});
			referrer = this.versionKey(r.version);
			next = r.parent;
		}
		// Below the cut, Keep Last N Versions deleted the versions: the page says where history ends.
		const truncated = next !== null && next < cut;
		return {
			branch,
			entries,
			nextBefore:
				next === null || truncated || entries.length === 0
					? null
					: entries[entries.length - 1].version,
			...(truncated ? { truncatedBefore: cut } : {}),
		};
	}

	/** What changed from version `from` to version `to`: an RFC 6902 patch and one line per change. */
	async diff(from: number, to: number): Promise<VersionDiff> {
		const [a, b] = await Promise.all([this.getVersion(from), this.getVersion(to)]);
		return { from: a.version, to: b.version, ...diffJson(a.data, b.data) };
	}

	/**
	 * A new version on `branch` whose data equals version `version`'s, summary "Rolled back to v{n}".
	 * Nothing is deleted: the versions after it stay in history (and readable by number).
	 */
	async rollback(
		version: number,
		branch: string = MAIN_BRANCH,
		options: RollbackOptions = {},
	): Promise<VersionRecord> {
		const target = await this.getVersion(version);
		return this.saveVersion({
			data: target.data,
			summary: `Rolled back to v${target.version}`,
			branch,
			messageId: options.messageId,
			expectedVersion: options.expectedVersion,
		});
	}

	/** Creates branch `name` at version `fromVersion`. BranchExistsError if it exists (also "main" once saved to). */
	async branch(name: string, fromVersion: number): Promise<BranchHead> {
		const branch = validateBranchName(name);
		const from = await this.getVersion(fromVersion);
		const now = this.now().toISOString();
		const key = this.branchKey(branch);
		const result = await this.heads(branch).update(key, async (current) => {
			if (current.version !== null) throw new BranchExistsError(this.scope, branch);
			return { ...(await this.inheritedRules()), branch, version: from.version, updated_at: now };
		});
		// A Keep Last N pass of another branch may have deleted the version meanwhile: then no branch.
		if (!(await this.readVersion(from.version))) {
			await this.heads(branch).delete(key);
			throw new UnknownVersionError(this.scope, from.version);
		}
		return result.current.doc;
	}

	/**
	 * What a new branch takes from the others: the rules of the branch saved to last (so a branch
	 * never keeps expired data alive by having none), and the highest cut (its history may run into
	 * versions another branch's Keep Last N deleted).
	 */
	private async inheritedRules(): Promise<Partial<BranchHead>> {
		const heads = await this.listBranches();
		if (heads.length === 0) return {};
		const newest = heads.reduce((a, b) => (b.updated_at > a.updated_at ? b : a));
		const cut = Math.max(0, ...heads.map((h) => h.truncated_before ?? 0));
		return {
			...(newest.expire_after_days !== undefined
				? { expire_after_days: newest.expire_after_days }
				: {}),
			...(newest.keep_last !== undefined ? { keep_last: newest.keep_last } : {}),
			...(cut > 0 ? { truncated_before: cut } : {}),
		};
	}
}
