import { MemoryError } from '../errors';
import { validateId } from '../keys/ids';
import type { ToolCall } from '../prompt/types';
import type { FileInput } from '../store/blobs';
import type { StoredMessage } from '../store/schema';
import type { AddedTurn, BufferMemory, TurnInput } from './buffer-memory';

/**
 * A chat-history view of a memory, message by message, for callers that hand over messages one at a time
 * or in batches (n8n's AI Agent, Respond to Chat, Chat Memory Manager, LangChain-style chat histories)
 * instead of whole turns. Built on BufferMemory's public API only.
 *
 * Memory stores whole turns (a user message, a tool turn's steps, the final answer), so messages are
 * grouped into turns as they come:
 * - a user message opens a turn; tool calls (an assistant message with `toolCalls`) and tool results
 *   join the open turn; an assistant message without tool calls closes it, and the turn is stored;
 * - a user message that arrives while a turn is open closes that turn first, unanswered;
 * - an assistant message with no open turn is stored as a turn of its own with an empty user message
 *   (a greeting, a question a workflow asks): history replays it as the answer to nothing;
 * - a turn still open when the caller is done (`flushOpen()`) is stored unanswered: it is listed by
 *   getMessages() but, like any unanswered turn, never replayed to a model;
 * - system messages are refused (the document keeps user, assistant and tool messages).
 * Steps are paired before storing: a tool result is kept only for a call of the assistant message before
 * it, a call without a result is dropped, and an assistant message repeated once per call (as n8n's agent
 * writes parallel calls) is kept once, so a stored tool turn always replays as valid call/result pairs.
 */

/**
 * A message as callers hand it over. `id`: the stored message ID it came from, if any (kept when
 * possible). `attachments`: files that came with a user message or a final answer (images in its
 * content), stored with it as files rather than text (a listed message's `files` is only their count).
 */
export type ChatMessage =
	| { role: 'user'; content: string; attachments?: readonly FileInput[]; id?: string }
	| {
			role: 'assistant';
			content: string;
			toolCalls?: readonly ToolCall[];
			attachments?: readonly FileInput[];
			id?: string;
	  }
	| { role: 'tool'; content: string; toolCallId: string; name?: string; id?: string }
	| { role: 'system'; content: string; id?: string };

/** A message as getMessages() lists it: what is stored, plus the open turn (no `id` yet). */
export type ListedMessage = WithoutAttachments<Exclude<ChatMessage, { role: 'system' }>> & {
	/** Number of files stored with the message (their bytes stay in storage). */
	files?: number;
};

type WithoutAttachments<T> = T extends unknown ? Omit<T, 'attachments'> : never;

type Step = NonNullable<TurnInput['steps']>[number];

/** A system message (or any other role memory cannot hold) was handed to a chat history. */
export class UnsupportedMessageError extends MemoryError {
	constructor(readonly role: string) {
		super(
			`A ${role} message cannot be stored in memory: it keeps user, assistant and tool messages. ` +
				(role === 'system'
					? 'Give instructions as the system message of the node that calls the model instead.'
					: ''),
		);
	}
}

/** A turn being assembled from messages. */
export interface OpenTurn {
	user?: Extract<ChatMessage, { role: 'user' }>;
	steps: Array<Extract<ChatMessage, { role: 'assistant' | 'tool' }>>;
}

/** A turn as stored, with its texts (what a long-term memory captures of it). */
export interface StoredTurn extends AddedTurn {
	userContent: string;
	assistantContent: string;
}

/** One turn ready to store, and the message IDs it came with (to keep them when possible). */
export interface GroupedTurn {
	userContent: string;
	userFiles?: readonly FileInput[];
	steps: Step[];
	assistantContent: string;
	assistantFiles?: readonly FileInput[];
	/** The ID the turn would like: the final answer's ID, or the user message's "<id>:user" without the suffix. */
	preferredId?: string;
}

const USER_SUFFIX = ':user';

function sameCalls(a: readonly ToolCall[], b: readonly ToolCall[]): boolean {
	return a.length === b.length && a.every((c, i) => c.id === b[i].id && c.name === b[i].name);
}

/**
 * Pairs a turn's steps: every tool result answers a call of the assistant message before it (by ID, or
 * by tool name when its ID was already answered, which repairs n8n 2.8.4's agent giving every result of
 * parallel calls the first call's ID); results without a call and calls without a result are dropped;
 * an assistant message repeated with the same calls is kept once.
 */
