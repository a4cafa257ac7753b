// Encryption at rest: every object the package writes through an EncryptedStorage is sealed with
// AES-256-GCM, names its key, and is bound to its place; wrong keys, tampering and missing keys are
// clear errors that leave the object untouched; plain objects stay readable; caches never hand an
// opened object to a storage without the key.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	ConversationMemory,
	CorruptDocumentError,
	EncryptedStorage,
	EncryptionKeyError,
	InvalidOptionError,
	isSealed,
	LocalDiskStorage,
	MemoryBase,
	parseEncryptionKey,
	reencrypt,
	VersionedData,
} from '../../../src/internal';
import { TestEmbedder } from '../../support/embeddings';
import { tempDir } from '../../support/storages';
import { expanded } from '../../support/stored-segments';

const SECRET = 'Zebra-Quasar-7731';
const newKey = () => parseEncryptionKey(randomBytes(32).toString('base64'));

function files(root: string): string[] {
	return readdirSync(root, { recursive: true, encoding: 'utf8' })
		.map((f) => path.join(root, f))
		.filter((f) => statSync(f).isFile());
}

/** Every byte under `root`: none may hold the secret, in any common encoding. */
function assertNoPlaintext(root: string, secret = SECRET) {
	const needles = [secret, Buffer.from(secret).toString('base64'), JSON.stringify(secret)];
	for (const f of files(root)) {
		const bytes = expanded(readFileSync(f));
		for (const n of needles) assert.ok(!bytes.includes(n), `${f} holds the secret in clear`);
	}
}

function setup() {
	const root = tempDir('encrypted');
	const disk = new LocalDiskStorage({ root });
	const key = newKey();
	return { root, disk, key, storage: new EncryptedStorage(disk, { current: key }) };
}

async function chat(storage: EncryptedStorage | LocalDiskStorage, text: string, id = 'c1') {
	const m = new ConversationMemory('wf', id, { storage });
	await m.addMessages({ userContent: text, assistantContent: `noted: ${text}` });
	await m.flush();
	return m;
}

const historyText = async (storage: EncryptedStorage | LocalDiskStorage, id = 'c1') =>
	(
		await new ConversationMemory('wf', id, { storage }).getHistoryPromptMessages({
			maxTokenLimit: 100_000,
		})
	).messages
		.map((m) => String(m.content))
		.join('\n');

describe('encryption at rest', () => {
	it('chat memory, versioned data and the Memory Base are sealed on disk and read back', async () => {
		const { root, storage } = setup();
		await chat(storage, `my code is ${SECRET}`);
		for (let i = 0; i < 70; i++)
			await chat(storage, `filler ${i} with the ${SECRET} inside`, 'long');
		const vd = new VersionedData({ storage, appId: 'wf', conversationId: 'c1' });
		await vd.saveVersion({ data: { code: SECRET }, summary: `set ${SECRET}` });
		const base = new MemoryBase({
			storage,
			baseId: 'wf',
			embedder: new TestEmbedder(),
			threshold: 1,
		});
		await base.capture({ sessionId: 'c1', runId: 'r1', texts: [`the user's code is ${SECRET}`] });
		await base.sync({ sessionId: 'c1' });
		assert.ok(
			files(root).length > 5,
			'documents, sealed segments, versions and the index were written',
		);
		assertNoPlaintext(root);
		for (const f of files(root)) assert.ok(isSealed(readFileSync(f)), `${f} is not sealed`);
		assert.match(await historyText(storage), new RegExp(SECRET));
		assert.match(await historyText(storage, 'long'), /filler 69/);
		assert.deepEqual((await vd.getCurrent())?.data, { code: SECRET });
		const hits = await base.search('code', { allUsers: true, k: 1 });
		assert.match(JSON.stringify(hits), new RegExp(SECRET));
	});

	it('plain objects stay readable and are sealed the next time they are written', async () => {
		const { disk, storage } = setup();
		await chat(disk, 'written before encryption');
		const key = 'conversation_memory/wf/c1.json';
		assert.ok(!isSealed((await disk.get(key))!.body));
		assert.match(await historyText(storage), /written before encryption/);
		await chat(storage, 'written after');
		assert.ok(isSealed((await disk.get(key))!.body));
		assert.match(await historyText(storage), /written before encryption[\s\S]*written after/);
	});

	it('a wrong key or no key is an error naming the key ID; the object is never overwritten', async () => {
		const { disk, key, storage } = setup();
		await chat(storage, SECRET);
		const objectKey = 'conversation_memory/wf/c1.json';
		const before = Buffer.from((await disk.get(objectKey))!.body);
		for (const other of [
			new EncryptedStorage(disk, { current: newKey() }),
			new EncryptedStorage(disk, {}),
		]) {
			await assert.rejects(historyText(other), (e: unknown) => {
				assert.ok(e instanceof EncryptionKeyError);
				assert.equal(e.keyId, key.id);
				assert.match(e.message, new RegExp(`${objectKey}.*${key.id}`));
				assert.ok(!e.message.includes(SECRET));
				return true;
			});
			await assert.rejects(chat(other, 'overwrite?'), EncryptionKeyError);
			assert.deepEqual(Buffer.from((await disk.get(objectKey))!.body), before);
		}
	});

	it('a flipped byte, or an object moved to another place, is corrupt and left untouched', async () => {
		const { root, disk, storage } = setup();
		await chat(storage, SECRET);
		await chat(storage, 'another', 'c2');
		const file = path.join(root, 'conversation_memory/wf/c1.json');
		const bytes = readFileSync(file);
		bytes[bytes.length - 3] ^= 0x01;
		writeFileSync(file, bytes);
		await assert.rejects(historyText(storage), (e: unknown) => {
			assert.ok(e instanceof CorruptDocumentError);
			assert.match(e.message, /conversation_memory\/wf\/c1\.json.*integrity/);
			return true;
		});
		await assert.rejects(chat(storage, 'overwrite?'), CorruptDocumentError);
		assert.deepEqual(readFileSync(file), bytes);
		// c2's valid ciphertext copied over c1: authenticated with its own place, so refused.
		writeFileSync(file, readFileSync(path.join(root, 'conversation_memory/wf/c2.json')));
		await assert.rejects(historyText(storage), CorruptDocumentError);
		assert.ok(await disk.get('conversation_memory/wf/c2.json'));
	});

	it('rotation: older keys read, new writes use the current key', async () => {
		const { disk, key: first } = setup();
		await chat(new EncryptedStorage(disk, { current: first }), 'before rotation');
		const second = newKey();
		const rotated = new EncryptedStorage(disk, { current: second, older: [first] });
		assert.match(await historyText(rotated), /before rotation/);
		await chat(rotated, 'after rotation');
		const body = (await disk.get('conversation_memory/wf/c1.json'))!.body;
		assert.ok(Buffer.from(body).includes(Buffer.from(second.id)));
		// The first key alone can no longer read it.
		await assert.rejects(
			historyText(new EncryptedStorage(disk, { current: first })),
			EncryptionKeyError,
		);
	});

	it('caches never hand an opened object to a storage without its key', async () => {
		const { disk, storage } = setup();
		await chat(storage, SECRET);
		assert.match(await historyText(storage), new RegExp(SECRET)); // now cached, opened
		await assert.rejects(historyText(new EncryptedStorage(disk, {})), EncryptionKeyError);
		await assert.rejects(historyText(disk), CorruptDocumentError);
		await assert.rejects(
			historyText(new EncryptedStorage(disk, { current: newKey() })),
			EncryptionKeyError,
		);
	});

	it('keys of the wrong length or encoding are refused, naming the field', () => {
		for (const bad of [
			'',
			'abc',
			'z'.repeat(64),
			'a'.repeat(62),
			Buffer.alloc(16).toString('base64'),
		])
			assert.throws(
				() => parseEncryptionKey(bad, 'key'),
				(e: unknown) => {
					assert.ok(e instanceof InvalidOptionError);
					assert.match(e.message, /Invalid key: must be a 256-bit key/);
					return true;
				},
			);
		const hex = randomBytes(32).toString('hex');
		assert.equal(
			parseEncryptionKey(hex).id,
			parseEncryptionKey(Buffer.from(hex, 'hex').toString('base64')).id,
		);
		assert.match(parseEncryptionKey(hex).id, /^k[0-9a-f]{16}$/);
	});
});

