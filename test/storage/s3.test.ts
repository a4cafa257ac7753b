import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import { after, describe, it } from 'node:test';

import {
	ConflictError,
	S3Storage,
	StorageError,
	TokenBufferMemory,
	UnsafeStorageError,
} from '../../src/internal';
import { ensureRgw, freePort, RGW_CREDENTIALS, rgwStorage } from '../support/rgw';

/**
 * Stand-in for a NON-compliant S3 server (like s3rver): stores objects but ignores If-Match and
 * If-None-Match. No such server exists on these machines; it exists to prove we refuse it.
 */
async function ignoringServer(): Promise<{ endpoint: string; server: Server }> {
	const objects = new Map<string, Buffer>();
	const server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const key = decodeURIComponent((req.url ?? '').split('?')[0]);
			const etag = (b: Buffer) => `"${createHash('md5').update(b).digest('hex')}"`;
			if (req.method === 'PUT') {
				const body = Buffer.concat(chunks);
				objects.set(key, body);
				res.writeHead(200, { ETag: etag(body) }).end();
			} else if (req.method === 'GET' || req.method === 'HEAD') {
				const body = objects.get(key);
				if (!body) {
					res.writeHead(404, { 'content-type': 'application/xml' });
					res.end(
						req.method === 'GET'
							? '<Error><Code>NoSuchKey</Code><Message>missing</Message></Error>'
							: undefined,
					);
				} else {
					res.writeHead(200, { ETag: etag(body), 'content-length': body.length });
					res.end(req.method === 'GET' ? body : undefined);
				}
			} else if (req.method === 'DELETE') {
				objects.delete(key);
				res.writeHead(204).end();
			} else res.writeHead(405).end();
		});
	});
	const port = await freePort();
	await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
	return { endpoint: `http://127.0.0.1:${port}`, server };
}

/**
 * A proxy to radosgw that forwards every request, except that the first PUT of each key `lose` picks
 * reaches radosgw and lands, then its connection is closed instead of answered (the answer lost on the
 * way back, as a reset connection loses it); `meanwhile` runs first (another writer, say). The client
 * sends such a write again, and radosgw answers the second attempt.
 */
