// Evidence of a captured message: a message captured with `metadata.evidence` naming a chat message ID
// of its conversation (a learned fact names the message it was learned from) is linked to the captured
// message that carries that ID (`metadata.messageId`, as a chat turn's capture does). A search that hits
// the first can bring the second: looked for among the messages captured just before it, so the cost
// is bounded whatever the conversation's length.
import { readLog, readMessages } from './capture-log';
import type { BaseParts } from './parts';
import type { SearchMatch } from './types';

/** How far before a message its evidence is looked for (facts are learned within a few turns). */
export const EVIDENCE_WINDOW = 128;

/** The captured message a match names as its evidence. */
export interface EvidenceMessage {
	text: string;
	/** The captured message's ID, and the chat message ID it carries. */
	messageId: string;
	chatMessageId: string;
	seq: number;
	capturedAt: string;
	role?: string;
}

export type WithEvidence = SearchMatch & { evidence?: EvidenceMessage };

const evidenceId = (hit: SearchMatch) =>
	typeof hit.metadata?.evidence === 'string' ? hit.metadata.evidence : undefined;

/**
 * The matches, each that names its evidence with that captured message attached when it is among the
 * EVIDENCE_WINDOW messages captured before it (one read of each conversation's log and the sealed
 * blocks that window covers). Matches naming none come back as they are.
 */
export async function attachEvidence(
	p: BaseParts,
	hits: readonly SearchMatch[],
	window = EVIDENCE_WINDOW,
): Promise<WithEvidence[]> {
	const sessions = new Map<string, SearchMatch[]>();
	for (const h of hits)
		if (evidenceId(h)) sessions.set(h.sessionId, [...(sessions.get(h.sessionId) ?? []), h]);
	const found = new Map<SearchMatch, EvidenceMessage>();
	for (const [sessionId, linked] of sessions) {
		const { log, version } = await readLog(p, sessionId);
		if (version === null) continue;
		const last = Math.max(...linked.map((h) => h.seq)) - 1;
		const first = Math.max(1, Math.min(...linked.map((h) => h.seq)) - window);
		if (last < first) continue;
		const messages = await readMessages(p, log, first, last);
		for (const h of linked) {
			const m = [...messages]
				.reverse()
				.find(
					(c) =>
						c.seq < h.seq && c.seq >= h.seq - window && c.metadata?.messageId === evidenceId(h),
				);
			if (m)
				found.set(h, {
					text: m.text,
					messageId: m.id,
					chatMessageId: evidenceId(h) as string,
					seq: m.seq,
					capturedAt: m.created_at,
					...(m.role !== undefined ? { role: m.role } : {}),
				});
		}
	}
	return hits.map((h) => (found.has(h) ? { ...h, evidence: found.get(h) } : h));
}
