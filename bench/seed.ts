// A linear thread of stored messages with real token counts, built directly (no turns appended), for
// the benchmarks that need long conversations.
import type { StoredMessage, TokenCounter } from '../src/internal';

/** n messages (n/2 turns): `text(i)` for message i, each turn a second after the last. */
export function seedMessages(
	n: number,
	text: (i: number) => string,
	counter: Pick<TokenCounter, 'count'>,
): StoredMessage[] {
	const out: StoredMessage[] = [];
	let parent: string | null = null;
	for (let i = 0; i < n; i += 2) {
		const created_at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
		for (const [id, role, p] of [
			[`t${i}:user`, 'user', parent],
			[`t${i}`, 'assistant', `t${i}:user`],
		] as const) {
			const content = text(role === 'user' ? i : i + 1);
			out.push({
				message_id: id,
				parent_message_id: p,
				role,
				content,
				files: [],
				token_count: counter.count(content),
				created_at,
			});
		}
		parent = `t${i}`;
	}
	return out;
}
