import { inputFileParts } from '../../../src';
import type { ContentPart, History, PromptMessage } from '../../../src';
import type { ItemInput } from './input';

/** Step 2: system message, history, then the user's message with its files first. */
export function buildPrompt(input: ItemInput, history: History | undefined): PromptMessage[] {
	const userContent: PromptMessage['content'] = input.files.length
		? [
				...inputFileParts(input.files),
				...(input.prompt ? [{ type: 'text', text: input.prompt } as ContentPart] : []),
			]
		: input.prompt;
	return [
		...(input.system ? [{ role: 'system' as const, content: input.system }] : []),
		...(history?.messages ?? []),
		{ role: 'user', content: userContent },
	];
}