export function pairSteps(
	steps: ReadonlyArray<Extract<ChatMessage, { role: 'assistant' | 'tool' }>>,
): Step[] {
	const out: Step[] = [];
	const answered = new Set<string>();
	let last: { calls: ToolCall[]; content: string; open: ToolCall[] } | undefined;
	for (const s of steps) {
		if (s.role === 'assistant') {
			const calls = (s.toolCalls ?? []).map((c) => ({
				id: c.id,
				name: c.name,
				args: { ...c.args },
			}));
			if (calls.length === 0) continue; // an assistant message without calls is not a step
			if (last && sameCalls(last.calls, calls) && last.content === s.content) continue;
			last = { calls, content: s.content, open: [...calls] };
			out.push({ role: 'assistant', content: s.content, toolCalls: calls });
			continue;
		}
		if (!last) continue; // a result without a call
		let i = last.open.findIndex((c) => c.id === s.toolCallId);
		if (i < 0 && s.name !== undefined) i = last.open.findIndex((c) => c.name === s.name);
		if (i < 0) continue;
		const [call] = last.open.splice(i, 1);
		answered.add(call.id);
		out.push({ role: 'tool', content: s.content, toolCallId: call.id, name: s.name ?? call.name });
	}
	const paired: Step[] = [];
	for (const step of out) {
		if (step.role === 'tool') {
			paired.push(step);
			continue;
		}
		const calls = step.toolCalls.filter((c) => answered.has(c.id));
		if (calls.length) paired.push({ ...step, toolCalls: calls });
	}
	return paired;
}

function closeTurn(
	open: OpenTurn,
	answer?: Extract<ChatMessage, { role: 'assistant' }>,
): GroupedTurn {
	const fromUser = open.user?.id?.endsWith(USER_SUFFIX)
		? open.user.id.slice(0, -USER_SUFFIX.length)
		: undefined;
	return {
		userContent: open.user?.content ?? '',
		...(open.user?.attachments?.length ? { userFiles: open.user.attachments } : {}),
		steps: pairSteps(open.steps),
		assistantContent: answer?.content ?? '',
		...(answer?.attachments?.length ? { assistantFiles: answer.attachments } : {}),
		preferredId: answer?.id ?? fromUser,
	};
}

/**
 * Groups messages into turns (see the module comment). `open` is the turn left open by earlier calls;
 * the result's `open` is the turn still open after these messages (a trailing user message, tool steps).
 */
export function groupTurns(
	messages: readonly ChatMessage[],
	open?: OpenTurn,
): { turns: GroupedTurn[]; open?: OpenTurn } {
	const turns: GroupedTurn[] = [];
	let current: OpenTurn | undefined = open
		? { user: open.user, steps: [...open.steps] }
		: undefined;
	for (const m of messages) {
		if (m.role === 'system') throw new UnsupportedMessageError('system');
		if (m.role === 'user') {
			if (current) turns.push(closeTurn(current));
			current = { user: m, steps: [] };
		} else if (m.role === 'tool' || (m.role === 'assistant' && m.toolCalls?.length)) {
			current ??= { steps: [] };
			current.steps.push(m);
		} else if (m.role === 'assistant') {
			turns.push(closeTurn(current ?? { steps: [] }, m));
			current = undefined;
		} else {
			throw new UnsupportedMessageError(String((m as { role: unknown }).role));
		}
	}
	return { turns, open: current };
}

function listed(m: StoredMessage): ListedMessage {
	const files = m.files.length ? { files: m.files.length } : {};
	if (m.role === 'tool')
		return {
			role: 'tool',
			content: m.content,
			toolCallId: m.tool_call_id as string,
			...(m.name !== undefined ? { name: m.name } : {}),
			id: m.message_id,
			...files,
		};
	if (m.role === 'assistant' && m.tool_calls?.length)
		return {
			role: 'assistant',
			content: m.content,
			toolCalls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, args: { ...c.args } })),
			id: m.message_id,
			...files,
		};
	return { role: m.role, content: m.content, id: m.message_id, ...files };
}

/** A placeholder the grouping stored: the empty user message of a lone answer, the empty answer of an unanswered turn. */
function isPlaceholder(m: StoredMessage): boolean {
	return (
		m.content === '' &&
		m.files.length === 0 &&
		(m.role === 'user' || (m.role === 'assistant' && !m.tool_calls?.length))
	);
}

export class ChatHistory {
	private open?: OpenTurn;

	constructor(readonly memory: BufferMemory) {}

