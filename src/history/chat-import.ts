// Copying a chat kept by another memory (n8n's Postgres, Redis, MongoDB or Simple Memory: any LangChain
// chat history) into one of ours, so that a re-run adds nothing twice. Each source turn gets an ID
// derived from the source session, the turn's position in it and its content; a turn whose ID is stored
// already is recognised, so a re-run copies only what the source gained since the last one.
import { createHash } from 'node:crypto';
import type { Hash } from 'node:crypto';

import { MemoryError } from '../errors';
import { validateId } from '../keys/ids';
import type { FileInput } from '../store/blobs';
import type { BufferMemory } from './buffer-memory';
import { pairSteps } from './chat-history';
import type { ChatMessage } from './chat-history';

/** A source message the caller could not read as a chat message; it keeps its place in the list. */
export interface UnknownMessage {
	role: 'unknown';
	/** What it was, for the report (e.g. "function", "generic", "number"). */
	type: string;
}

/** A message of the source session, oldest first, as the caller read it. */
export type SourceMessage = ChatMessage | UnknownMessage;

/** Why source messages were not copied. */
export type ImportSkipReason =
	/** Memory keeps user, assistant and tool messages: instructions belong to the calling node. */
	| 'systemMessage'
	/** Not a user, assistant, tool or system message. */
	| 'unknownMessage'
	/** A tool call without its result, a result without its call, or one tool-call message repeated. */
	| 'unpairedToolStep'
	/** The session's last turn has no answer yet: a later import copies it once it is answered. */
	| 'waitingForAnswer'
	/** A turn missing from memory although later turns of the session are there: it would land out of order. */
	| 'beforeImported';

/** What an import did with one session: every message read is imported, already there, or skipped. */
export interface ChatImportReport {
	/** Messages the source holds for the session. */
	read: number;
	/** Messages copied now. */
	imported: number;
	/** Messages an earlier import copied (their turn is stored with its derived ID). */
	alreadyThere: number;
	/** Messages not copied; `skippedReasons` says why, with a count per reason. */
	skipped: number;
	skippedReasons: Partial<Record<ImportSkipReason, number>>;
	/** Turns (a user message, its tool steps and the answer) copied now, and found stored already. */
	turnsImported: number;
	turnsAlreadyThere: number;
}

/** The source did not hand over a list of messages. */
export class InvalidImportSourceError extends MemoryError {
	constructor(readonly got: string) {
		super(`The chat memory gave no list of messages (got ${got})`);
	}
}

/** Prefix of the turn IDs an import derives: `import-` and 32 hex digits of a SHA-256. */
export const IMPORTED_TURN_PREFIX = 'import-';

type UserMessage = Extract<ChatMessage, { role: 'user' }>;
type AnswerMessage = Extract<ChatMessage, { role: 'assistant' }>;
type StepMessage = Extract<ChatMessage, { role: 'assistant' | 'tool' }>;

/** One turn of the source: where it starts, what it holds, and whether it is still waiting for its answer. */
interface SourceTurn {
	start: number;
	user?: UserMessage;
	steps: StepMessage[];
	answer?: AnswerMessage;
	/** The last turn, without an answer: it may still get one. */
	open: boolean;
}

const size = (t: SourceTurn) => (t.user ? 1 : 0) + t.steps.length + (t.answer ? 1 : 0);

/**
 * The source's turns, grouped as ChatHistory groups messages: a user message opens a turn, tool calls
 * and results join it, an assistant message without tool calls closes it (a user message arriving first
 * closes it unanswered). Messages memory cannot hold are counted in `skip`.
 */
function sourceTurns(
	messages: readonly SourceMessage[],
	skip: (reason: ImportSkipReason, count: number) => void,
): SourceTurn[] {
	const turns: SourceTurn[] = [];
	let current: SourceTurn | undefined;
	messages.forEach((m, position) => {
		if (m.role === 'unknown') return skip('unknownMessage', 1);
		if (m.role === 'system') return skip('systemMessage', 1);
		if (m.role === 'user') {
			if (current) turns.push(current);
			current = { start: position, user: m, steps: [], open: false };
			return;
		}
		current ??= { start: position, steps: [], open: false };
		if (m.role === 'tool' || m.toolCalls?.length) return void current.steps.push(m);
		current.answer = m;
		turns.push(current);
		current = undefined;
	});
	if (current) turns.push({ ...current, open: true });
	return turns;
}

