/**
 * Automatic recall on LoCoMo (part of recall-locomo.ts): what recall() puts before a model call with
 * its defaults (5 entries at most, 500 tokens, recency half-life 180 days), per question, against the
 * default search's top 5; how many questions recall nothing; and what it recalls for fifty pleasantries
 * in twelve languages and a second fifty never used to tune it (bench/pleasantries.ts), which should be
 * nothing. The code's small-talk word list
 * answers some of them before any search; the others meet the relevance floor from scores.
 */
import { isSmallTalk, TiktokenCounter } from '../src/internal';
import type { MemoryBase } from '../src/internal';
import type { Conversation } from './locomo-data';
import { MORE_SMALL_TALK, PLEASANTRIES } from './pleasantries';

const counter = new TiktokenCounter('o200k_base');

/** One set of small talk asked in every conversation. */
export interface SmallTalkTally {
	/** Messages asked (the set × conversations), those the word list answered, those that recalled. */
	asked: number;
	byList: number;
	recalled: number;
	/** Which messages recalled something, with how many conversations each. */
	leaks: Map<string, number>;
}

export interface AutoRecall {
	/** Per question: the share of its evidence turns the section held, and the section's tokens. */
	held: number[];
	tokens: number[];
	/** Questions asked, and those for which recall injected nothing. */
	questions: number;
	questionsEmpty: number;
	/** The fifty pleasantries, and a second fifty never used to tune the floor. */
	pleasantries: SmallTalkTally;
	more: SmallTalkTally;
}

const emptyTally = (): SmallTalkTally => ({ asked: 0, byList: 0, recalled: 0, leaks: new Map() });

export const emptyAutoRecall = (): AutoRecall => ({
	held: [],
	tokens: [],
	questions: 0,
	questionsEmpty: 0,
	pleasantries: emptyTally(),
	more: emptyTally(),
});

/** Each message of `set` through recall() in this conversation: what it recalled. */
async function smallTalk(
	c: Conversation,
	base: MemoryBase,
	set: readonly string[],
	into: SmallTalkTally,
): Promise<void> {
	for (const text of set) {
		into.asked++;
		if (isSmallTalk(text)) into.byList++;
		const r = await base.recall({ query: text, sessionId: c.sampleId, counter });
		if (r.hits.length === 0) continue;
		into.recalled++;
		into.leaks.set(text, (into.leaks.get(text) ?? 0) + 1);
	}
}

/** Every question of one conversation, and both sets of small talk, through recall(). */
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
	await smallTalk(c, base, PLEASANTRIES, into.pleasantries);
	await smallTalk(c, base, MORE_SMALL_TALK, into.more);
}
