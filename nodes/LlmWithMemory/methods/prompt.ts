import { inputFileParts } from '../../../src/prompt/files';
import type { ContentPart, PromptMessage } from '../../../src/prompt/types';
import type { ItemInput } from './input';
import type { OpenedMemory } from './memory';

/**
 * Step 2: the model's messages: the system message (the turn's recalled long-term memory and summary
 * after it), the history, then the user's message with its files first. `system` replaces the input's
 * system message (versioned data adds its section).
 */
export function buildPrompt(
	input: ItemInput,
	opened: OpenedMemory | undefined,
	system = input.system,
): PromptMessage[] {
	const user: PromptMessage['content'] = input.files.length
		? [
				...inputFileParts(input.files, { pdfAndAudio: input.options.pdfAndAudio }),
				...(input.prompt ? [{ type: 'text', text: input.prompt } as ContentPart] : []),
			]
		: input.prompt;
	if (opened) return opened.turn.messages(system, user);
	return [
		...(system ? [{ role: 'system' as const, content: system }] : []),
		{ role: 'user', content: user },
	];
}