async function losingProxy(
	target: string,
	lose: (key: string) => boolean,
	meanwhile: (key: string) => Promise<void> = async () => {},
): Promise<{ endpoint: string; server: Server; lost: Set<string> }> {
	const upstream = new URL(target);
	const lost = new Set<string>();
	const server = createServer((req, res) => {
		const key = decodeURIComponent((req.url ?? '').split('?')[0]).replace(/^\/[^/]+\//, '');
		const losing = req.method === 'PUT' && lose(key) && !lost.has(key);
		if (losing) lost.add(key);
		const up = httpRequest(
			{
				host: upstream.hostname,
				port: upstream.port,
				method: req.method,
				path: req.url,
				headers: req.headers,
			},
			(answer) => {
				if (!losing) {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
					return;
				}
				answer.resume();
				answer.on('end', () => void meanwhile(key).finally(() => req.socket.destroy()));
			},
		);
		up.on('error', () => req.socket.destroy());
		req.pipe(up);
	});
	const port = await freePort();
	await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
	return { endpoint: `http://127.0.0.1:${port}`, server, lost };
}

/** An S3Storage on `bucket` through `endpoint`. */
const through = (endpoint: string, bucket: string) =>
	new S3Storage({
		bucket,
		endpoint,
		forcePathStyle: true,
		region: 'us-east-1',
		credentials: RGW_CREDENTIALS,
	});

describe('S3Storage specifics', () => {
	it('probes radosgw once: conditional writes enforced, If-Match wants the unquoted ETag', async () => {
		const s = await rgwStorage();
		assert.deepEqual(await s.conditionalWriteSupport(), { enforced: true, quoteIfMatch: false });
		assert.deepEqual(await s.list(''), [], 'the probe object is cleaned up');
	});

	it('refuses a server that ignores conditional writes, by default', async () => {
		const { endpoint, server } = await ignoringServer();
		try {
			const s = new S3Storage({
				bucket: 'b',
				endpoint,
				forcePathStyle: true,
				credentials: RGW_CREDENTIALS,
			});
			const m = new TokenBufferMemory('wf', 'conv', { storage: s });
			await m.addMessages({ userContent: 'q', assistantContent: 'a' });
			await assert.rejects(m.flush(), (e: unknown) => {
				assert.ok(e instanceof UnsafeStorageError);
				assert.match(
					e.message,
					/ignores conditional writes \(If-None-Match \/ If-Match\), so concurrent turns could overwrite each other/,
				);
				return true;
			});
		} finally {
			server.close();
		}
	});

	it('allows such a server only when told to, with a warning', async () => {
		const { endpoint, server } = await ignoringServer();
		try {
			const warnings: string[] = [];
			const s = new S3Storage({
				bucket: 'b2',
				endpoint,
				forcePathStyle: true,
				credentials: RGW_CREDENTIALS,
				allowUnsafeConditionalWrites: true,
				onWarning: (w) => warnings.push(w),
			});
			const m = new TokenBufferMemory('wf', 'conv', { storage: s });
			await m.addMessages({ userContent: 'q', assistantContent: 'a' });
			assert.equal((await m.flush()).written, true);
			assert.equal(warnings.length, 1);
			assert.match(warnings[0], /continuing because unsafe writes were explicitly allowed/);
		} finally {
			server.close();
		}
	});

	it('a missing bucket is an error naming it, never an empty memory', async () => {
		const { endpoint } = await ensureRgw();
		const s = new S3Storage({
			bucket: 'no-such-bucket-here',
			endpoint,
			forcePathStyle: true,
			credentials: RGW_CREDENTIALS,
		});
		await assert.rejects(
			new TokenBufferMemory('wf', 'c', { storage: s }).getHistoryPromptMessages(),
			/NoSuchBucket.*|s3:\/\/no-such-bucket-here/,
		);
		await assert.rejects(
			s.get('x.json'),
			(e: unknown) =>
				e instanceof StorageError && /s3:\/\/no-such-bucket-here\//.test((e as Error).message),
		);
	});

	it('wrong credentials and an unreachable server fail clearly without leaking the secret', async () => {
		const { endpoint } = await ensureRgw();
		const secret = 'TopSecretValue-do-not-print-123';
		const wrong = new S3Storage({
			bucket: 'b',
			endpoint,
			forcePathStyle: true,
			credentials: { accessKeyId: 'NOPE', secretAccessKey: secret },
		});
		const down = new S3Storage({
			bucket: 'b',
			endpoint: `http://127.0.0.1:${await freePort()}`,
			forcePathStyle: true,
			credentials: { accessKeyId: 'A', secretAccessKey: secret },
		});
		for (const s of [wrong, down]) {
			const error = await s.get('k.json').then(
				() => undefined,
				(e: unknown) => e as Error,
			);
			assert.ok(error instanceof StorageError, String(error));
			assert.match(error.message, /^S3 GetObject failed for "k\.json" in s3:\/\/b\/: /);
			assert.ok(!JSON.stringify({ m: error.message, s: error.stack }).includes(secret));
		}
	});

	it('a key prefix keeps every object under it', async () => {
		const base = await rgwStorage();
		const s = new S3Storage({
			bucket: base.bucket,
			prefix: 'tenant-a',
			endpoint: base.endpoint,
			forcePathStyle: true,
			credentials: RGW_CREDENTIALS,
		});
		const m = new TokenBufferMemory('wf', 'conv', { storage: s });
		await m.addMessages({ userContent: 'q', assistantContent: 'a' });
		await m.flush();
		assert.deepEqual(
			(await base.list('')).map((o) => o.key),
			['tenant-a/conversation_memory/wf/conv.json'],
		);
		assert.deepEqual(
			(await s.list('')).map((o) => o.key),
			['conversation_memory/wf/conv.json'],
		);
		assert.deepEqual(await s.listFolders(''), ['conversation_memory']);
		assert.deepEqual(await s.listFolders('conversation_memory/'), ['wf']);
	});

	it('lists more folders than a page of the listing holds (1,000), each once, and not their keys', async () => {
		const s = await rgwStorage();
		const names = Array.from({ length: 1_005 }, (_, i) => `f${String(i).padStart(4, '0')}`);
		for (let i = 0; i < names.length; i += 50)
			await Promise.all(
				names.slice(i, i + 50).map((n) => s.put(`many/${n}/a/b.json`, Buffer.from('1'))),
			);
		await s.put('many/f0001/c.json', Buffer.from('2'));
		assert.deepEqual(await s.listFolders('many/'), names);
		// A page at a time across the server's pages: each folder once, in order.
		const paged: string[] = [];
		for (let page = await s.listFolders('many/', { limit: 400 }); page.length > 0;) {
			assert.ok(page.length <= 400);
			paged.push(...page);
			assert.ok(paged.length <= names.length, 'no folder twice');
			page = await s.listFolders('many/', { after: page[page.length - 1], limit: 400 });
		}
		assert.deepEqual(paged, names);
		assert.deepEqual(await s.listFolders('many/', { after: 'f0001', limit: 2 }), [
			'f0002',
			'f0003',
		]);
	});

	it('a conditional write whose answer was lost, sent again by the client, is the write that landed, not a conflict', async () => {
		const direct = await rgwStorage();
		const proxy = await losingProxy(direct.endpoint!, (key) => key.startsWith('lost/'));
		try {
			const s = through(proxy.endpoint, direct.bucket);
			const body = new TextEncoder().encode('{"v":1}');
			const created = await s.put('lost/created.json', body, { ifVersion: null });
			assert.ok(
				proxy.lost.has('lost/created.json'),
				'the first attempt was answered: nothing tested',
			);
			const now = await direct.get('lost/created.json');
			assert.deepEqual(now?.body, body);
			assert.equal(created.version, now?.version);
			// An update (If-Match) the same way: the retry finds the version it wrote, not the one it read.
			await direct.put('lost/updated.json', new TextEncoder().encode('{"v":1}'), {
				ifVersion: null,
			});
			const read = await s.get('lost/updated.json');
			const next = new TextEncoder().encode('{"v":2}');
			const updated = await s.put('lost/updated.json', next, { ifVersion: read!.version });
			assert.ok(proxy.lost.has('lost/updated.json'));
			const after = await direct.get('lost/updated.json');
			assert.deepEqual(after?.body, next);
			assert.equal(updated.version, after?.version);
		} finally {
			proxy.server.close();
		}
	});

	it('a conditional write sent again after another writer changed the object is still a conflict', async () => {
		const direct = await rgwStorage();
		const theirs = new TextEncoder().encode('{"by":"another writer"}');
		const proxy = await losingProxy(
			direct.endpoint!,
			(key) => key === 'raced.json',
			async (key) => {
				await direct.put(key, theirs);
			},
		);
		try {
			const s = through(proxy.endpoint, direct.bucket);
			await assert.rejects(
				s.put('raced.json', new TextEncoder().encode('{"by":"us"}'), { ifVersion: null }),
				(error: unknown) => error instanceof ConflictError && !String(error).includes('"by"'),
			);
			assert.ok(proxy.lost.has('raced.json'), 'the first attempt was answered: nothing tested');
			assert.deepEqual((await direct.get('raced.json'))?.body, theirs);
		} finally {
			proxy.server.close();
		}
	});
});

after(async () => (await ensureRgw()).stop());
