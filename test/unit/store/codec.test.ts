import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';

import {
	CorruptDocumentError,
	decodeDocument,
	emptyDocument,
	encodeDocument,
} from '../../../src/internal';
import { linearTurns, msg } from '../../support/messages';

const K = 'node_memory/app/conv/node.json';

function corrupt(bytes: Uint8Array | string, detail: RegExp) {
	assert.throws(
		() => decodeDocument(K, typeof bytes === 'string' ? Buffer.from(bytes) : bytes),
		(e: unknown) => {
			assert.ok(e instanceof CorruptDocumentError, String(e));
			assert.equal(e.key, K);
			assert.match(e.message, new RegExp(`"${K.replace(/\//g, '\\/')}"`));
			assert.match(e.message, detail);
			return true;
		},
	);
}

describe('stored document', () => {
	it('round-trips the seed format, plain and gzipped', () => {
		const doc = { version: 1 as const, messages: linearTurns(2) };
		assert.deepEqual(decodeDocument(K, encodeDocument(doc)), doc);
		const gz = encodeDocument(doc, { gzip: true });
		assert.equal(gz[0], 0x1f);
		assert.deepEqual(decodeDocument(K, gz), doc);
	});

	it('accepts the seed example with a file reference', () => {
		// Verbatim from Dify's memory document design: its file is known by upload_file_id only.
		const seed = readFileSync(path.resolve(__dirname, '../../fixtures/seed-document.json'));
		const doc = decodeDocument(K, seed);
		assert.equal(doc.messages.length, 2);
		assert.deepEqual(doc, JSON.parse(seed.toString('utf8')), 'kept as it is');
	});

	it('keeps fields it does not know, so a rewrite never drops them', () => {
		const doc = {
			version: 1,
			extra: { a: 1 },
			messages: [{ ...msg('u1', null), future_field: 'x' }],
		};
		const back = decodeDocument(K, Buffer.from(JSON.stringify(doc))) as unknown as typeof doc;
		assert.deepEqual(back.extra, { a: 1 });
		assert.equal(back.messages[0].future_field, 'x');
	});

	it('rejects unknown versions by name, never as empty', () => {
		corrupt(JSON.stringify({ version: 2, messages: [] }), /unknown document version 2/);
		corrupt(JSON.stringify({ messages: [] }), /unknown document version undefined/);
		corrupt(JSON.stringify({ version: '1', messages: [] }), /unknown document version "1"/);
	});

	it('rejects damaged bytes and schema violations, naming the key', () => {
		corrupt('{"version":1,"messages":[', /not valid JSON/);
		corrupt('', /not valid JSON/);
		corrupt('[]', /not a JSON object/);
		corrupt('null', /not a JSON object/);
		corrupt(Buffer.from([0x1f, 0x8b, 1, 2, 3]), /gzip data is damaged/);
		corrupt(gzipSync(Buffer.from('not json')), /not valid JSON/);
		corrupt(JSON.stringify({ version: 1 }), /schema check failed at messages/);
		corrupt(
			JSON.stringify({ version: 1, messages: [{ ...msg('u', null), role: 'system' }] }),
			/messages\.0\.role/,
		);
		corrupt(
			JSON.stringify({ version: 1, messages: [{ ...msg('u', null), token_count: -1 }] }),
			/token_count/,
		);
		corrupt(
			JSON.stringify({ version: 1, messages: [{ ...msg('u', null), token_count: 1.5 }] }),
			/token_count/,
		);
		corrupt(
			JSON.stringify({ version: 1, messages: [{ ...msg('u', null), created_at: 'yesterday' }] }),
			/created_at/,
		);
		corrupt(
			JSON.stringify({ version: 1, messages: [msg('u', null), msg('u', null)] }),
			/duplicate message_id "u"/,
		);
		const badFile = {
			...msg('u', null),
			files: [
				{
					type: 'image',
					transfer_method: 'local_file',
					mime_type: 'image/png',
					name: 'x',
					size: 1,
					belongs_to: 'user',
				},
			],
		};
		corrupt(JSON.stringify({ version: 1, messages: [badFile] }), /need "key"/);
		const unknownMethod = {
			...msg('u', null),
			files: [
				{
					type: 'image',
					transfer_method: 'carrier_pigeon',
					key: 'k',
					mime_type: 'image/png',
					name: 'x',
					size: 1,
					belongs_to: 'user',
				},
			],
		};
		corrupt(JSON.stringify({ version: 1, messages: [unknownMethod] }), /transfer_method/);
	});

	it('empty document is version 1 with no messages', () => {
		assert.deepEqual(emptyDocument(), { version: 1, messages: [] });
	});
});
