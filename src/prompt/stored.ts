// Stored messages as model input: their text, tool calls or results, and their files rebuilt as parts.
import type { StoredMessage } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import { filePlaceholder, rebuildFiles } from './files';
import type { FilePartOptions, SkippedFile } from './files';
import type { ContentPart, PromptMessage } from './types';

/** Leads the user-role message that carries the files of the assistant's answer before it. */
export const ASSISTANT_FILES_LEAD = "[files of the assistant's answer above]";

function toolFields(m: StoredMessage): Partial<PromptMessage> {
	if (m.tool_calls)
		return {
			tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, args: { ...c.args } })),
		};
	if (m.role === 'tool')
		return { tool_call_id: m.tool_call_id, ...(m.name !== undefined ? { name: m.name } : {}) };
	return {};
}

/**
 * The message as the model gets it; files that cannot be rebuilt are listed in `skipped`. A user
 * message gets its files as parts before its text. An assistant message's files (what a model
 * returned) follow it in a user-role message of their own: providers accept images and files from the
 * user only (OpenAI and Anthropic refuse them in assistant messages), so the answer keeps its text
 * and a note per file.
 */
export async function storedToPrompt(
	storage: MemoryStorage,
	m: StoredMessage,
	skipped: SkippedFile[],
	options: FilePartOptions = {},
): Promise<PromptMessage[]> {
	const tool = toolFields(m);
	if (m.files.length === 0) return [{ role: m.role, content: m.content, ...tool }];
	const rebuilt = await rebuildFiles(storage, m.message_id, m.files, options);
	skipped.push(...rebuilt.skipped);
	if (m.role === 'assistant') {
		const notes = m.files
			.map((f) => filePlaceholder({ name: f.name ?? 'file', mime_type: f.mime_type ?? f.type }))
			.join('\n');
		const content = m.content ? `${m.content}\n${notes}` : notes;
		const answer: PromptMessage = { role: m.role, content, ...tool };
		if (rebuilt.parts.length === 0) return [answer];
		const lead: ContentPart = { type: 'text', text: ASSISTANT_FILES_LEAD };
		return [answer, { role: 'user', content: [lead, ...rebuilt.parts] }];
	}
	if (rebuilt.parts.length === 0) return [{ role: m.role, content: m.content, ...tool }];
	const parts: ContentPart[] = rebuilt.parts;
	if (m.content) parts.push({ type: 'text', text: m.content });
	return [{ role: m.role, content: parts, ...tool }];
}

/** Stored messages (oldest first) as prompt messages, each with the stored ID it came from. */
export async function storedMessagesToPrompt(
	storage: MemoryStorage,
	stored: readonly StoredMessage[],
	options: FilePartOptions = {},
): Promise<{ messages: PromptMessage[]; messageIds: string[]; skippedFiles: SkippedFile[] }> {
	const messages: PromptMessage[] = [];
	const messageIds: string[] = [];
	const skippedFiles: SkippedFile[] = [];
	for (const m of stored)
		for (const p of await storedToPrompt(storage, m, skippedFiles, options)) {
			messages.push(p);
			messageIds.push(m.message_id);
		}
	return { messages, messageIds, skippedFiles };
}
