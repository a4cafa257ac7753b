// Shared node helpers with more than one caller: the message-text reader (LLM with Memory reads replies
// and stream chunks with it, the LLM Memory Store stores messages with it) and the memory-scope factory
// (LLM with Memory, LLM Memory Store and the Memory Manager address the same documents).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { chunkText, replyText } from '../../../nodes/LlmWithMemory/methods/model';
import { contextContent, toChatMessage } from '../../../nodes/LlmMemoryStore/methods/messages';
import { memoryAddress, scopedMemory } from '../../../nodes/shared/memory-scope';
import { messageText } from '../../../nodes/shared/message-text';
import { conversationMemoryKey, memoryKeyOf, nodeMemoryKey } from '../../../src/internal';
import { tempDisk } from '../../support/storages';

describe('messageText', () => {
	it('reads strings, and string and text parts of arrays; other parts add nothing', () => {
		assert.equal(messageText('plain'), 'plain');
		assert.equal(
			messageText(['a', { type: 'text', text: 'b' }, { type: 'tool_use', id: 'x' }, null, 7]),
			'ab',
		);
		assert.equal(messageText([]), '');
	});

	it('is undefined for anything else, which each caller turns into its own result', () => {
		for (const content of [undefined, null, 5, { text: 'x' }]) {
			assert.equal(messageText(content), undefined);
		}
		// LLM with Memory: a reply without text content is an error, a chunk without it adds ''.
		assert.throws(() => replyText({ content: { text: 'x' } }), /without text content/);
		assert.equal(chunkText({ content: undefined }), '');
		// LLM Memory Store: no content is '', other values are stored as their JSON.
		assert.equal(toChatMessage({ role: 'user', content: undefined }).content, '');
		assert.deepEqual(contextContent({ input: { a: 1 } }, 'input', 'input', 'local_file'), {
			text: '{"a":1}',
		});
	});
});

describe('memory scope', () => {
	const at = { workflowId: 'wf', conversationId: 'c1' };

	it('addresses the conversation’s document, or one node’s', () => {
		assert.deepEqual(memoryAddress({ ...at, mode: 'conversation' }), {
			appId: 'wf',
			conversationId: 'c1',
		});
		assert.deepEqual(memoryAddress({ ...at, mode: 'node', nodeId: 'n1' }), {
			appId: 'wf',
			conversationId: 'c1',
			nodeId: 'n1',
		});
	});

	it('opens the memory at the very key the address names', () => {
		const storage = tempDisk();
		const conversation = scopedMemory({ ...at, mode: 'conversation' }, { storage });
		const node = scopedMemory({ ...at, mode: 'node', nodeId: 'n1' }, { storage });
		assert.equal(conversation.key, conversationMemoryKey('wf', 'c1'));
		assert.equal(node.key, nodeMemoryKey('wf', 'c1', 'n1'));
		assert.equal(node.key, memoryKeyOf(memoryAddress({ ...at, mode: 'node', nodeId: 'n1' })));
	});
});
