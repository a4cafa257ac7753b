// One chat turn, assembled once for every caller (LLM with Memory, the LLM Memory Store for n8n's
// agents, the versioned-data tool loop): it reads the history (with its summary), the facts, the
// long-term recall and the versioned data side by side, fits them into one token budget, gives the
// model's messages, then saves the turn, captures it into long-term memory, learns facts from it and
// reports what each memory did.
import { StorageTimeoutError, TurnNotSavedError } from '../errors';
import type { BufferMemory } from '../history/buffer-memory';
import type { AddedTurn, HistoryOptions, TurnInput } from '../history/memory-types';
import type { SummaryOptions } from '../history/summarized';
import type { History, SummaryReport } from '../history/thread-view';
import type { CaptureResult } from '../knowledge/types';
import { requestTokens } from '../prompt/request-tokens';
import type { PromptMessage } from '../prompt/types';
import { encodingForModel, TiktokenCounter } from '../tokens/tokens';
import type { MemoryStorage } from '../store/storage';
import type { LearnResult } from '../facts/learn';
import {
	factCaptures,
	factsReport,
	learnTurn,
	readFacts,
	showFacts,
	withoutHiddenFacts,
} from './facts';
import type { ShownFacts, TurnFacts } from './facts';
import type { CapturedTurn, LongTermMemory } from './long-term';
import { failedRecall, notRecalled } from './recalled';
import type { Recalled } from './recalled';
import type { OpenedData, VersionedSettings } from './versioned';

export interface TurnOptions {
	memory: BufferMemory;
	/** How the history is read: the turn's IDs, the window, the token budget. */
	read: Omit<HistoryOptions, 'summary'>;
	/** Summarize Older Turns (undefined: the oldest turns are dropped). */
	summary?: Omit<SummaryOptions, 'refresh'>;
	/** The budget history, summary and recall share (tokens). */
	budget: number;
	/** The model (its tokenizer counts the request as sent). */
	model?: string;
	longTerm?: {
		memory: LongTermMemory;
		/** What to recall for: the user's message (empty: nothing is recalled, `emptyQuery` says why). */
		query?: string;
		emptyQuery?: string;
		/** The model, for counting the section's tokens as it will. */
		model?: string;
	};
	/**
	 * Long-term facts of the user (or of the conversation without a User ID): shown before recall,
	 * within the Facts Token Budget and the turn's budget; learned after the turn is saved (learn()).
	 */
	facts?: TurnFacts;
	/** Versioned data of the conversation. */
	data?: {
		storage: MemoryStorage;
		workflowId: string;
		conversationId: string;
		settings: VersionedSettings;
	};
}

/** Why a turn's recall is empty by default: there was no message to recall for. */
const NO_QUERY = 'nothing to recall for: the message is empty';

/** Versioned data, loaded only by a turn that has some (the module brings the versioned-data memory). */
async function readData(data: NonNullable<TurnOptions['data']>): Promise<OpenedData> {
	const { readVersionedData } = await import('./versioned');
	return readVersionedData(data.storage, data.workflowId, data.conversationId, data.settings);
}

async function initialized(data: OpenedData): Promise<OpenedData> {
	const { initializeData } = await import('./versioned');
	return initializeData(data);
}

export class ChatTurn {
	/** What went wrong but did not stop the turn (a summary that could not be made, a failed recall or capture). */
	readonly warnings: string[] = [];
	private captured: CaptureResult | Error | undefined;
	private learned: LearnResult | Error | undefined;
	/** The tokens of the request messages() gave, as sent. */
	private sent: number | undefined;

	private constructor(
		private readonly options: TurnOptions,
		readonly history: History,
		readonly recalled: Recalled | undefined,
		readonly data: OpenedData | undefined,
		readonly facts?: ShownFacts,
	) {
		if (facts?.error) this.warnings.push(`Facts were not read: ${facts.error}`);
		if (history.summary?.error) this.warnings.push(history.summary.error);
		const narrowed = options.longTerm?.memory.warning;
		if (narrowed) this.warnings.push(narrowed);
		if (recalled?.error) this.warnings.push(`Long-term memory was not recalled: ${recalled.error}`);
	}

