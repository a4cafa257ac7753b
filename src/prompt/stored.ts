// A stored message as model input: its text, its tool call or result, and its files rebuilt as parts.
import type { StoredMessage } from '../store/schema';
import type { MemoryStorage } from '../store/storage';
import { rebuildFiles } from './files';
import type { SkippedFile } from './files';
import type { ContentPart, ImageDetail, PromptMessage } from './types';

/** The message as the model gets it; files that cannot be rebuilt are listed in `skipped`. */
export async function storedToPrompt(
	storage: MemoryStorage,
	m: StoredMessage,
	skipped: SkippedFile[],
	detail?: ImageDetail,
): Promise<PromptMessage> {
	const tool: Partial<PromptMessage> = m.tool_calls
		? { tool_calls: m.tool_calls.map((c) => ({ id: c.id, name: c.name, args: { ...c.args } })) }
		: m.role === 'tool'
			? { tool_call_id: m.tool_call_id, ...(m.name !== undefined ? { name: m.name } : {}) }
			: {};
	if (m.files.length === 0) return { role: m.role, content: m.content, ...tool };
	const rebuilt = await rebuildFiles(storage, m.message_id, m.files, detail);
	skipped.push(...rebuilt.skipped);
	if (rebuilt.parts.length === 0) return { role: m.role, content: m.content, ...tool };
	const parts: ContentPart[] = rebuilt.parts;
	if (m.content) parts.push({ type: 'text', text: m.content });
	return { role: m.role, content: parts, ...tool };
}
