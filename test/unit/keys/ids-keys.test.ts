import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	conversationFilesPrefix,
	conversationMemoryKey,
	InvalidIdError,
	MissingConversationIdError,
	nodeMemoryKey,
	NodeTokenBufferMemory,
	parseKey,
	TokenBufferMemory,
	validateId,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';

const storage = {} as MemoryStorage; // constructors validate before touching storage

function rejects(fn: () => unknown, field: string, reason: RegExp) {
	assert.throws(fn, (e: unknown) => {
		assert.ok(e instanceof InvalidIdError, `expected InvalidIdError, got ${String(e)}`);
		assert.equal(e.field, field);
		assert.match(e.message, new RegExp(`^Invalid ${field}: `));
		assert.match(e.message, reason);
		return true;
	});
}

describe('IDs and keys', () => {
	it('builds the documented key formats', () => {
		assert.equal(nodeMemoryKey('app1', 'conv1', 'node1'), 'node_memory/app1/conv1/node1.json');
		assert.equal(conversationMemoryKey('app1', 'conv1'), 'conversation_memory/app1/conv1.json');
		assert.equal(conversationFilesPrefix('app1', 'conv1'), 'memory_files/app1/conv1/');
	});

	it('applies an optional key prefix, with or without a trailing slash', () => {
		assert.equal(
			nodeMemoryKey('a', 'c', 'n', 'tenants/acme'),
			'tenants/acme/node_memory/a/c/n.json',
		);
		assert.equal(
			conversationMemoryKey('a', 'c', 'tenants/acme/'),
			'tenants/acme/conversation_memory/a/c.json',
		);
		rejects(() => conversationMemoryKey('a', 'c', 'x/../y'), 'key prefix', /"\.\."/);
		rejects(() => conversationMemoryKey('a', 'c', '/abs'), 'key prefix', /must not start/);
		rejects(() => conversationMemoryKey('a', 'c', 'a//b'), 'key prefix', /empty/);
	});

	it('accepts ordinary IDs unchanged', () => {
		for (const id of [
			'abc',
			'Session 42',
			'e1b2-uuid',
			'user@example.com',
			'ünïcödé-会话',
			'a.b',
			'.hidden',
			'x'.repeat(200),
		])
			assert.equal(validateId('conversation_id', id), id);
	});

	it('rejects IDs that could escape their path segment, naming the field', () => {
		rejects(() => nodeMemoryKey('app', 'a/b', 'n'), 'conversation_id', /contains "\/"/);
		rejects(() => nodeMemoryKey('app', 'c', 'a\\b'), 'node_id', /contains "\\"/);
		rejects(() => nodeMemoryKey('..', 'c', 'n'), 'app_id', /contains "\.\."/);
		rejects(() => nodeMemoryKey('app', 'x..y', 'n'), 'conversation_id', /"\.\."/);
		rejects(() => nodeMemoryKey('app', '.', 'n'), 'conversation_id', /must not be "\."/);
		rejects(() => nodeMemoryKey('app', 'c', ''), 'node_id', /must not be empty/);
		rejects(() => nodeMemoryKey('app', 'bad\u0000id', 'n'), 'conversation_id', /control character/);
		rejects(() => nodeMemoryKey('app', 'line\nbreak', 'n'), 'conversation_id', /control character/);
		rejects(() => nodeMemoryKey('app', 'del\u007f', 'n'), 'conversation_id', /control character/);
		rejects(
			() => nodeMemoryKey('app', 'x'.repeat(201), 'n'),
			'conversation_id',
			/at most 200 bytes, got 201/,
		);
		rejects(() => nodeMemoryKey('app', 'é'.repeat(101), 'n'), 'conversation_id', /got 202/); // 2 bytes each
		rejects(
			() => validateId('conversation_id', 42),
			'conversation_id',
			/must be a string, got number/,
		);
		rejects(() => validateId('conversation_id', null), 'conversation_id', /got null/);
	});

	it('never rewrites an ID: the error shows the value escaped', () => {
		assert.throws(
			() => validateId('node_id', '../../etc/passwd'),
			/"\.\.\/\.\.\/etc\/passwd" contains "\/"/,
		);
	});

	it('node memory without a conversation ID throws the typed error', () => {
		for (const missing of [undefined, null, ''])
			assert.throws(
				() => new NodeTokenBufferMemory('app', missing, 'node', { storage }),
				MissingConversationIdError,
			);
		rejects(() => new NodeTokenBufferMemory('app', 'c', '../n', { storage }), 'node_id', /"\/"/);
		rejects(() => new TokenBufferMemory('app', '', { storage }), 'conversation_id', /empty/);
	});

	it('parses keys back', () => {
		assert.deepEqual(parseKey('node_memory/a/c/n.json'), {
			kind: 'node',
			appId: 'a',
			conversationId: 'c',
			nodeId: 'n',
		});
		assert.deepEqual(parseKey('p/conversation_memory/a/c.json', 'p'), {
			kind: 'conversation',
			appId: 'a',
			conversationId: 'c',
		});
		assert.deepEqual(parseKey('memory_files/a/c/abc'), {
			kind: 'file',
			appId: 'a',
			conversationId: 'c',
		});
		assert.equal(parseKey('other/a/c.json'), undefined);
		assert.equal(parseKey('node_memory/a/c/n.txt'), undefined);
	});
});