	/**
	 * Reads the turn's memories side by side (the history read also checks the turn's IDs), then fits the
	 * facts and recalled sections into the budget: when history, summary, facts and recall do not fit
	 * together, the history is read again with less room and the stored summary (no second summary
	 * call). Saves Initial Data of versioned data only after the reads succeeded.
	 */
	static async open(options: TurnOptions): Promise<ChatTurn> {
		const lt = options.longTerm;
		const query = lt?.query?.trim() ? lt.query : undefined;
		const [history, found, data, read] = await Promise.all([
			ChatTurn.read(options, options.read.maxTokenLimit, true),
			lt && query ? lt.memory.search(query).catch((error: unknown) => error as Error) : undefined,
			options.data ? readData(options.data) : undefined,
			options.facts ? readFacts(options.facts) : undefined,
		]);
		const f = options.facts && { ...options.facts, model: options.facts.model ?? options.model };
		const facts = f && read ? showFacts(read, f, options.budget) : undefined;
		// Recall takes what the facts leave of the budget: never more than all of it together.
		const room = options.budget - (facts?.tokens ?? 0);
		const recalled = !lt
			? undefined
			: found instanceof Error
				? failedRecall(found)
				: found
					? lt.memory.section(withoutHiddenFacts(found, facts), history, lt.model, room)
					: notRecalled(lt.emptyQuery ?? NO_QUERY);
		const fitted = await ChatTurn.fit(options, history, recalled, facts);
		return new ChatTurn(options, fitted, recalled, data && (await initialized(data)), facts);
	}

	/** The history, with the summary when asked; `refresh` false uses the stored summary, never a call. */
	private static read(options: TurnOptions, maxTokenLimit: number | undefined, refresh: boolean) {
		return options.memory.getHistoryPromptMessages({
			...options.read,
			maxTokenLimit,
			...(options.summary ? { summary: { ...options.summary, refresh } } : {}),
		});
	}

	/** The history again with less room when the facts and recalled sections do not fit beside it. */
	private static async fit(
		options: TurnOptions,
		history: History,
		recalled?: Recalled,
		facts?: ShownFacts,
	) {
		const used = history.tokens + (history.summary?.tokens ?? 0);
		const reserved = (recalled?.tokens ?? 0) + (facts?.tokens ?? 0);
		if ((!recalled && !facts) || used + reserved <= options.budget) return history;
		const again = await ChatTurn.read(options, Math.max(0, options.budget - reserved), false);
		if (history.summary && again.summary)
			again.summary = rereadReport(history.summary, again.summary);
		return again;
	}

	/** What goes before the history: the facts, the recalled section, then the summary of older turns. */
	sections(): string[] {
		return [this.facts?.section, this.recalled?.section, this.history.summary?.section].filter(
			(s): s is string => !!s,
		);
	}

	/**
	 * The model's messages, with the sections in the system message (one system message, first, as
	 * every provider accepts; the summary last, right before the history it continues), then the
	 * history, then the user's message.
	 */
	messages(system: string | undefined, user: PromptMessage['content']): PromptMessage[] {
		const lead = [system, ...this.sections()].filter((s) => s).join('\n\n');
		const messages: PromptMessage[] = [
			...(lead ? [{ role: 'system' as const, content: lead }] : []),
			...this.history.messages,
			{ role: 'user', content: user },
		];
		const counter = new TiktokenCounter(encodingForModel(this.options.model));
		this.sent = requestTokens(counter, messages);
		return messages;
	}

	/**
	 * The history an agent gets, with the sections as one user-role message first: the agent puts it
	 * right after its own system message, and providers such as Anthropic and Google accept a system
	 * message only first.
	 */
	agentHistory(): PromptMessage[] {
		const lead = this.sections().join('\n\n');
		return [...(lead ? [{ role: 'user' as const, content: lead }] : []), ...this.history.messages];
	}

	/**
	 * Appends the turn and writes it. A write that fails is a TurnNotSavedError saying whether the
	 * turn may still have been saved (a timeout is not a refusal: a resend could store it twice).
	 */
	async save(turn: TurnInput): Promise<AddedTurn> {
		const added = await this.options.memory.addMessages(turn);
		try {
			await this.options.memory.flush();
		} catch (error) {
			const message =
				error instanceof StorageTimeoutError
					? `The answer was generated, but saving it to memory timed out, so it may or may not have been saved (the storage may still store it): ${error.message}`
					: `The answer was generated but could not be saved to memory: ${(error as Error).message}`;
			throw new TurnNotSavedError(message, added, { cause: error });
		}
		return added;
	}