	/** Whether a turn is open (a user message or tool steps waiting for their answer). */
	get hasOpenTurn(): boolean {
		return this.open !== undefined;
	}

	/**
	 * The conversation: the newest thread, oldest first, with tool steps, then the open turn's messages.
	 * Lone answers are listed without their empty user message; unanswered turns without an answer.
	 */
	async getMessages(): Promise<ListedMessage[]> {
		const out: ListedMessage[] = [];
		for (const m of await this.memory.thread()) if (!isPlaceholder(m)) out.push(listed(m));
		if (this.open?.user) out.push({ role: 'user', content: this.open.user.content });
		for (const s of this.open?.steps ?? [])
			out.push(
				s.role === 'tool'
					? {
							role: 'tool',
							content: s.content,
							toolCallId: s.toolCallId,
							...(s.name !== undefined ? { name: s.name } : {}),
						}
					: {
							role: 'assistant',
							content: s.content,
							...(s.toolCalls ? { toolCalls: s.toolCalls } : {}),
						},
			);
		return out;
	}

	/**
	 * Appends messages in order. Turns they complete are stored (one flush for the call); a trailing user
	 * message or tool steps stay open for the next call or flushOpen(). Returns the turns stored.
	 */
	async addMessages(messages: readonly ChatMessage[]): Promise<StoredTurn[]> {
		const grouped = groupTurns(messages, this.open);
		const added = await this.store(grouped.turns);
		this.open = grouped.open;
		return added;
	}

	/** Stores one whole turn (closing an open turn first, unanswered). */
	async saveTurn(turn: Omit<TurnInput, 'messageId' | 'parentMessageId'>): Promise<StoredTurn> {
		const turns: GroupedTurn[] = this.open ? [closeTurn(this.open)] : [];
		turns.push({
			userContent: turn.userContent,
			userFiles: turn.userFiles,
			steps: pairSteps(toMessages(turn.steps ?? [])),
			assistantContent: turn.assistantContent,
			assistantFiles: turn.assistantFiles,
		});
		const added = await this.store(turns);
		this.open = undefined;
		return added[added.length - 1];
	}

	/** Stores the open turn, unanswered (listed, never replayed to a model). Undefined when none is open. */
	async flushOpen(): Promise<StoredTurn | undefined> {
		if (!this.open) return undefined;
		const [added] = await this.store([closeTurn(this.open)]);
		this.open = undefined;
		return added;
	}

	/** Deletes the memory's document (every thread) and forgets the open turn. */
	async clear(): Promise<void> {
		this.open = undefined;
		await this.memory.clear();
	}

	private async store(turns: readonly GroupedTurn[]): Promise<StoredTurn[]> {
		if (turns.length === 0) return [];
		// Only IDs handed back need a look-up (bounded at any length); fresh turns get new UUIDs.
		const wanted = turns.flatMap((t) =>
			t.preferredId === undefined ? [] : [t.preferredId, `${t.preferredId}${USER_SUFFIX}`],
		);
		const taken = wanted.length ? await this.memory.takenIds(wanted) : new Set<string>();
		const added: StoredTurn[] = [];
		for (const t of turns) {
			const messageId = this.usableId(t.preferredId, taken);
			const turn = await this.memory.addMessages({
				userContent: t.userContent,
				userFiles: t.userFiles,
				steps: t.steps,
				assistantContent: t.assistantContent,
				assistantFiles: t.assistantFiles,
				...(messageId ? { messageId } : {}),
			});
			for (const id of [turn.messageId, turn.userMessageId]) taken.add(id);
			added.push({ ...turn, userContent: t.userContent, assistantContent: t.assistantContent });
		}
		await this.memory.flush();
		return added;
	}

	/** A message ID handed back (e.g. by Chat Memory Manager re-adding what it listed) is kept when still free. */
	private usableId(id: string | undefined, taken: ReadonlySet<string>): string | undefined {
		if (id === undefined) return undefined;
		try {
			validateId('message_id', id);
		} catch {
			return undefined;
		}
		return taken.has(id) || taken.has(`${id}${USER_SUFFIX}`) ? undefined : id;
	}
}

function toMessages(
	steps: readonly Step[],
): Array<Extract<ChatMessage, { role: 'assistant' | 'tool' }>> {
	return steps.map((s) =>
		s.role === 'assistant'
			? { role: 'assistant', content: s.content, toolCalls: s.toolCalls }
			: {
					role: 'tool',
					content: s.content,
					toolCallId: s.toolCallId,
					...(s.name !== undefined ? { name: s.name } : {}),
				},
	);
}
