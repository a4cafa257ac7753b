// The tokens of a request as sent: each message's text counted exactly, with the framing the chat
// format adds per message and the few tokens that prime the reply; images and files at the estimates
// the history budget uses for them.
import type { TokenCounter } from '../tokens/tokens';
import { IMAGE_TOKEN_ESTIMATE } from './files';
import type { ContentPart, PromptMessage } from './types';

/**
 * What a message costs beyond its text once sent: the chat format wraps each message in a few tokens
 * of its own (role and separators: 3 to 4 in OpenAI's format). The history budget counts them, so it
 * holds for what the model receives, not only for the messages' text.
 */
export const MESSAGE_FRAMING_TOKENS = 4;

/** Tokens the model's reply is primed with after the last message (OpenAI's chat format). */
const REPLY_PRIMING_TOKENS = 3;

function partTokens(counter: Pick<TokenCounter, 'count'>, part: ContentPart): number {
	if (part.type === 'text') return counter.count(part.text);
	if (part.type === 'image_url') return IMAGE_TOKEN_ESTIMATE;
	// A PDF or audio part: about 4 bytes of base64 per token, as a plain estimate.
	return Math.ceil(part.data.length / 4);
}

/** The tokens of `messages` as a chat model receives them (tool calls counted as their JSON). */
export function requestTokens(
	counter: Pick<TokenCounter, 'count'>,
	messages: readonly PromptMessage[],
): number {
	let n = REPLY_PRIMING_TOKENS;
	for (const m of messages) {
		n += MESSAGE_FRAMING_TOKENS;
		n += typeof m.content === 'string' ? counter.count(m.content) : 0;
		if (typeof m.content !== 'string') for (const p of m.content) n += partTokens(counter, p);
		if (m.tool_calls?.length) n += counter.count(JSON.stringify(m.tool_calls));
	}
	return n;
}