	/**
	 * Captures a saved turn into long-term memory (when it captures), with the window's turns a failed
	 * capture missed. A failure is reported (returned, and in `warnings`), never undoes the turn.
	 */
	async capture(turn: CapturedTurn): Promise<CaptureResult | Error | undefined> {
		const lt = this.options.longTerm?.memory;
		if (!lt) return undefined;
		this.captured = await captureTurn(lt, turn, this.history.recentTurns);
		if (this.captured instanceof Error) this.warnings.push(this.captured.message);
		return this.captured;
	}

	/**
	 * After save(): learns facts from the turns the facts have not read yet, once they pass the
	 * threshold (`force`: whatever is unread), and with `index` captures what was learned into the
	 * turn's Memory Base. A failure is reported (returned, and in `warnings`), never undoes the turn.
	 */
	async learn(
		saved: AddedTurn,
		options: { force?: boolean } = {},
	): Promise<LearnResult | Error | undefined> {
		const f = this.options.facts;
		if (!f) return undefined;
		this.learned = await learnTurn(this.options.memory, f, saved, options.force);
		if (this.learned instanceof Error) this.warnings.push(this.learned.message);
		else if (this.learned.error)
			this.warnings.push(`Facts were not learned this turn: ${this.learned.error}`);
		else if (f.index) await this.indexLearned(this.learned);
		return this.learned;
	}

	/** Captures what a learn() added or updated into the long-term Memory Base (a failure is a warning). */
	private async indexLearned(learned: LearnResult): Promise<void> {
		const lt = this.options.longTerm?.memory;
		const facts = [...learned.added, ...learned.updated.map((u) => u.to)];
		if (!lt || facts.length === 0) return;
		for (const input of factCaptures(facts, lt.settings.userId))
			await lt.base.capture(input).catch((error: unknown) => {
				this.warnings.push(
					`Learned facts were not indexed into long-term memory: ${(error as Error).message}`,
				);
			});
	}

	/** What the turn's memories did, for the output. */
	report(): TurnReport {
		const h = this.history;
		const lt = this.options.longTerm?.memory;
		return {
			historyMessages: h.messages.length,
			historyTokens: h.tokens,
			turns: h.turns,
			droppedTurns: h.droppedTurns,
			...(this.sent !== undefined ? { requestTokens: this.sent } : {}),
			...(h.skippedFiles.length ? { skippedFiles: h.skippedFiles } : {}),
			...(h.summary ? { summary: summaryReport(h.summary) } : {}),
			...(lt ? { longTermMemory: lt.report(this.recalled, this.captured) } : {}),
			...(this.options.facts ? { facts: factsReport(this.facts, this.learned) } : {}),
		};
	}
}

/**
 * Captures a saved turn (with the window's `recent` turns a failed capture missed) when the memory
 * captures turns; a failure comes back as an Error saying the next turn makes it up.
 */
export async function captureTurn(
	lt: LongTermMemory,
	turn: CapturedTurn,
	recent: History['recentTurns'] = [],
): Promise<CaptureResult | Error | undefined> {
	if (!lt.settings.capture) return undefined;
	return await lt.captureTurn(turn, recent).catch((error: unknown) => {
		const why = (error as Error).message;
		return new Error(
			`The turn was saved, but not captured into long-term memory (the next turn of this conversation captures it): ${why}`,
		);
	});
}

export interface TurnReport {
	historyMessages: number;
	historyTokens: number;
	turns: number;
	droppedTurns: number;
	/** The whole request as sent (system message, history, the user's message), when messages() made it. */
	requestTokens?: number;
	skippedFiles?: History['skippedFiles'];
	summary?: Record<string, unknown>;
	longTermMemory?: Record<string, unknown>;
	/** What facts did: shown (count, tokens, omitted), and learned this turn (or why not). */
	facts?: Record<string, unknown>;
}

/** The summary's report: its size, what it covers, whether this turn made it, any failure. */
export function summaryReport(report: SummaryReport): Record<string, unknown> {
	return {
		tokens: report.tokens,
		turns: report.turns,
		refreshed: report.refreshed,
		...(report.firstAt ? { firstAt: report.firstAt, lastAt: report.lastAt } : {}),
		unsummarizedTurns: report.unsummarizedTurns,
		...(report.error ? { error: report.error } : {}),
	};
}

/**
 * The report of a read made again with a smaller budget (to leave room for long-term recall) and no
 * summarizing: its summary as now shown, with what the first read did (refreshed, or why not).
 */
export function rereadReport(first: SummaryReport, again: SummaryReport): SummaryReport {
	const error = first.error ?? again.error;
	return { ...again, refreshed: first.refreshed, ...(error ? { error } : {}) };
}
