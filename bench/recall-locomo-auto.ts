/**
 * Automatic recall on LoCoMo (part of recall-locomo.ts): what recall() puts before a model call with
 * its defaults (5 entries at most, 500 tokens, recency half-life 180 days), per question, against the
 * default search's top 5; and what it puts there for 50 small-talk messages (bench/small-talk.ts),
 * which should be nothing.
 */
import { TiktokenCounter } from '../src/internal';
import type { MemoryBase } from '../src/internal';
import type { Conversation } from './locomo-data';
import { SMALL_TALK } from './small-talk';

const counter = new TiktokenCounter('o200k_base');

export interface AutoRecall {
	/** Per question: the share of its evidence turns the section held, and the section's tokens. */
	held: number[];
	tokens: number[];
	/** Small-talk messages asked, and those for which recall injected nothing. */
	smallTalk: number;
	smallTalkEmpty: number;
	/** Why recall injected nothing for a small-talk message it searched anyway (the others: small talk). */
	smallTalkInjected: string[];
}

export const emptyAutoRecall = (): AutoRecall => ({
	held: [],
	tokens: [],
	smallTalk: 0,
	smallTalkEmpty: 0,
	smallTalkInjected: [],
});

/** Every question of one conversation, and every small-talk message, through recall(). */
export async function autoRecall(
	c: Conversation,
	base: MemoryBase,
	into: AutoRecall,
): Promise<void> {
	for (const q of c.questions) {
		const r = await base.recall({ query: q.text, sessionId: c.sampleId, counter });
		const ids = new Set(r.hits.map((h) => String(h.metadata?.diaId ?? h.runId)));
		into.held.push(q.evidence.filter((e) => ids.has(e)).length / q.evidence.length);
		into.tokens.push(r.tokens);
	}
	for (const text of SMALL_TALK) {
		const r = await base.recall({ query: text, sessionId: c.sampleId, counter });
		into.smallTalk++;
		if (r.hits.length === 0) into.smallTalkEmpty++;
		else if (!into.smallTalkInjected.includes(text)) into.smallTalkInjected.push(text);
	}
}
