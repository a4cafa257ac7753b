// The thread a new turn's history is read from, and that history as model input: shared by the plain
// read (whole turns under a budget) and the read with a summary of older turns.
import type { FileOptions } from '../prompt/file-kinds';
import type { SkippedFile } from '../prompt/files';
import { storedMessagesToPrompt } from '../prompt/stored';
import type { ImageDetail, PromptMessage } from '../prompt/types';
import type { MemoryStorage } from '../store/storage';
import type { TokenCounter } from '../tokens/tokens';
import type { ThreadLoader, ThreadSpan } from './thread';
import type { HistorySelection } from './truncate';

/** What the summary of older turns did for this read (see SummaryOptions). */
export interface SummaryReport {
	/** The marked section to put before the history; '' when there is none. */
	section: string;
	/** Its tokens (they count against the history budget). */
	tokens: number;
	/** Turns it covers. */
	turns: number;
	/** Whether this read made a new summary (a call of the summarizer). */
	refreshed: boolean;
	/** When the first and the last summarized message were stored. */
	firstAt?: string;
	lastAt?: string;
	/** The ID of the last message it covers. */
	boundary?: string;
	/** Turns that no longer fit and are not summarized yet (they wait for the next summary). */
	unsummarizedTurns: number;
	unsummarizedTokens: number;
	/** Why there is no new (or no) summary this time; the turn runs without it. */
	error?: string;
}

export interface History {
	messages: PromptMessage[];
	/** The stored ID of each message, in the same order (what a recall leaves out). */
	messageIds: string[];
	tokens: number;
	turns: number;
	droppedTurns: number;
	skippedFiles: SkippedFile[];
	/** Where the thread was read from: the parent of the turn being generated (null: the root). */
	parentMessageId: string | null;
	/** With a summary of older turns (HistoryOptions.summary): what it is and what it did. */
	summary?: SummaryReport;
	/** The window's newest turns (at most RECENT_TURNS) as said: what long-term memory's capture catches up on. */
	recentTurns: RecentTurn[];
}

/** A turn of the window: the user's message and the final answer, with their IDs and time. */
export interface RecentTurn {
	userMessageId: string;
	userText: string;
	/** The final answer's ID (the turn's message ID). */
	messageId: string;
	answer: string;
	/** When the answer was stored. */
	at: string;
}

/** Turns a History lists in recentTurns. */
export const RECENT_TURNS = 8;

/** The newest turns of a selection, as RecentTurn (a turn with no answer is left out). */
function recentOf(turns: HistorySelection['turns']): RecentTurn[] {
	return turns.slice(-RECENT_TURNS).flatMap((t) => {
		const answer = [...t.replies].reverse().find((m) => m.role === 'assistant');
		if (!answer) return [];
		return [
			{
				userMessageId: t.user.message_id,
				userText: t.user.content,
				messageId: answer.message_id,
				answer: answer.content,
				at: answer.created_at,
			},
		];
	});
}

/** The thread a new turn follows, read and checked (one conditional read of the document). */
export interface ThreadView {
	storage: MemoryStorage;
	counter: TokenCounter;
	/** How files are sent (PDFs and audio as text or as file parts). */
	files?: FileOptions;
	span: ThreadSpan;
	loader: ThreadLoader;
	/** Position of the message the new turn follows (-1: the root). */
	start: number;
	/** That message's ID (null: the root). */
	parentMessageId: string | null;
	now: () => Date;
}

/** The selected turns as model input, files rebuilt (those that cannot be are listed, never fatal). */
export async function promptHistory(
	view: ThreadView,
	selection: HistorySelection,
	imageDetail?: ImageDetail,
): Promise<History> {
	const { messages, messageIds, skippedFiles } = await storedMessagesToPrompt(
		view.storage,
		selection.turns.flatMap((t) => [t.user, ...t.replies]),
		{ detail: imageDetail, pdfAndAudio: view.files?.pdfAndAudio },
	);
	return {
		messages,
		messageIds,
		tokens: selection.tokens,
		turns: selection.turns.length,
		droppedTurns: selection.droppedTurns,
		skippedFiles,
		parentMessageId: view.parentMessageId,
		recentTurns: recentOf(selection.turns),
	};
}
