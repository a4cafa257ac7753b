// How captured messages are cut into the chunks both indexes hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { chunkText } from '../../../src/internal';

describe('chunking', () => {
	it('short text is one chunk; long text overlapping windows without cut words or surrogate pairs', () => {
		assert.deepEqual(chunkText('hello', 10, 2), ['hello']);
		const text = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
		const chunks = chunkText(text, 50, 10);
		assert.ok(chunks.every((c) => c.length <= 50));
		assert.ok(
			chunks.slice(0, -1).every((c) => /\s$/.test(c)),
			'windows end after a space',
		);
		assert.equal(chunks.join('').replace(/\s+/g, ' ').includes('w59'), true);
		const emoji = '😀'.repeat(30);
		assert.ok(chunkText(emoji, 7, 2).every((c) => Array.from(c).every((ch) => ch === '😀')));
	});
});
