import { inputFileParts } from '../../../src';
import type { ContentPart, History, PromptMessage } from '../../../src';
import type { ItemInput } from './input';

/**
 * Step 2: system message (with the recalled long-term memory and the summary of older turns after it:
 * one system message, first, as every provider accepts; the summary last, right before the history it
 * continues), history, then the user's message with its files first.
 */
export function buildPrompt(
	input: ItemInput,
	history: History | undefined,
	recalled?: string,
): PromptMessage[] {
	const system = [input.system, recalled, history?.summary?.section].filter((s) => s).join('\n\n');
	const userContent: PromptMessage['content'] = input.files.length
		? [
				...inputFileParts(input.files, { pdfAndAudio: input.options.pdfAndAudio }),
				...(input.prompt ? [{ type: 'text', text: input.prompt } as ContentPart] : []),
			]
		: input.prompt;
	return [
		...(system ? [{ role: 'system' as const, content: system }] : []),
		...(history?.messages ?? []),
		{ role: 'user', content: userContent },
	];
}
