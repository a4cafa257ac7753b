// Forgetting conversations in a facts document: what was learned in them goes from the current
// document AND from every stored version, so no older version holds it after a Forget. Versions are
// write-once otherwise; this is the one place that rewrites them: first the branch head moves to a
// new version without those facts (so no process keeps serving a cached copy of the old head's
// version), then each version object holding any of them is rewritten in place (same number, parent,
// summary and time), by compare-and-swap of that object.
import { ConflictError } from '../errors';
import { validateVersionRecord, encodeVersionRecord } from '../snapshots/records';
import { decodeJsonObject } from '../store/codec';
import { forgetCachedUnder } from '../store/document-store';
import type { MemoryStorage } from '../store/storage';
import { validateFacts } from './records';
import type { Evidence, Fact, FactsDocument } from './records';
import type { FactsStore } from './store';

const fromForgotten = (e: Evidence, forgotten: ReadonlySet<string>) =>
	e.kind === 'quote' && forgotten.has(e.conversation_id);

/** Whether a document holds anything of these conversations (facts, retirements, read positions). */
export function holdsAny(doc: FactsDocument, forgotten: ReadonlySet<string>): boolean {
	return (
		doc.cursors.some((c) => forgotten.has(c.conversation_id)) ||
		doc.facts.some(
			(f) =>
				fromForgotten(f.evidence, forgotten) ||
				(f.retired !== undefined && fromForgotten(f.retired.evidence, forgotten)),
		)
	);
}

/**
 * The document as if the conversations had never been read: their facts removed; a fact one of them
 * superseded is superseded by what came after it (or current again); a retirement they evidenced
 * undone; their read positions gone. Undefined when it holds nothing of them.
 */
export function redacted(
	doc: FactsDocument,
	forgotten: ReadonlySet<string>,
): FactsDocument | undefined {
	if (!holdsAny(doc, forgotten)) return undefined;
	const byId = new Map(doc.facts.map((f) => [f.id, f]));
	const gone = new Set(
		doc.facts.filter((f) => fromForgotten(f.evidence, forgotten)).map((f) => f.id),
	);
	const facts = doc.facts
		.filter((f) => !gone.has(f.id))
		.map((f) => {
			const out: Fact = { ...f };
			if (f.retired && fromForgotten(f.retired.evidence, forgotten)) delete out.retired;
			if (f.superseded && gone.has(f.superseded.by)) {
				let next = byId.get(f.superseded.by);
				const seen = new Set<string>();
				while (next && gone.has(next.id) && !seen.has(next.id)) {
					seen.add(next.id);
					next = next.superseded ? byId.get(next.superseded.by) : undefined;
				}
				if (next && !gone.has(next.id)) out.superseded = { at: next.valid_from, by: next.id };
				else delete out.superseded;
			}
			return out;
		});
	const cursors = doc.cursors.filter((c) => !forgotten.has(c.conversation_id));
	return { ...doc, facts, cursors };
}

/** Rewrites one stored version without the conversations; true when it held any. */
async function rewriteVersion(
	storage: MemoryStorage,
	key: string,
	forgotten: ReadonlySet<string>,
): Promise<boolean> {
	for (let attempt = 0; attempt < 5; attempt++) {
		const got = await storage.get(key);
		if (!got) return false; // deleted since the listing
		const record = validateVersionRecord(key, decodeJsonObject(key, got.body));
		const clean = redacted(validateFacts(key, record.data), forgotten);
		if (!clean) return attempt > 0;
		const body = encodeVersionRecord(record, JSON.stringify(clean));
		try {
			await storage.put(key, body, { ifVersion: got.version, contentType: 'application/json' });
			return true;
		} catch (error) {
			if (!(error instanceof ConflictError)) throw error;
		}
	}
	throw new ConflictError('another writer kept rewriting this version during a Forget', key);
}

/** Beside the versions while a Forget rewrites them: a run that stopped midway is finished by the next. */
export const FORGETTING = 'forgetting.json';

/**
 * Forgets the conversations in one subject's facts (see the module comment), when its current
 * document holds any of them or an earlier Forget of it did not finish (`pending`: its marker is
 * there). A writer that read the document before the head moved may still create one version from
 * what it read before it loses its compare-and-swap: every pass lists the versions again, until one
 * finds nothing to rewrite. Returns the keys written anew (empty when there was nothing to forget).
 */
export async function forgetInFacts(
	store: FactsStore,
	forgotten: ReadonlySet<string>,
	options: { pending?: boolean } = {},
): Promise<string[]> {
	const { storage, versions } = store;
	const state = await store.read();
	if (!options.pending && !holdsAny(state.doc, forgotten)) return [];
	const marker = `${versions.prefix}${FORGETTING}`;
	await storage.put(marker, Buffer.from('{"forgetting":true}'), {
		contentType: 'application/json',
	});
	const written: string[] = [];
	const moved = await store.change((doc) => {
		const clean = redacted(doc, forgotten);
		return clean && { doc: clean, summary: 'Forgot what was learned in forgotten conversations' };
	});
	if (moved.written && moved.state.version !== null)
		written.push(
			versions.branchKey('main'),
			versions.counterKey,
			versions.versionKey(moved.state.version),
		);
	for (let pass = 0; pass < 4; pass++) {
		let found = 0;
		for (const o of await storage.list(`${versions.prefix}versions/`)) {
			if (versions.layout.parse(o.key)?.kind !== 'version') continue;
			if (!(await rewriteVersion(storage, o.key, forgotten))) continue;
			found++;
			if (!written.includes(o.key)) written.push(o.key);
		}
		if (found === 0) break;
	}
	await storage.delete(marker);
	forgetCachedUnder(storage, versions.prefix);
	return written;
}
