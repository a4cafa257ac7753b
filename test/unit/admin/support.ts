// Shared by the memory administration tests: turns written the way the nodes write them.
import { ConversationMemory, NodeMemory } from '../../../src/internal';
import type { MemoryOptions, MemoryStorage } from '../../../src/internal';
import { SMALL } from '../store/support';

const counter = { encoding: 'utf8-bytes', count: (t: string) => Buffer.byteLength(t) };

/** Memory options with byte counts and small sealing limits, so a few turns seal. */
export const options = (storage: MemoryStorage): MemoryOptions => ({
	storage,
	tokenCounter: counter,
	log: SMALL,
});

/** `n` turns "q<i>" / "a<i>" with IDs t<i>, in conversation or node scope, of workflow "wf". */
export async function turns(storage: MemoryStorage, n: number, conversation = 'c1', node?: string) {
	const m = node
		? new NodeMemory('wf', conversation, node, options(storage))
		: new ConversationMemory('wf', conversation, options(storage));
	for (let i = 0; i < n; i++) {
		await m.addMessages({ messageId: `t${i}`, userContent: `q${i}`, assistantContent: `a${i}` });
		await m.flush();
	}
	return m;
}

/** The contents of a page of messages, in its order. */
export const contents = (page: { messages: Array<{ message: { content: string } }> }) =>
	page.messages.map((m) => m.message.content);
