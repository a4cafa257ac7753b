import type { IExecuteFunctions } from 'n8n-workflow';

import { DEFAULT_MAX_TOKEN_LIMIT } from '../../../src/history/truncate';
import type { PdfAndAudio } from '../../../src/prompt/file-kinds';
import type { FileInput } from '../../../src/store/blobs';
import type { LongTermSettings } from '../../../src/turn/long-term';
import type { VersionedSettings } from '../../../src/turn/versioned';
import { nodeError } from '../../shared/errors';
import { idParameter } from '../../shared/ids';
import { missingSessionIdHelp } from '../../shared/parameters';
import { expireAfterDaysOf } from '../../shared/retention';
import { factsSettings } from '../../shared/facts/facts';
import type { NodeFactsSettings } from '../../shared/facts/facts';
import { longTermSettings } from '../../shared/long-term/long-term';
import { summarySettings } from '../../shared/summary';
import type { SummarySettings } from '../../shared/summary';
import type { MemoryMode } from '../description';
import { itemFiles } from './binary-files';
import { versionedSettings } from './versioned-data';

export interface Options {
	maxHistoryTokens?: number;
	window?: number;
	parentMessageId?: string;
	messageId?: string;
	startNewThread?: boolean;
	requireSessionId?: boolean;
	binaryPropertyNames?: string;
	maxTokensPerFile?: number;
	pdfAndAudio?: PdfAndAudio;
	gzip?: boolean;
	historyOverflow?: string;
	summaryThreshold?: number;
	summaryMaxTokens?: number;
}

/** Everything one item asks for, read and checked before anything is read from memory. */
export interface ItemInput {
	mode: MemoryMode;
	prompt: string;
	system: string;
	options: Options;
	files: FileInput[];
	conversationId?: string;
	/** What to do about a missing session ID, for the chosen source (memory modes only). */
	missingIdHelp?: string;
	messageId?: string;
	/** undefined: the newest turn; null: the root (Start New Thread); else an explicit parent. */
	parentMessageId?: string | null;
	/** Versioned Data settings, when the option is on (memory modes only). */
	versioned?: VersionedSettings;
	/** Long-Term Memory settings, when the option is on (memory modes only). */
	longTerm?: LongTermSettings;
	/** Remember Facts settings, when the option is on (memory modes only). */
	facts?: NodeFactsSettings;
	/** Summary settings with Summarize Older Turns (memory modes only). */
	summary?: SummarySettings;
	/** Expire After (Days): stored with the chat memory, versioned data and captures this item writes. */
	expireAfterDays?: number;
}

/** An item with Versioned Data on. */
export type VersionedInput = ItemInput & { versioned: VersionedSettings };

/**
 * Step 1: the item's prompt, settings, files and IDs. Node mode without a session ID fails here, and
 * so does Conversation mode when Require Session ID is on.
 */
export async function resolveInput(ctx: IExecuteFunctions, i: number): Promise<ItemInput> {
	const mode = ctx.getNodeParameter('memoryMode', i, 'conversation') as MemoryMode;
	const prompt = ctx.getNodeParameter('text', i, '') as string;
	if (typeof prompt !== 'string' || prompt.trim() === '')
		throw nodeError(
			ctx,
			'No prompt specified',
			i,
			'Expected a \'chatInput\' field from a Chat Trigger, or set the prompt source to "Define Below".',
		);
	const system = ctx.getNodeParameter('systemMessage', i, '') as string;
	const options = ctx.getNodeParameter('options', i, {}) as Options;
	const files = await itemFiles(ctx, i, options.binaryPropertyNames, options.pdfAndAudio ?? 'text');
	if (mode === 'none') return { mode, prompt, system, options, files };

	const conversationId = idParameter(ctx, 'conversationId', i, 'Session ID');
	const missingIdHelp = missingSessionIdHelp(ctx, i);
	if (!conversationId && mode === 'node')
		throw nodeError(ctx, 'Node memory needs a session ID, but none was found', i, missingIdHelp);
	if (!conversationId && options.requireSessionId === true)
		throw nodeError(ctx, 'No session ID found', i, missingIdHelp);
	const messageId = idParameter(ctx, 'options.messageId', i, 'Message ID');
	const parentMessageId =
		options.startNewThread === true
			? null
			: idParameter(ctx, 'options.parentMessageId', i, 'Parent Message ID');
	const expireAfterDays = expireAfterDaysOf(ctx, i);
	const versioned = versionedSettings(ctx, i, expireAfterDays);
	const longTerm = longTermSettings(ctx, i);
	const facts = factsSettings(ctx, i, longTerm);
	const budget = options.maxHistoryTokens ?? DEFAULT_MAX_TOKEN_LIMIT;
	const summary = summarySettings(ctx, i, 'options.historyOverflow', budget);
	return {
		mode,
		prompt,
		system,
		options,
		files,
		conversationId,
		missingIdHelp,
		messageId,
		parentMessageId,
		versioned,
		longTerm,
		facts,
		summary,
		expireAfterDays,
	};
}
