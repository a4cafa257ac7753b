import type { IDataObject } from 'n8n-workflow';

import type { ListedMemory } from '../../../../src/admin/conversation-memories';
import type { MessagePage, PositionedMessage } from '../../../../src/admin/conversation-memory';
import type { StoredSummary } from '../../../../src/history/summary-store';

/** A stored message as an output item: camelCase, file copies described (their bytes stay in storage). */
export function messageJson({ position, message: m }: PositionedMessage): IDataObject {
	return {
		position,
		messageId: m.message_id,
		parentMessageId: m.parent_message_id,
		role: m.role,
		content: m.content,
		files: m.files.map((f) => ({
			name: f.name,
			mimeType: f.mime_type,
			type: f.type,
			size: f.size,
			...(f.url !== undefined ? { url: f.url } : {}),
		})),
		...(m.tool_calls ? { toolCalls: m.tool_calls as unknown as IDataObject[] } : {}),
		...(m.tool_call_id !== undefined ? { toolCallId: m.tool_call_id } : {}),
		...(m.role === 'tool' && m.name !== undefined ? { toolName: m.name } : {}),
		...(m.data_version ? { dataVersion: { ...m.data_version } } : {}),
		tokenCount: m.token_count,
		createdAt: m.created_at,
	};
}

/** A page as Group Messages outputs it: where it stands, then its messages. */
export function pageJson(page: MessagePage, offset: number): IDataObject {
	return {
		key: page.key,
		exists: page.exists,
		total: page.total,
		offset,
		nextOffset: page.nextOffset,
		messages: page.messages.map(messageJson),
	};
}

/**
 * Which memory an item comes from: `memory` (conversation or node), `nodeId` (null for the shared
 * memory) and `nodeName` when this workflow has a node with that ID.
 */
export function memoryJson(
	m: Pick<ListedMemory, 'memory' | 'nodeId'>,
	names: Map<string, string>,
): IDataObject {
	const name = m.nodeId === undefined ? undefined : names.get(m.nodeId);
	return {
		memory: m.memory,
		nodeId: m.nodeId ?? null,
		...(name !== undefined ? { nodeName: name } : {}),
	};
}

/** A stored summary of older turns as output: its text, what it covers, and the message it ends at. */
export function summaryJson(s: StoredSummary): IDataObject {
	return {
		role: 'summary',
		content: s.text,
		turns: s.turns,
		firstAt: s.first_at,
		lastAt: s.last_at,
		boundaryMessageId: s.boundary,
		createdAt: s.created_at,
	};
}
