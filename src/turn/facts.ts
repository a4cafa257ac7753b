// Facts in a turn: the current facts read beside the other memories and shown as a section before
// recall (within the Facts Token Budget, counted against the history budget), and after the turn is
// saved, the batched extraction over the turns the facts have not read yet, optionally indexed into
// the turn's Memory Base beside the raw turns. What both did, for the output.
import { createHash } from 'node:crypto';

import type { Facts } from '../facts/facts';
import type { Extractor, LearnResult } from '../facts/learn';
import type { FactsSource, ReadMessage } from '../facts/operations';
import { statusOf } from '../facts/records';
import type { Fact, FactsDocument, QuoteEvidence } from '../facts/records';
import type { FactsSection } from '../facts/request';
import type { FactsState } from '../facts/store';
import type { BufferMemory } from '../history/buffer-memory';
import type { AddedTurn } from '../history/memory-types';
import type { RecallCandidates } from '../knowledge/recall';
import type { CaptureInput } from '../knowledge/types';
import { encodingForModel, TiktokenCounter } from '../tokens/tokens';

export interface TurnFacts {
	/** The subject's facts (the user's, or the conversation's without a User ID) in the facts space. */
	memory: Facts;
	/** Calls the chat model with an extraction request (as a summarizer does). */
	extract: Extractor;
	/** Facts Token Budget: the most tokens the facts section takes, within the history budget. */
	tokenBudget: number;
	/** Where the turns come from: the workflow, the conversation (and the node in Node mode). */
	source: FactsSource;
	/** Extract once the unread turns hold this many tokens (default DEFAULT_FACTS_THRESHOLD). */
	threshold?: number;
	maxUnreadTurns?: number;
	evidenceRoles?: ReadonlyArray<'user' | 'assistant'>;
	/** Index what is learned into the turn's long-term Memory Base (needs long-term memory). */
	index?: boolean;
	/** The model, for counting the section's tokens as it will (default: the turn's). */
	model?: string;
}

/** What the turn shows of the facts: the section, or why there is none. */
export interface ShownFacts extends FactsSection {
	/** The document read (undefined when the read failed). */
	doc?: FactsDocument;
	version: number | null;
	error?: string;
}

/** Messages of the saved thread given to learning: enough for the unread-turn limit with tool steps. */
export const LEARN_WINDOW_MESSAGES = 96;

const none = (error?: string): ShownFacts => ({
	section: '',
	tokens: 0,
	facts: [],
	omitted: 0,
	version: null,
	...(error ? { error } : {}),
});

export async function readFacts(f: TurnFacts): Promise<FactsState | Error> {
	return f.memory.read().catch((error: unknown) => error as Error);
}

/** The facts section within the Facts Token Budget and at most `cap` tokens (the turn's budget). */
export function showFacts(read: FactsState | Error, f: TurnFacts, cap: number): ShownFacts {
	if (read instanceof Error) return none(read.message);
	const counter = new TiktokenCounter(encodingForModel(f.model));
	const section = f.memory.section(read.doc, Math.max(0, Math.min(f.tokenBudget, cap)), counter);
	return { ...section, doc: read.doc, version: read.version };
}

/**
 * Recall's candidates without fact entries the model may not see: an indexed fact reaches the model
 * only while it is current and not already in the facts section (superseded and retired facts never
 * do, nor fact entries of a turn without facts).
 */
export function withoutHiddenFacts(found: RecallCandidates, shown?: ShownFacts): RecallCandidates {
	const current = new Set(
		(shown?.doc?.facts ?? []).filter((f) => statusOf(f) === 'current').map((f) => f.id),
	);
	for (const f of shown?.facts ?? []) current.delete(f.id);
	const hits = found.hits.filter(
		(h) => h.role !== 'fact' || current.has(String(h.metadata?.fact ?? '')),
	);
	return hits.length === found.hits.length ? found : { ...found, hits };
}

/** The saved thread's newest messages as learning reads them: the user's and the answers' text. */
export async function threadForFacts(
	memory: BufferMemory,
	saved: AddedTurn,
): Promise<ReadMessage[]> {
	const thread = await memory.thread({
		parentMessageId: saved.messageId,
		maxMessages: LEARN_WINDOW_MESSAGES,
	});
	return thread.flatMap((m) =>
		(m.role === 'user' || m.role === 'assistant') && m.content.trim() !== '' && !m.tool_calls
			? [
					{
						messageId: m.message_id,
						role: m.role,
						text: m.content,
						at: m.created_at,
						tokens: m.token_count,
					},
				]
			: [],
	);
}

/** Learns from the turns the facts have not read (see facts/learn.ts); a failure comes back as an Error. */
export async function learnTurn(
	memory: BufferMemory,
	f: TurnFacts,
	saved: AddedTurn,
	force = false,
): Promise<LearnResult | Error> {
	try {
		return await f.memory.learn({
			extract: f.extract,
			source: f.source,
			messages: await threadForFacts(memory, saved),
			threshold: f.threshold,
			maxUnreadTurns: f.maxUnreadTurns,
			evidenceRoles: f.evidenceRoles,
			force,
		});
	} catch (error) {
		return new Error(`Facts were not learned this turn: ${(error as Error).message}`);
	}
}

/**
 * What a Memory Base captures of learned facts: one capture per conversation of their evidence, each
 * fact as its text with the words quoted, linked to its evidence message (metadata `fact` and
 * `evidence`); the run ID comes from the facts and their evidence, so a retry captures nothing twice.
 */
export function factCaptures(facts: readonly Fact[], userId?: string): CaptureInput[] {
	const bySession = new Map<string, Fact[]>();
	for (const f of facts)
		if (f.evidence.kind === 'quote')
			bySession.set(f.evidence.conversation_id, [
				...(bySession.get(f.evidence.conversation_id) ?? []),
				f,
			]);
	return [...bySession].map(([sessionId, group]) => {
		const digest = createHash('sha256');
		for (const f of group) digest.update(`${f.id}\n${(f.evidence as QuoteEvidence).message_id}\n`);
		return {
			sessionId,
			...(userId !== undefined ? { userId } : {}),
			runId: `facts:${digest.digest('hex').slice(0, 24)}`,
			messages: group.map((f) => {
				const e = f.evidence as QuoteEvidence;
				return {
					text: `${f.text} ("${e.quote}")`,
					role: 'fact',
					metadata: { fact: f.id, evidence: e.message_id },
				};
			}),
		};
	});
}

/** What facts did this turn, for the output. */
export function factsReport(
	shown?: ShownFacts,
	learned?: LearnResult | Error,
): Record<string, unknown> {
	return {
		...(shown
			? {
					shown: shown.facts.length,
					tokens: shown.tokens,
					...(shown.omitted ? { omitted: shown.omitted } : {}),
					version: shown.version,
					...(shown.error ? { readError: shown.error } : {}),
				}
			: {}),
		...(learned instanceof Error
			? { learnError: learned.message }
			: learned
				? learnedReport(learned)
				: {}),
	};
}

function learnedReport(l: LearnResult): Record<string, unknown> {
	return {
		extracted: l.extracted,
		...(l.reason ? { notExtracted: l.reason } : {}),
		...(l.error ? { extractionError: l.error } : {}),
		unreadTurns: l.unreadTurns,
		readTurns: l.readTurns,
		added: l.added.map((f) => ({ id: f.id, text: f.text })),
		updated: l.updated.map((u) => ({ from: u.from.id, id: u.to.id, text: u.to.text })),
		retired: l.retired.map((f) => ({ id: f.id, reason: f.retired?.reason })),
		dropped: l.dropped,
	};
}
