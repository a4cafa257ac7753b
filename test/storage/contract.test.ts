// Storage contract: the same checks against LocalDiskStorage and a real S3 server (Ceph radosgw).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
	ConflictError,
	conversationMemoryKey,
	deleteConversationMemory,
	folderAfter,
	folderNames,
	forEachListed,
	listAppKeys,
	keyPages,
	listedPages,
	listConversationKeys,
	nodeMemoryKey,
	NodeTokenBufferMemory,
	pruneMemory,
	sortFolders,
	StorageError,
	TokenBufferMemory,
} from '../../src/internal';
import type { ListedObject, MemoryStorage } from '../../src/internal';
import { ensureRgw, rgwStorage } from '../support/rgw';
import { tempDisk } from '../support/storages';

const bytes = (s: string) => Buffer.from(s);
const str = (b: Uint8Array) => Buffer.from(b).toString();

function contract(name: string, make: () => Promise<MemoryStorage>) {
	describe(`storage contract: ${name}`, () => {
		let s: MemoryStorage;
		before(async () => {
			s = await make();
		});

		it('get of a missing key is null', async () => {
			assert.equal(await s.get('nothing/here.json'), null);
		});

		it('put then get returns the bytes and a version that changes with every write', async () => {
			const v1 = await s.put('a/one.json', bytes('first'));
			const got = await s.get('a/one.json');
			assert.equal(str(got!.body), 'first');
			assert.equal(got!.version, v1.version);
			const v2 = await s.put('a/one.json', bytes('second'));
			assert.notEqual(v2.version, v1.version);
			assert.equal((await s.get('a/one.json'))!.version, v2.version);
		});

		it('a conditional read skips an unchanged body and returns a changed one', async () => {
			const v1 = await s.put('nm/doc.json', bytes('one'));
			assert.deepEqual(await s.get('nm/doc.json', { ifNoneMatch: v1.version }), {
				notModified: true,
				version: v1.version,
			});
			const v2 = await s.put('nm/doc.json', bytes('two'));
			const got = await s.get('nm/doc.json', { ifNoneMatch: v1.version });
			assert.ok(got && 'body' in got);
			assert.equal(str(got.body), 'two');
			assert.equal(got.version, v2.version);
			await s.delete('nm/doc.json');
			assert.equal(await s.get('nm/doc.json', { ifNoneMatch: v2.version }), null);
		});

		it('create-only refuses an existing key and creates a missing one', async () => {
			await s.put('c/exists.json', bytes('x'));
			await assert.rejects(s.put('c/exists.json', bytes('y'), { ifVersion: null }), ConflictError);
			assert.equal(str((await s.get('c/exists.json'))!.body), 'x');
			await s.put('c/new.json', bytes('z'), { ifVersion: null });
			assert.equal(str((await s.get('c/new.json'))!.body), 'z');
		});

		it('compare-and-swap succeeds on the current version only', async () => {
			const { version } = await s.put('cas/doc.json', bytes('v1'));
			const next = await s.put('cas/doc.json', bytes('v2'), { ifVersion: version });
			await assert.rejects(
				s.put('cas/doc.json', bytes('stale'), { ifVersion: version }),
				ConflictError,
			);
			assert.equal(str((await s.get('cas/doc.json'))!.body), 'v2');
			await s.put('cas/doc.json', bytes('v3'), { ifVersion: next.version });
			await assert.rejects(
				s.put('cas/missing.json', bytes('x'), { ifVersion: version }),
				ConflictError,
			);
			assert.equal(await s.get('cas/missing.json'), null);
		});

		it('10 parallel create-only writes: exactly one wins', async () => {
			const results = await Promise.allSettled(
				Array.from({ length: 10 }, (_, i) =>
					s.put('race/create.json', bytes(`writer ${i}`), { ifVersion: null }),
				),
			);
			assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
			for (const r of results)
				if (r.status === 'rejected') assert.ok(r.reason instanceof ConflictError, String(r.reason));
		});

		it('10 parallel CAS writes on one version: exactly one wins', async () => {
			const { version } = await s.put('race/cas.json', bytes('base'));
			const results = await Promise.allSettled(
				Array.from({ length: 10 }, (_, i) =>
					s.put('race/cas.json', bytes(`writer ${i}`), { ifVersion: version }),
				),
			);
			assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
		});

		it('delete: missing key is fine; a stale version keeps the key', async () => {
			await s.delete('nothing/there.json');
			const { version } = await s.put('d/doc.json', bytes('1'));
			await s.put('d/doc.json', bytes('2'));
			await assert.rejects(s.delete('d/doc.json', { ifVersion: version }), ConflictError);
			assert.equal(str((await s.get('d/doc.json'))!.body), '2');
			await s.delete('d/doc.json', { ifVersion: (await s.get('d/doc.json'))!.version });
			assert.equal(await s.get('d/doc.json'), null);
		});

		it('lists by prefix with sizes, versions and times, and nothing else', async () => {
			await s.put('l/x/1.json', bytes('12'));
			await s.put('l/x/2.json', bytes('345'));
			await s.put('l/y/3.json', bytes('6'));
			await s.put('l/x2/4.json', bytes('7'));
			const xs = (await s.list('l/x/')).sort((a, b) => a.key.localeCompare(b.key));
			assert.deepEqual(
				xs.map((o) => [o.key, o.size]),
				[
					['l/x/1.json', 2],
					['l/x/2.json', 3],
				],
			);
			assert.equal(xs[0].version, (await s.get('l/x/1.json'))!.version);
			assert.ok(Math.abs(xs[0].lastModified.getTime() - Date.now()) < 120_000);
			assert.deepEqual((await s.list('l/x')).map((o) => o.key).sort(), [
				'l/x/1.json',
				'l/x/2.json',
				'l/x2/4.json',
			]);
			assert.deepEqual(await s.list('l/none/'), []);
		});

		it('lists the folders directly under a folder, each holding a key, without their keys', async () => {
			await s.put('f/a/1.json', bytes('1'));
			await s.put('f/a/deep/2.json', bytes('2'));
			await s.put('f/b/c/d/3.json', bytes('3'));
			await s.put('f/top.json', bytes('4'));
			await s.put('f/gone/5.json', bytes('5'));
			await s.delete('f/gone/5.json');
			await s.put('fx/6.json', bytes('6'));
			assert.deepEqual((await s.listFolders!('f/')).sort(), ['a', 'b']);
			assert.deepEqual((await s.listFolders!('f/b/')).sort(), ['c']);
			assert.deepEqual(await s.listFolders!('f/none/'), []);
			assert.ok((await s.listFolders!('')).includes('f'));
			assert.ok(!(await s.listFolders!('')).some((n) => n.startsWith('.')), 'no probe folder');
			await assert.rejects(s.listFolders!('f/a'), StorageError, 'not a folder');
			// The same as the names taken from every key (what a store without it falls back to).
			const listOnly = { list: (p: string) => s.list(p) } as unknown as MemoryStorage;
			assert.deepEqual(await folderNames(listOnly, 'f/'), ['a', 'b']);
			assert.deepEqual(await folderNames(s, 'f/'), ['a', 'b']);
		});

		it('lists a prefix page by page: pages of at most 1,000, together what one listing gives, each key once', async () => {
			const keys = Array.from({ length: 1_203 }, (_, i) => `lp/${i % 3}/k${i}.json`);
			for (let i = 0; i < keys.length; i += 50)
				await Promise.all(keys.slice(i, i + 50).map((k) => s.put(k, bytes('x'))));
			await s.put('lp2/other.json', bytes('y'));
			const pages: ListedObject[][] = [];
			for await (const page of s.listPages!('lp/')) pages.push(page);
			assert.ok(pages.length >= 2, `more than one page (${pages.length})`);
			assert.ok(pages.every((p) => p.length > 0 && p.length <= 1_000));
			const paged = pages.flat().map((o) => o.key);
			assert.equal(new Set(paged).size, paged.length, 'no key twice');
			assert.deepEqual([...paged].sort(), [...keys].sort());
			const whole = (await s.list('lp/')).map((o) => o.key);
			assert.deepEqual([...whole].sort(), [...paged].sort());
			const first = pages.flat().find((o) => o.key === 'lp/0/k0.json')!;
			assert.equal(first.version, (await s.get('lp/0/k0.json'))!.version);
			assert.equal(first.size, 1);
			// A partial name, a missing folder; a store without pages gives its listing as one.
			const partial: string[] = [];
			await forEachListed(s, 'lp/1/k10', (o) => {
				partial.push(o.key);
			});
			assert.deepEqual(partial.sort(), keys.filter((k) => k.startsWith('lp/1/k10')).sort());
			assert.ok(partial.length > 3 && partial.length < 401);
			for await (const page of s.listPages!('lp/none/')) assert.fail(`a page of ${page.length}`);
			const listOnly = { list: (p: string) => s.list(p) } as unknown as MemoryStorage;
			const onePage: ListedObject[][] = [];
			for await (const page of listedPages(listOnly, 'lp/2/')) onePage.push(page);
			assert.equal(onePage.length, 1);
			assert.equal(onePage[0].length, 401);
			// In any order (what an index's checks ask for): the same keys in pages, partial names too.
			const loose: string[][] = [];
			for await (const page of s.listPages!('lp/', { anyOrder: true }))
				loose.push(page.map((o) => o.key));
			assert.ok(loose.length >= 2 && loose.every((p) => p.length > 0 && p.length <= 1_000));
			assert.deepEqual(loose.flat().sort(), [...keys].sort());
			const partialLoose: string[] = [];
			const anyOrder = { anyOrder: true };
			await forEachListed(s, 'lp/1/k10', (o) => void partialLoose.push(o.key), anyOrder);
			assert.deepEqual(partialLoose.sort(), partial);
			// The keys alone: the same, in pages (on disk without reading each file's metadata).
			const keyed: string[][] = [];
			for await (const page of keyPages(s, 'lp/')) keyed.push(page);
			assert.ok(keyed.length >= 2 && keyed.every((p) => p.length > 0 && p.length <= 1_000));
			assert.deepEqual(keyed.flat().sort(), [...keys].sort());
			for await (const page of keyPages(s, 'lp/none/')) assert.fail(`a page of ${page.length}`);
			// Deleting what a page gave, between pages, loses nothing still there: in any order…
			const gone: string[] = [];
			await forEachListed(
				s,
				'lp/0/',
				async (o) => {
					gone.push(o.key);
					await s.delete(o.key);
				},
				anyOrder,
			);
			assert.deepEqual(gone.sort(), keys.filter((k) => k.startsWith('lp/0/')).sort());
			// …and in order.
			const seen: string[] = [...gone];
			await forEachListed(s, 'lp/', async (o) => {
				seen.push(o.key);
				await s.delete(o.key);
			});
			assert.deepEqual(seen.sort(), [...keys].sort());
			assert.deepEqual(await s.list('lp/'), []);
		});

		it('lists in any order, or keys alone, while another writer adds and deletes: every key there throughout comes once', async () => {
			const put = async (keys: string[]) => {
				for (let i = 0; i < keys.length; i += 50)
					await Promise.all(keys.slice(i, i + 50).map((k) => s.put(k, bytes('x'))));
			};
			const stay = Array.from({ length: 1_500 }, (_, i) => `lw/s${i}.json`);
			let removable = Array.from({ length: 300 }, (_, i) => `lw/g${i}.json`);
			await put([...stay, ...removable]);
			for (const mode of ['pages', 'keys']) {
				const added = Array.from({ length: 300 }, (_, i) => `lw/n-${mode}-${i}.json`);
				const pages: AsyncIterable<string[]> =
					mode === 'keys'
						? keyPages(s, 'lw/')
						: (async function* () {
								for await (const page of listedPages(s, 'lw/', { anyOrder: true }))
									yield page.map((o) => o.key);
							})();
				const seen = new Map<string, number>();
				let writer: Promise<unknown> | undefined;
				for await (const page of pages) {
					for (const key of page) seen.set(key, (seen.get(key) ?? 0) + 1);
					// Adds and deletes run while the rest of the listing is read.
					writer ??= Promise.all([put(added), ...removable.map((k) => s.delete(k))]);
				}
				await writer;
				assert.ok(writer, 'the listing gave a page');
				for (const key of stay) assert.equal(seen.get(key), 1, `${mode}: ${key}`);
				const known = new Set([...stay, ...removable, ...added]);
				for (const [key, times] of seen) {
					assert.equal(times, 1, `${mode}: ${key} came ${times} times`);
					assert.ok(known.has(key), `${mode}: ${key}`);
				}
				removable = added;
			}
		});

		it('lists folders a page at a time, after a name, in the order S3 lists their keys', async () => {
			const names = ['a', 'a-b', 'a.c', 'ab', 'b', 'z', 'Z', 'é', '中', '😀', 'a b'];
			for (const n of names) await s.put(`pg/${n}/x/1.json`, bytes('1'));
			await s.put('pg/a/2.json', bytes('2'));
			await s.put('pg/gone/1.json', bytes('3'));
			await s.delete('pg/gone/1.json');
			await s.put('pg/top.json', bytes('4'));
			const all = await s.listFolders!('pg/');
			// "name/" byte by byte: "-", "." and " " sort before "/", so "a-b" comes before "a".
			assert.deepEqual(all, ['Z', 'a b', 'a-b', 'a.c', 'a', 'ab', 'b', 'z', 'é', '中', '😀']);
			assert.deepEqual(sortFolders(names), all);
			const listOnly = { list: (p: string) => s.list(p) } as unknown as MemoryStorage;
			for (const limit of [1, 2, 3, 100]) {
				const seen: string[] = [];
				let after: string | undefined;
				for (let page = await s.listFolders!('pg/', { limit }); page.length > 0;) {
					assert.ok(page.length <= limit, `a page of at most ${limit}`);
					assert.deepEqual(await folderNames(listOnly, 'pg/', { after, limit }), page);
					seen.push(...page);
					assert.ok(seen.length <= all.length, 'no folder twice');
					after = page[page.length - 1];
					page = await s.listFolders!('pg/', { after, limit });
				}
				assert.deepEqual(seen, all, `pages of ${limit}: every folder once, in order`);
			}
			assert.deepEqual(await s.listFolders!('pg/', { after: 'a' }), all.slice(5));
			assert.deepEqual(await s.listFolders!('pg/', { after: 'aa', limit: 2 }), ['ab', 'b']);
			assert.deepEqual(await s.listFolders!('pg/', { after: '😀' }), []);
			assert.ok(folderAfter('a', 'a-b') && !folderAfter('a-b', 'a'));
			await assert.rejects(folderNames(s, 'pg/', { limit: 0 }), StorageError);
		});

		it('refuses unsafe keys', async () => {
			for (const key of [
				'../escape.json',
				'/abs.json',
				'a//b.json',
				'a/./b.json',
				'a\\b.json',
				'nul\u0000.json',
				'',
			])
				await assert.rejects(s.put(key, bytes('x')), StorageError, JSON.stringify(key));
		});

		it('memory round trip with housekeeping: list, delete a conversation, prune', async () => {
			const options = { storage: s, keyPrefix: 'hk' };
			const img = {
				transferMethod: 'local_file' as const,
				data: bytes('img'),
				mimeType: 'image/png',
				name: 'i.png',
			};
			for (const node of ['n1', 'n2']) {
				const m = new NodeTokenBufferMemory('wf', 'conv1', node, options);
				await m.addMessages({ userContent: 'q', assistantContent: 'a', userFiles: [img] });
				await m.flush();
			}
			const c = new TokenBufferMemory('wf', 'conv1', options);
			await c.addMessages({ userContent: 'q', assistantContent: 'a' });
			await c.flush();
			const other = new TokenBufferMemory('wf', 'conv2', options);
			await other.addMessages({ userContent: 'q', assistantContent: 'a' });
			await other.flush();

			const keys = (await listConversationKeys(s, 'wf', 'conv1', options)).map((o) => o.key).sort();
			assert.equal(keys.length, 4);
			assert.deepEqual(
				keys.slice(0, 3),
				[
					conversationMemoryKey('wf', 'conv1', 'hk'),
					'hk/memory_files/wf/conv1/' + keys[1].split('/').pop(),
					nodeMemoryKey('wf', 'conv1', 'n1', 'hk'),
				].sort(),
			);
			assert.equal((await listAppKeys(s, 'wf', options)).length, 5);

			assert.equal((await deleteConversationMemory(s, 'wf', 'conv1', options)).length, 4);
			assert.deepEqual(await listConversationKeys(s, 'wf', 'conv1', options), []);
			assert.equal(
				(await other.getHistoryPromptMessages()).turns,
				1,
				'other conversations untouched',
			);

			const notYet = await pruneMemory(s, { olderThanDays: 1, keyPrefix: 'hk' });
			assert.deepEqual(notYet.deleted, []);
			const dry = await pruneMemory(s, {
				olderThanDays: 1,
				keyPrefix: 'hk',
				now: new Date(Date.now() + 2 * 86_400_000),
				dryRun: true,
			});
			assert.deepEqual(dry.deleted, [conversationMemoryKey('wf', 'conv2', 'hk')]);
			assert.equal((await listAppKeys(s, 'wf', options)).length, 1);
			const real = await pruneMemory(s, {
				olderThanDays: 1,
				keyPrefix: 'hk',
				now: new Date(Date.now() + 2 * 86_400_000),
			});
			assert.deepEqual(real.deleted, dry.deleted);
			assert.deepEqual(await listAppKeys(s, 'wf', options), []);
		});
	});
}

contract('LocalDiskStorage', async () => tempDisk());
contract('S3Storage on Ceph radosgw', () => rgwStorage());

after(async () => (await ensureRgw()).stop());
