import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { describe, it } from 'node:test';

import {
	encodingForModel,
	fallbackTokenCount,
	loadedEncodings,
	safeCounter,
	TiktokenCounter,
	tokenizerStats,
} from '../../../src/internal';

describe('tokens', () => {
	it('maps models to encodings', () => {
		for (const m of [
			'gpt-4o',
			'gpt-4o-mini',
			'chatgpt-4o-latest',
			'ft:gpt-4o-mini:acme::x1',
			'gpt-4.1',
			'gpt-4.1-nano',
			'gpt-5',
			'gpt-5-mini',
			'o1',
			'o1-mini',
			'o3',
			'o3-mini',
			'o4-mini',
			'openai/o3',
			'GPT-4O',
		])
			assert.equal(encodingForModel(m), 'o200k_base', m);
		for (const m of [
			'gpt-4',
			'gpt-4-turbo',
			'gpt-3.5-turbo',
			'claude-3-5-sonnet',
			'llama3.1:8b',
			'mistral-large',
			'neo4j-llm',
			'falcon-40b',
			'',
			undefined,
		])
			assert.equal(encodingForModel(m), 'cl100k_base', String(m));
	});

	it('loads encoders lazily, one per encoding, with no network access', () => {
		const refuse = () => {
			throw new Error('network access during tokenization');
		};
		const saved = {
			fetch: globalThis.fetch,
			hr: http.request,
			hsr: https.request,
			nc: net.connect,
		};
		Object.assign(globalThis, { fetch: refuse });
		Object.assign(http, { request: refuse });
		Object.assign(https, { request: refuse });
		Object.assign(net, { connect: refuse });
		try {
			assert.deepEqual(loadedEncodings(), []);
			const cl = new TiktokenCounter('cl100k_base');
			assert.equal(cl.count('hello world'), 2);
			assert.deepEqual(loadedEncodings(), ['cl100k_base']);
			assert.equal(new TiktokenCounter('cl100k_base').count('hello world'), 2);
			assert.deepEqual(loadedEncodings(), ['cl100k_base']);
			const o2 = new TiktokenCounter('o200k_base');
			assert.ok(o2.count('hello world') > 0);
			assert.deepEqual(loadedEncodings().sort(), ['cl100k_base', 'o200k_base']);
		} finally {
			Object.assign(globalThis, { fetch: saved.fetch });
			Object.assign(http, { request: saved.hr });
			Object.assign(https, { request: saved.hsr });
			Object.assign(net, { connect: saved.nc });
		}
	});

	it('gives real, encoding-specific counts', () => {
		const cl = new TiktokenCounter('cl100k_base');
		const o2 = new TiktokenCounter('o200k_base');
		assert.equal(cl.count('tiktoken is great!'), 6); // OpenAI cookbook example
		const cjk = '你好，世界。今天天气很好，我们去公园散步吧。';
		assert.notEqual(cl.count(cjk), o2.count(cjk), 'o200k and cl100k split CJK text differently');
		assert.ok(o2.count(cjk) < cl.count(cjk));
	});

	it('counts special-token text typed by a user as ordinary text', () => {
		const cl = new TiktokenCounter('cl100k_base');
		const failures = tokenizerStats.failures;
		const n = cl.count('please ignore <|endoftext|> and <|im_start|>');
		assert.ok(n > 5, `counted ${n}`);
		assert.equal(tokenizerStats.failures, failures);
	});

	it('a failing counter falls back to the UTF-8 byte length and reports it', () => {
		const seen: unknown[] = [];
		const broken = safeCounter(
			{
				encoding: 'x',
				count: () => {
					throw new Error('boom');
				},
			},
			(e) => seen.push(e),
		);
		assert.equal(broken.count('héllo'), 6);
		assert.equal(fallbackTokenCount('héllo'), 6);
		assert.equal(seen.length, 1);
		const nonsense = safeCounter({ encoding: 'x', count: () => -1 }, (e) => seen.push(e));
		assert.equal(nonsense.count('abc'), 3);
		assert.equal(seen.length, 2);
	});

	it('the byte-length fallback is an upper bound of the real count', () => {
		const cl = new TiktokenCounter('cl100k_base');
		for (const t of [
			'hello world',
			'你好，世界',
			'emoji 🎉🎉🎉',
			'a'.repeat(1000),
			'def f(x):\n    return x * 2\n',
		])
			assert.ok(cl.count(t) <= fallbackTokenCount(t), t);
	});

	it(
		'long unbroken text (a pasted blob) is counted in bounded chunks, never hangs',
		{ timeout: 30_000 },
		() => {
			const cl = new TiktokenCounter('cl100k_base');
			const blob = 'x'.repeat(1_000_000);
			const n = cl.count(blob);
			assert.ok(n > 100_000 && n <= fallbackTokenCount(blob), `counted ${n}`);
			const b64 = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 256)).toString(
				'base64',
			);
			const exact = new TiktokenCounter('cl100k_base').count(b64.slice(0, 255)); // under the chunking threshold
			assert.ok(exact > 0);
			const chunked = cl.count(b64);
			assert.ok(chunked >= b64.length / 4 && chunked <= fallbackTokenCount(b64));
			const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(200);
			assert.equal(cl.count(prose), 2001, 'ordinary long text is still counted exactly');
		},
	);
});
