import type { StoredMessage } from '../../src/internal';

let clock = Date.parse('2026-01-07T10:00:00Z');

/** A stored message for tests; token_count defaults to 10. */
export function msg(
	id: string,
	parent: string | null,
	role: 'user' | 'assistant' = 'user',
	content = `content of ${id}`,
	tokens = 10,
): StoredMessage {
	clock += 1000;
	return {
		message_id: id,
		parent_message_id: parent,
		role,
		content,
		files: [],
		token_count: tokens,
		created_at: new Date(clock).toISOString(),
	};
}

/** A linear chain of n turns (user u{i}, assistant a{i}), each message costing `tokens`. */
export function linearTurns(n: number, tokens = 10): StoredMessage[] {
	const out: StoredMessage[] = [];
	let parent: string | null = null;
	for (let i = 1; i <= n; i++) {
		out.push(msg(`u${i}`, parent, 'user', `question ${i}`, tokens));
		out.push(msg(`a${i}`, `u${i}`, 'assistant', `answer ${i}`, tokens));
		parent = `a${i}`;
	}
	return out;
}

export const ids = (messages: readonly StoredMessage[]) => messages.map((m) => m.message_id);
