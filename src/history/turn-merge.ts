// Flushing buffered turns onto the stored head: each turn appended once, even when an earlier attempt
// whose response was lost already stored (and maybe sealed) it, then the head sealed if it outgrew its limits.
import type { MessageLog } from '../store/message-log';
import { assertAppendable, sealedCountOf } from '../store/schema';
import type { HeadDocument, StoredMessage } from '../store/schema';
import { indexOfMessage } from './thread';
import type { BufferedTurn } from './turn-builder';
import { mergeTurns, turnMessages } from './turns';

/** The next head: `doc` with the batch's new turns appended (each once), sealed if it outgrew its limits. */
export async function mergeBatch(
	log: MessageLog,
	key: string,
	doc: HeadDocument,
	batch: readonly BufferedTurn[],
): Promise<HeadDocument | undefined> {
	const head = doc.messages;
	const sealed = sealedCountOf(doc);
	// A turn may already be stored beyond the head's messages: the caller's ID stored by another writer,
	// or this turn itself, written by an attempt whose response was lost and sealed since.
	const deep = batch.filter(
		(t) =>
			indexOfMessage(head, t.assistant.message_id) === undefined &&
			(t.callerIds || (t.placedAt !== undefined && t.placedAt < sealed)),
	);
	const found: StoredMessage[] = [];
	if (deep.length > 0 && sealed > 0) {
		const from = Math.min(...deep.map((t) => (t.callerIds ? 0 : (t.placedAt as number))));
		const hits = await log.find(
			doc,
			deep.flatMap((t) => turnMessages(t).map((m) => m.message_id)),
			from,
		);
		const seen = new Set<string>();
		for (const [id, chunk] of hits) {
			const m = chunk.messages.find((x) => x.message_id === id) as StoredMessage;
			if (!seen.has(id)) found.push(m);
			seen.add(id);
		}
	}
	const stored = found.length > 0 ? [...found, ...head] : head;
	const merged = mergeTurns(key, stored, batch);
	if (merged.added === 0) return undefined;
	const appended = merged.messages.slice(stored.length);
	assertAppendable(key, (id) => indexOfMessage(stored, id) !== undefined, appended);
	const at = sealed + head.length;
	const written = new Set(appended.map((m) => m.message_id));
	for (const t of batch)
		if (written.has(t.assistant.message_id)) t.placedAt = Math.min(t.placedAt ?? at, at);
	return log.seal({ ...doc, messages: merged.messages.slice(found.length) });
}
