// Re-encrypt: rewrites stored objects under the current key after a rotation (or plain objects written
// before Encryption was turned on), each by compare-and-swap, so a writer that changed an object
// meanwhile wins and its write, made with the current key, stands.
import { ConflictError, InvalidOptionError } from '../errors';
import { validateKeyPrefix } from '../keys/ids';
import { isSealed, sealedKeyId } from '../store/encrypted';
import type { EncryptedStorage } from '../store/encrypted';
import { memoriesOf } from './memories';

export interface ReencryptScope {
	keyPrefix?: string;
	/** One workflow (all of it), or with conversationId one conversation of it. Neither: everything. */
	appId?: string;
	conversationId?: string;
}

export interface ReencryptResult {
	keyId: string;
	/** Objects rewritten under the current key. */
	rewritten: number;
	/** Objects already under it. */
	current: number;
	/** Objects changed by another writer while this ran (left as that writer wrote them). */
	changedMeanwhile: string[];
}

/** Everything under the key prefix, or the folders each memory keeps of the workflow or conversation. */
function prefixesOf(storage: EncryptedStorage, scope: ReencryptScope): string[] {
	const prefix = validateKeyPrefix('key prefix', scope.keyPrefix);
	const { appId, conversationId } = scope;
	if (appId === undefined) return [prefix];
	return memoriesOf(storage, prefix).all.flatMap((m) => m.prefixes({ appId, conversationId }));
}

/**
 * Rewrites every object of the scope that is plain or sealed with an older key. An object that cannot
 * be opened (a key that is gone, tampering) stops the run with its error and is left untouched.
 */
export async function reencrypt(
	storage: EncryptedStorage,
	scope: ReencryptScope = {},
): Promise<ReencryptResult> {
	const keyId = storage.currentKeyId;
	if (!keyId)
		throw new InvalidOptionError(
			'encryption',
			'set Encryption to Encrypt with a Key, the key to re-encrypt under',
		);
	const result: ReencryptResult = { keyId, rewritten: 0, current: 0, changedMeanwhile: [] };
	const seen = new Set<string>();
	for (const prefix of prefixesOf(storage, scope))
		for (const o of await storage.inner.list(prefix)) {
			if (seen.has(o.key)) continue;
			seen.add(o.key);
			const raw = await storage.inner.get(o.key);
			if (!raw) continue; // deleted meanwhile
			if (isSealed(raw.body) && sealedKeyId(o.key, raw.body) === keyId) {
				result.current++;
				continue;
			}
			const opened = await storage.get(o.key);
			if (!opened || opened.version !== raw.version) {
				result.changedMeanwhile.push(o.key);
				continue;
			}
			try {
				await storage.put(o.key, opened.body, { ifVersion: raw.version });
				result.rewritten++;
			} catch (error) {
				if (!(error instanceof ConflictError)) throw error;
				result.changedMeanwhile.push(o.key);
			}
		}
	return result;
}
