import type { PromptMessage } from './types';

export interface TextPrefixes {
	humanPrefix?: string;
	aiPrefix?: string;
}

const PART_NOTES = { image_url: '[image]', file: '[file]', audio: '[audio]' } as const;

/** Text of a message for completion-style prompts: text parts kept, other parts shown as "[image]" etc. */
function messageText(message: PromptMessage): string {
	if (typeof message.content === 'string') return message.content;
	return message.content.map((p) => (p.type === 'text' ? p.text : PART_NOTES[p.type])).join('\n');
}

/** "Human: …\nAssistant: …" lines; roles other than user and assistant are skipped. */
export function historyToText(
	messages: readonly PromptMessage[],
	prefixes: TextPrefixes = {},
): string {
	const human = prefixes.humanPrefix ?? 'Human';
	const ai = prefixes.aiPrefix ?? 'Assistant';
	const lines: string[] = [];
	for (const m of messages) {
		if (m.role === 'user') lines.push(`${human}: ${messageText(m)}`);
		else if (m.role === 'assistant') lines.push(`${ai}: ${messageText(m)}`);
	}
	return lines.join('\n');
}
