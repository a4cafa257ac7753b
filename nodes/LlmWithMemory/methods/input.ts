import type { IExecuteFunctions } from 'n8n-workflow';

import type { FileInput, PdfAndAudio } from '../../../src';
import { nodeError } from '../../shared/errors';
import { idParameter } from '../../shared/ids';
import { longTermSettings } from '../../shared/long-term/long-term';
import type { LongTermSettings } from '../../shared/long-term/long-term';
import type { MemoryMode } from '../description';
import { itemFiles } from './binary-files';
import { versionedSettings } from './versioned-data';
import type { VersionedSettings } from './versioned-data';

export interface Options {
	maxHistoryTokens?: number;
	window?: number;
	parentMessageId?: string;
	messageId?: string;
	startNewThread?: boolean;
	binaryPropertyNames?: string;
	maxTokensPerFile?: number;
	pdfAndAudio?: PdfAndAudio;
	gzip?: boolean;
}

/** Everything one item asks for, read and checked before anything is read from memory. */
export interface ItemInput {
	mode: MemoryMode;
	prompt: string;
	system: string;
	options: Options;
	files: FileInput[];
	conversationId?: string;
	messageId?: string;
	/** undefined: the newest turn; null: the root (Start New Thread); else an explicit parent. */
	parentMessageId?: string | null;
	/** Versioned Data settings, when the option is on (memory modes only). */
	versioned?: VersionedSettings;
	/** Long-Term Memory settings, when the option is on (memory modes only). */
	longTerm?: LongTermSettings;
}

/** An item with Versioned Data on. */
export type VersionedInput = ItemInput & { versioned: VersionedSettings };

export const MISSING_ID_HELP =
	'Connect a Chat Trigger (it sends a sessionId), or set "Conversation ID" to "Define Below" and give an expression such as {{ $json.userId }}.';

/** Step 1: the item's prompt, settings, files and IDs. Node mode without a conversation ID fails here. */
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

	const conversationId = idParameter(ctx, 'conversationId', i, 'Conversation ID');
	if (mode === 'node' && !conversationId)
		throw nodeError(
			ctx,
			'Node memory needs a conversation ID, but none was found',
			i,
			MISSING_ID_HELP,
		);
	const messageId = idParameter(ctx, 'options.messageId', i, 'Message ID');
	const parentMessageId =
		options.startNewThread === true
			? null
			: idParameter(ctx, 'options.parentMessageId', i, 'Parent Message ID');
	const versioned = versionedSettings(ctx, i);
	const longTerm = longTermSettings(ctx, i);
	return {
		mode,
		prompt,
		system,
		options,
		files,
		conversationId,
		messageId,
		parentMessageId,
		versioned,
		longTerm,
	};
}
