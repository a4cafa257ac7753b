// A turn records the versioned data its answer is based on (LLM with Memory's Versioned Data option):
// `data_version` on the assistant message, kept by every reader; documents without it read as before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	ConversationMemory,
	CorruptDocumentError,
	decodeDocument,
	DuplicateMessageIdError,
	encodeDocument,
} from '../../../src/internal';
import { tempDisk } from '../../support/storages';

describe('data_version on an assistant message', () => {
	it('is stored from the turn’s dataVersion and read back; the prompt history does not carry it', async () => {
		const storage = tempDisk();
		const m = new ConversationMemory('wf', 'c', { storage });
		await m.addMessages({
			messageId: 't1',
			userContent: 'Change category to FRAGRANCE',
			assistantContent: 'Done.',
			dataVersion: { version: 2, branch: 'main', changed: true },
		});
		await m.addMessages({ messageId: 't2', userContent: 'hi', assistantContent: 'hello' });
		await m.flush();
		const stored = decodeDocument(m.key, (await storage.get(m.key))!.body).messages;
		assert.deepEqual(
			stored.map((s) => [s.message_id, s.data_version ?? null]),
			[
				['t1:user', null],
				['t1', { version: 2, branch: 'main', changed: true }],
				['t2:user', null],
				['t2', null],
			],
		);
		const history = await new ConversationMemory('wf', 'c', { storage }).getHistoryPromptMessages();
		assert.deepEqual(history.messages[1], { role: 'assistant', content: 'Done.' });
	});

	it('is checked by the reader: a positive version, a branch, changed; on assistant messages only', () => {
		const message = (extra: object) => ({
			version: 1,
			messages: [
				{
					message_id: 'a',
					parent_message_id: null,
					role: 'assistant',
					content: 'x',
					files: [],
					token_count: 1,
					created_at: '2026-01-01T00:00:00.000Z',
					...extra,
				},
			],
		});
		const decode = (doc: object) => decodeDocument('k', encodeDocument(doc as never));
		const good = { data_version: { version: 3, branch: 'draft', changed: false, later: 1 } };
		assert.deepEqual(decode(message(good)).messages[0].data_version, good.data_version);
		for (const bad of [
			{ data_version: { version: 0, branch: 'main', changed: true } },
			{ data_version: { version: 1, changed: true } },
			{ data_version: 2 },
			{ role: 'user', data_version: { version: 1, branch: 'main', changed: true } },
		])
			assert.throws(() => decode(message(bad)), CorruptDocumentError, JSON.stringify(bad));
	});

	it('newMessageId draws the turn ID first (a random UUID), which the turn then uses once', async () => {
		const storage = tempDisk();
		const m = new ConversationMemory('wf', 'c', { storage });
		const id = m.newMessageId();
		assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
		assert.notEqual(m.newMessageId(), id);
		const added = await m.addMessages({ messageId: id, userContent: 'q', assistantContent: 'a' });
		await m.flush();
		assert.equal(added.messageId, id);
		const again = new ConversationMemory('wf', 'c', { storage });
		await assert.rejects(
			again.addMessages({ messageId: id, userContent: 'q2', assistantContent: 'a2' }),
			DuplicateMessageIdError,
			'once used, the ID is a stored one like any other',
		);
	});
});