describe('Re-encrypt', () => {
	it('moves plain and older-key objects to the current key; the older key can then go', async () => {
		const { root, disk, key: first } = setup();
		await chat(disk, 'plain, before encryption', 'p1');
		await chat(new EncryptedStorage(disk, { current: first }), SECRET, 'c1');
		const base = new MemoryBase({
			storage: new EncryptedStorage(disk, { current: first }),
			baseId: 'wf',
			embedder: new TestEmbedder(),
			threshold: 1,
		});
		await base.capture({ sessionId: 'c1', runId: 'r1', texts: [`captured ${SECRET}`] });
		await base.sync({ sessionId: 'c1' });
		const second = newKey();
		const rotated = new EncryptedStorage(disk, { current: second, older: [first] });
		const one = await reencrypt(rotated, { appId: 'wf', conversationId: 'p1' });
		assert.equal(one.rewritten, 1);
		assert.match(await historyText(new EncryptedStorage(disk, { current: second }), 'p1'), /plain/);
		const all = await reencrypt(rotated);
		assert.ok(all.rewritten > 3 && all.current === 1, JSON.stringify(all));
		for (const f of files(root)) {
			const bytes = readFileSync(f);
			assert.ok(
				isSealed(bytes) && bytes.includes(Buffer.from(second.id)),
				`${f} not under the new key`,
			);
		}
		const only = new EncryptedStorage(disk, { current: second });
		assert.match(await historyText(only, 'c1'), new RegExp(SECRET));
		const search = new MemoryBase({ storage: only, baseId: 'wf', embedder: new TestEmbedder() });
		assert.match(
			JSON.stringify(await search.search('captured', { allUsers: true })),
			new RegExp(SECRET),
		);
		assert.deepEqual(
			[(await reencrypt(only)).rewritten, (await reencrypt(only)).changedMeanwhile],
			[0, []],
		);
		await assert.rejects(reencrypt(new EncryptedStorage(disk, {})), /Encryption/);
	});

	it('an object it cannot open stops it, untouched', async () => {
		const { disk } = setup();
		await chat(new EncryptedStorage(disk, { current: newKey() }), SECRET);
		const before = Buffer.from((await disk.get('conversation_memory/wf/c1.json'))!.body);
		await assert.rejects(
			reencrypt(new EncryptedStorage(disk, { current: newKey() })),
			EncryptionKeyError,
		);
		assert.deepEqual(Buffer.from((await disk.get('conversation_memory/wf/c1.json'))!.body), before);
	});
});
