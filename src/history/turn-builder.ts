// A turn as it will be stored: the user's message, the tool steps in between, the answer, each with its
// IDs, parent, token count and copied files. Built once, when the turn is added.
import { validateDerivedId } from '../keys/ids';
import type { FileOptions } from '../prompt/file-kinds';
import { readFiles } from '../prompt/file-text';
import { messageTokenCount } from '../prompt/files';
import { storeFile } from '../store/blobs';
import type { FileInput } from '../store/blobs';
import type { StoredFile, StoredMessage, WrittenFile } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import type { TokenCounter } from '../tokens/tokens';
import type { TurnInput } from './buffer-memory';
import { applyToolResults } from './tool-results';
import type { ToolResultsPolicy } from './tool-results';
import { STEP_SUFFIX } from './turns';
import type { PendingTurn } from './turns';

/** A buffered turn and what the flush needs to know to never store it twice. */
export interface BufferedTurn extends PendingTurn {
	/** Its IDs came from the caller (or a custom newId), so they may clash with any stored message. */
	callerIds: boolean;
	/** Lowest position a write attempt placed it at: a copy may be stored (and sealed) from there on. */
	placedAt?: number;
}

/** What building a turn needs from its memory. */
export interface TurnContext {
	storage: MemoryStorage;
	filesPrefix: string;
	counter: TokenCounter;
	createdAt: string;
	/** What is stored of a tool turn's steps (its results cut, noted, or no steps at all). */
	toolResults: ToolResultsPolicy;
	/** The per-file token limit, and how PDFs and audio are sent (which decides what they cost). */
	files: FileOptions;
}

/** Reads the files not read yet (their text goes with them), then copies them to storage. */
async function storeFiles(
	ctx: TurnContext,
	files: readonly FileInput[] | undefined,
	belongsTo: StoredFile['belongs_to'],
): Promise<WrittenFile[]> {
	const out: WrittenFile[] = [];
	for (const f of await readFiles(files ?? [], ctx.counter, ctx.files))
		out.push(await storeFile(ctx.storage, ctx.filesPrefix, f, belongsTo));
	return out;
}

function storedMessage(
	ctx: TurnContext,
	id: string,
	parentId: string | null,
	role: StoredMessage['role'],
	content: string,
	files: WrittenFile[],
): StoredMessage {
	return {
		message_id: id,
		parent_message_id: parentId,
		role,
		content,
		files,
		token_count: messageTokenCount(ctx.counter, content, files, ctx.files.pdfAndAudio),
		created_at: ctx.createdAt,
	};
}

/**
 * The tool steps between the user's message and the answer, as the tool-results policy keeps them,
 * chained by parent (IDs `<id>:step<n>`).
 */
function stepsOf(ctx: TurnContext, messageId: string, userMessageId: string, turn: TurnInput) {
	const steps: StoredMessage[] = [];
	let previous = userMessageId;
	for (const [n, step] of applyToolResults(turn.steps ?? [], ctx.toolResults).entries()) {
		const id = validateDerivedId('message_id', `${messageId}${STEP_SUFFIX}${n}`);
		const stored: StoredMessage =
			step.role === 'assistant'
				? {
						...storedMessage(ctx, id, previous, 'assistant', step.content, []),
						tool_calls: step.toolCalls.map((c) => ({
							id: c.id,
							name: c.name,
							args: { ...c.args },
						})),
					}
				: {
						...storedMessage(ctx, id, previous, 'tool', step.content, []),
						tool_call_id: step.toolCallId,
						...(step.name !== undefined ? { name: step.name } : {}),
					};
		if (stored.tool_calls)
			stored.token_count += ctx.counter.count(JSON.stringify(stored.tool_calls));
		steps.push(stored);
		previous = id;
	}
	return { steps, last: previous };
}

/** The turn's stored messages (files copied to storage now), ready to be buffered. */
export async function buildTurn(
	ctx: TurnContext,
	ids: { messageId: string; userMessageId: string; parent: string | null },
	turn: TurnInput,
	flags: { implicitParent: boolean; callerIds: boolean },
): Promise<BufferedTurn> {
	const userFiles = await storeFiles(ctx, turn.userFiles, 'user');
	const assistantFiles = await storeFiles(ctx, turn.assistantFiles, 'assistant');
	const { steps, last } = stepsOf(ctx, ids.messageId, ids.userMessageId, turn);
	const dv = turn.dataVersion;
	return {
		user: storedMessage(ctx, ids.userMessageId, ids.parent, 'user', turn.userContent, userFiles),
		steps,
		assistant: {
			...storedMessage(
				ctx,
				ids.messageId,
				last,
				'assistant',
				turn.assistantContent,
				assistantFiles,
			),
			...(dv
				? { data_version: { version: dv.version, branch: dv.branch, changed: dv.changed } }
				: {}),
		},
		...flags,
	};
}
