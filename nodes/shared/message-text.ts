/**
 * The text of message content (LangChain's string, or array of content parts): string parts and text
 * parts joined; other parts (tool_use blocks, images) add nothing. Undefined when the content is
 * neither a string nor an array: each caller decides what that becomes.
 */
export function messageText(content: unknown): string | undefined {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) return content.map(partText).join('');
	return undefined;
}

function partText(part: unknown): string {
	if (typeof part === 'string') return part;
	const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
	return type === 'text' && typeof text === 'string' ? text : '';
}

/** Text of a chat model reply: a string, an AIMessage with string content, or content parts. */
export function replyText(reply: unknown): string {
	const text =
		typeof reply === 'string' ? reply : messageText((reply as { content?: unknown })?.content);
	if (text === undefined) throw new Error('The model returned a reply without text content');
	return text;
}
