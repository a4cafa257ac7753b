import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { listConversationMemories } from '../../../../src/admin/conversation-memories';
import type {
	ConversationMemories,
	ListedMemory,
} from '../../../../src/admin/conversation-memories';
import type { MemoryStorage } from '../../../../src/store/storage';
import type { MemoryTarget } from './fields';
import { memoryJson } from './messageItems';

/**
 * What a result without messages says, so that "nothing here" never reads as "no such conversation":
 * whether anything is stored for the conversation at all, each memory it has with its message count,
 * and a note saying why nothing came (also shown as a hint in the output pane).
 */
export async function emptySummary(
	ctx: IExecuteFunctions,
	storage: MemoryStorage,
	target: MemoryTarget,
	names: Map<string, string>,
	offset: number,
): Promise<IDataObject> {
	const found = await listConversationMemories(storage, target.workflowId, target.conversationId, {
		counts: true,
	});
	const note = noteOf(target, found, names, offset);
	if (typeof ctx.addExecutionHints === 'function')
		ctx.addExecutionHints({ message: note, location: 'outputPane' });
	return {
		conversationExists: found.exists,
		memories: found.memories.map((m) => ({ ...memoryJson(m, names), messages: m.messages ?? 0 })),
		note,
	};
}

function noteOf(
	target: MemoryTarget,
	found: ConversationMemories,
	names: Map<string, string>,
	offset: number,
): string {
	const conversation = `conversation "${target.conversationId}"`;
	if (!found.exists)
		return `Nothing is stored for ${conversation} of workflow "${target.workflowId}". Check the Conversation ID (Session ID) and the Workflow ID.`;
	if (found.memories.length === 0)
		return `The ${conversation} has no chat memory stored, only copied files or versioned data.`;
	const chosen = found.memories.filter((m) => isChosen(target, m));
	const held = chosen.reduce((n, m) => n + (m.messages ?? 0), 0);
	const all = `Its memories: ${found.memories.map((m) => describe(m, names)).join('; ')}.`;
	if (chosen.length === 0)
		return `The ${conversation} has no ${chosenMemory(target, names)}. ${all} Set Memory to "All of This Conversation" to read every memory it has.`;
	if (held === 0) return `The memory of ${conversation} is stored but holds no messages.`;
	return `No messages from Offset ${offset} on: ${count(held)} stored. ${all}`;
}

function isChosen(target: MemoryTarget, m: ListedMemory): boolean {
	if (target.mode === 'all') return true;
	if (target.mode === 'conversation') return m.memory === 'conversation';
	return m.memory === 'node' && m.nodeId === target.address.nodeId;
}

function chosenMemory(target: MemoryTarget, names: Map<string, string>): string {
	if (target.mode !== 'node') return 'shared memory (Conversation mode)';
	const nodeId = target.address.nodeId as string;
	return `memory of ${nodeLabel(nodeId, target.nodeName ?? names.get(nodeId))} (Node mode)`;
}

function describe(m: ListedMemory, names: Map<string, string>): string {
	const messages = count(m.messages ?? 0);
	if (m.nodeId === undefined) return `shared memory, ${messages}`;
	return `${nodeLabel(m.nodeId, names.get(m.nodeId))}, ${messages}`;
}

function nodeLabel(nodeId: string, name: string | undefined): string {
	return name === undefined ? `node ${nodeId}` : `node "${name}" (${nodeId})`;
}

function count(messages: number): string {
	return messages === 1 ? '1 message' : `${messages} messages`;
}
