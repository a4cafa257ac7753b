/**
 * Automatic recall on LoCoMo (part of recall-locomo.ts): what recall() puts before a model call with
 * its defaults (5 entries at most, 500 tokens, recency half-life 180 days), per question, against the
 * default search's top 5; how many questions recall nothing; and what it recalls for fifty pleasantries
 * in twelve languages (bench/pleasantries.ts), which should be nothing. The code's small-talk word list
 * answers some of them before any search; the others meet the relevance floor from scores.
 */
import { isSmallTalk, TiktokenCounter } from '../src/internal';
import type { MemoryBase } from '../src/internal';
import type { Conversation } from './locomo-data';
import { PLEASANTRIES } from './pleasantries';

const counter = new TiktokenCounter('o200k_base');

export interface AutoRecall {
	/** Per question: the share of its evidence turns the section held, and the section's tokens. */
	held: number[];
	tokens: number[];
	/** Questions asked, and those for which recall injected nothing. */
	questions: number;
	questionsEmpty: number;
	/** Pleasantries asked, those the word list answered, and those the score floor let through. */
	pleasantries: number;
	byList: number;
	recalled: number;
	/** Which pleasantries recalled something, with how many conversations each. */
	leaks: Map<string, number>;
}

export const emptyAutoRecall = (): AutoRecall => ({
	held: [],
	tokens: [],
	questions: 0,
	questionsEmpty: 0,
	pleasantries: 0,
	byList: 0,
	recalled: 0,
	leaks: new Map(),
});

/** Every question of one conversation, and every pleasantry, through recall(). */
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
		into.questions++;
		if (r.hits.length === 0) into.questionsEmpty++;
	}
	for (const text of PLEASANTRIES) {
		into.pleasantries++;
		if (isSmallTalk(text)) into.byList++;
		const r = await base.recall({ query: text, sessionId: c.sampleId, counter });
		if (r.hits.length === 0) continue;
		into.recalled++;
		into.leaks.set(text, (into.leaks.get(text) ?? 0) + 1);
	}
}
