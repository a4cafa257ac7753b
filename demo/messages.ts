/** The chat messages of an OpenAI Chat Completions request, as the demo model reads them. */

export interface ChatMessage {
	role: string;
	content?: unknown;
	[k: string]: unknown;
}

/** Text of a message's content, which may be a string or an array of content parts. */
export function contentText(content: unknown): string {
	if (typeof content === 'string') return content;
	if (Array.isArray(content)) {
		return content
			.map((p) => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : ''))
			.join('');
	}
	return '';
}

export function lastUserText(messages: ChatMessage[]): string {
	for (let i = messages.length - 1; i >= 0; i--) {
		if (messages[i].role === 'user') return contentText(messages[i].content);
	}
	return '';
}

/** Text of the tool messages that end the conversation (the results the model is answering from). */
export function trailingToolResults(messages: ChatMessage[]): string[] {
	const results: string[] = [];
	for (let i = messages.length - 1; i >= 0 && messages[i].role === 'tool'; i--)
		results.unshift(contentText(messages[i].content));
	return results;
}