function hashFiles(hash: Hash, files: readonly FileInput[] | undefined): void {
	for (const f of files ?? []) {
		hash.update(JSON.stringify([f.transferMethod, f.name, f.mimeType]));
		if (f.transferMethod === 'remote_url') hash.update(f.url);
		else hash.update(f.data);
	}
}

/** The turn's ID: the source session, the turn's position and everything it says. */
function turnId(sessionId: string, turn: SourceTurn): string {
	const hash = createHash('sha256');
	hash.update(JSON.stringify([sessionId, turn.start, turn.user?.content ?? null]));
	hashFiles(hash, turn.user?.attachments);
	for (const s of turn.steps)
		hash.update(
			JSON.stringify(
				s.role === 'tool'
					? ['tool', s.content, s.toolCallId, s.name ?? null]
					: ['assistant', s.content, (s.toolCalls ?? []).map((c) => [c.id, c.name, c.args])],
			),
		);
	hash.update(JSON.stringify(['answer', turn.answer?.content ?? null]));
	hashFiles(hash, turn.answer?.attachments);
	return `${IMPORTED_TURN_PREFIX}${hash.digest('hex').slice(0, 32)}`;
}

function emptyReport(read: number): ChatImportReport {
	return {
		read,
		imported: 0,
		alreadyThere: 0,
		skipped: 0,
		skippedReasons: {},
		turnsImported: 0,
		turnsAlreadyThere: 0,
	};
}

/** A turn to copy: its ID, its steps paired, and how many source messages it copies. */
interface Planned {
	id: string;
	turn: SourceTurn;
	steps: ReturnType<typeof pairSteps>;
	messages: number;
}

/** Sorts every turn into already there, skipped (with why) or to copy, counting messages as it goes. */
function plan(
	turns: readonly SourceTurn[],
	ids: readonly string[],
	taken: ReadonlySet<string>,
	report: ChatImportReport,
	skip: (reason: ImportSkipReason, count: number) => void,
): Planned[] {
	const lastTaken = ids.reduce((last, id, k) => (taken.has(id) ? k : last), -1);
	const out: Planned[] = [];
	turns.forEach((turn, k) => {
		if (turn.open && !taken.has(ids[k]) && k > lastTaken)
			return skip('waitingForAnswer', size(turn));
		const steps = pairSteps(turn.steps);
		const dropped = turn.steps.length - steps.length;
		if (dropped > 0) skip('unpairedToolStep', dropped);
		const messages = size(turn) - dropped;
		if (taken.has(ids[k])) {
			report.alreadyThere += messages;
			report.turnsAlreadyThere++;
		} else if (k < lastTaken) skip('beforeImported', messages);
		else out.push({ id: ids[k], turn, steps, messages });
	});
	return out;
}

/**
 * Copies a source session's messages into `memory`, in order, with roles and tool steps (an assistant
 * message's tool calls, each tool result's call ID), as whole turns appended after what the memory
 * holds, in one write. A turn copied by an earlier import is recognised by its derived ID and not copied
 * again, so a re-run copies only what the source gained since (nothing at all when it gained nothing:
 * then nothing is written). The last turn is copied only once it has its answer.
 */
export async function importChat(
	memory: BufferMemory,
	source: { sessionId: string; messages: readonly SourceMessage[] },
): Promise<ChatImportReport> {
	const sessionId = validateId('session_id', source.sessionId);
	if (!Array.isArray(source.messages))
		throw new InvalidImportSourceError(source.messages === null ? 'null' : typeof source.messages);
	const report = emptyReport(source.messages.length);
	const skip = (reason: ImportSkipReason, count: number) => {
		report.skipped += count;
		report.skippedReasons[reason] = (report.skippedReasons[reason] ?? 0) + count;
	};
	const turns = sourceTurns(source.messages, skip);
	const ids = turns.map((t) => turnId(sessionId, t));
	const taken = ids.length > 0 ? await memory.takenIds(ids) : new Set<string>();
	const planned = plan(turns, ids, taken, report, skip);
	for (const { id, turn, steps } of planned)
		await memory.addMessages({
			messageId: id,
			userContent: turn.user?.content ?? '',
			userFiles: turn.user?.attachments,
			steps,
			assistantContent: turn.answer?.content ?? '',
			assistantFiles: turn.answer?.attachments,
		});
	if (planned.length > 0) await memory.flush();
	report.imported = planned.reduce((n, p) => n + p.messages, 0);
	report.turnsImported = planned.length;
	return report;
}
