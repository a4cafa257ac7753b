import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { after, describe, it } from 'node:test';

import { S3Storage, StorageError, TokenBufferMemory, UnsafeStorageError } from '../../src/internal';
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
});

after(async () => (await ensureRgw()).stop());
