import { NodeConnectionTypes } from 'n8n-workflow';
import type { IExecuteFunctions } from 'n8n-workflow';

import type { SourceMessage } from '../../../../src/history/chat-import';
import { toChatMessage } from '../../../LlmMemoryStore/methods/messages';
import { asNodeError, nodeError } from '../../../shared/errors';

/**
 * Reading a session from the memory sub-node on the Chat Memory input. n8n calls the sub-node's
 * supplyData with the item's index (n8n 2.8 and 2.40 alike), so its Session ID (Key) expression is
 * evaluated against this node's input item: one session per item. The memory is LangChain's: its
 * `chatHistory.getMessages()` lists every stored message, oldest first (the context window applies
 * only to what an agent loads).
 */

/** A chat history as n8n's memory sub-nodes hold one (LangChain's BaseChatMessageHistory), duck-typed. */
interface ChatHistoryLike {
	getMessages(): Promise<unknown>;
	/** Postgres, Redis and MongoDB Chat Memory: the session (storage key) it reads. */
	sessionId?: unknown;
}

/** What the sub-node gave for an item: the memory's node, the session it reads (when it tells) and its messages. */
export interface ChatMemorySource {
	node: string | null;
	session: string | null;
	messages: unknown;
}

const NO_MEMORY =
	'Connect the memory that holds the chat (n8n’s Postgres, Redis or MongoDB Chat Memory, Simple Memory, …) to the Chat Memory input, set up as in the workflow that wrote the chat: same credentials, table or key prefix, and a Session ID (Key) that gives this item’s session. As an AI Agent tool this node has no such input.';

const hasGetMessages = (v: unknown): v is ChatHistoryLike =>
	typeof (v as ChatHistoryLike | null)?.getMessages === 'function';

/** The chat history of what is connected: a memory's `chatHistory`, or a chat history itself. */
function historyOf(connected: unknown): ChatHistoryLike | undefined {
	const history = (connected as { chatHistory?: unknown } | null)?.chatHistory;
	if (hasGetMessages(history)) return history;
	return hasGetMessages(connected) ? connected : undefined;
}

async function connectedMemory(ctx: IExecuteFunctions, i: number): Promise<unknown> {
	let connected: unknown;
	try {
		connected = await ctx.getInputConnectionData(NodeConnectionTypes.AiMemory, i);
	} catch (error) {
		// No memory connected (n8n: "… must be connected", or no such input in the tool variant).
		const message = (error as Error)?.message ?? '';
		if (/must be connected|does not have input of type/i.test(message))
			throw nodeError(ctx, 'No chat memory is connected', i, NO_MEMORY);
		throw asNodeError(ctx, error, i); // the sub-node's own ("Error in sub-node …", e.g. an empty Key)
	}
	const memory = Array.isArray(connected) ? connected[0] : connected;
	if (memory === undefined || memory === null)
		throw nodeError(ctx, 'No chat memory is connected', i, NO_MEMORY);
	return memory;
}

/** n8n 2.x appends `__<memory node name>` to a session ID its memory nodes take from the input. */
const scopedTo = (sessionId: string, node: string) =>
	`${sessionId}__${node.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/**
 * The session the memory reads, checked against the one this item imports: a memory bound to another
 * session would copy one session's chat into another. Only memories that tell their session (Postgres,
 * Redis and MongoDB Chat Memory) can be checked; Simple Memory cannot.
 */
function checkedSession(
	ctx: IExecuteFunctions,
	i: number,
	history: ChatHistoryLike,
	node: string | null,
	sessionId: string,
): string | null {
	const bound = history.sessionId;
	if (typeof bound !== 'string') return null;
	if (bound === sessionId || (node !== null && bound === scopedTo(sessionId, node))) return bound;
	throw nodeError(
		ctx,
		`The chat memory${node ? ` "${node}"` : ''} reads session "${bound}" for this item, not "${sessionId}"`,
		i,
		'The memory reads the session its own Session ID (Key) gives for each input item. Give it the same value as this node’s Session ID, e.g. Define Below with Key {{ $json.sessionId }}, so that each item’s session is read and imported under its own ID.',
	);
}

/** The connected memory's chat for this item, after checking it reads the item's session where it can. */
export async function readChatMemory(
	ctx: IExecuteFunctions,
	i: number,
	sessionId: string,
): Promise<ChatMemorySource> {
	const connected = await connectedMemory(ctx, i);
	const history = historyOf(connected);
	if (!history)
		throw nodeError(
			ctx,
			'The node on the Chat Memory input has no chat history to read',
			i,
			'Connect a memory sub-node: one whose memory has a chat history (chatHistory.getMessages()), as every n8n chat memory does.',
		);
	const [parent] = ctx.getParentNodes(ctx.getNode().name, {
		connectionType: NodeConnectionTypes.AiMemory,
		depth: 1,
	});
	const node = parent?.name ?? null;
	const session = checkedSession(ctx, i, history, node, sessionId);
	return { node, session, messages: await history.getMessages() };
}

/** A message as the engine takes it: a user, assistant, tool or system message, or an unknown one. */
export function sourceMessage(message: unknown): SourceMessage {
	try {
		return toChatMessage(message);
	} catch {
		const m = message as { getType?: () => unknown; type?: unknown; role?: unknown } | null;
		let type: unknown = m === null ? 'null' : typeof m;
		if (typeof m?.getType === 'function') type = m.getType();
		else if (m && typeof m === 'object') type = m.type ?? m.role ?? 'object';
		return { role: 'unknown', type: String(type) };
	}
}
