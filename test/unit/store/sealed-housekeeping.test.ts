// Housekeeping knows sealed segments and indexes: deleting a conversation leaves no copy of its messages,
// prune never deletes a segment a live document references, and unreferenced ones go once old enough.
import assert from 'node:assert/strict';
import { utimesSync, writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import {
	conversationMemoryKey,
	deleteConversationMemory,
	exportDocument,
	listConversationKeys,
	LocalDiskStorage,
	NodeTokenBufferMemory,
	parseKey,
	pruneMemory,
	sealedPrefix,
	TokenBufferMemory,
} from '../../../src/internal';
import type { MemoryStorage } from '../../../src/internal';
import { tempDisk } from '../../support/storages';
import { SMALL } from './support';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
const DAY = 86_400_000;

async function chat(storage: MemoryStorage, conversation: string, n: number, node?: string) {
	for (let i = 0; i < n; i++) {
		const options = { storage, model: 'gpt-4o-mini', log: SMALL };
		const m = node
			? new NodeTokenBufferMemory('wf', conversation, node, options)
			: new TokenBufferMemory('wf', conversation, options);
		await m.addMessages({
			userContent: `secret ${i}`,
			assistantContent: `noted ${i}`,
			...(i === 0
				? {
						userFiles: [
							{
								transferMethod: 'local_file' as const,
								data: PNG,
								mimeType: 'image/png',
								name: 'a.png',
							},
						],
					}
				: {}),
		});
		await m.flush();
	}
}

function age(disk: LocalDiskStorage, key: string, days: number) {
	const t = new Date(Date.now() - days * DAY);
	utimesSync(path.join(disk.root, ...key.split('/')), t, t);
}

/** A file that looks like a sealed object of `head` but that no head references. */
function orphan(disk: LocalDiskStorage, head: string, name: string): string {
	const key = `${sealedPrefix(head)}${name}`;
	const file = path.join(disk.root, ...key.split('/'));
	mkdirSync(path.dirname(file), { recursive: true });
	writeFileSync(file, '{"version":3,"kind":"segment","head":"x","first":0,"messages":[]}');
	return key;
}

describe('key layout of sealed objects', () => {
	it('parseKey names the document a sealed object belongs to', () => {
		assert.deepEqual(parseKey('conversation_memory/wf/c.log/0-0000000064-0123456789abcdef.json'), {
			kind: 'sealed',
			scope: 'conversation',
			appId: 'wf',
			conversationId: 'c',
			headKey: 'conversation_memory/wf/c.json',
		});
		assert.deepEqual(
			parseKey('t/node_memory/wf/c/n.log/2-0000000000-0123456789abcdef.json', 't/'),
			{
				kind: 'sealed',
				scope: 'node',
				appId: 'wf',
				conversationId: 'c',
				nodeId: 'n',
				headKey: 't/node_memory/wf/c/n.json',
			},
		);
		assert.equal(parseKey('conversation_memory/wf/c.log/notes.txt'), undefined);
		assert.equal(
			parseKey('conversation_memory/wf/c.log.json')?.kind,
			'conversation',
			'a conversation may be called "c.log"',
		);
		assert.equal(
			sealedPrefix('conversation_memory/wf/c.log.json'),
			'conversation_memory/wf/c.log.log/',
		);
	});
});

describe('deleting a conversation', () => {
	it('removes its documents, their sealed segments and indexes, and its files: no copy of a message is left', async () => {
		const disk = tempDisk();
		await chat(disk, 'conv', 12);
		await chat(disk, 'conv', 12, 'nodeA');
		await chat(disk, 'other', 12);
		const listed = (await listConversationKeys(disk, 'wf', 'conv')).map((o) => o.key);
		assert.ok(
			listed.some((k) => parseKey(k)?.kind === 'sealed' && parseKey(k)?.scope === 'conversation'),
		);
		assert.ok(listed.some((k) => parseKey(k)?.kind === 'sealed' && parseKey(k)?.scope === 'node'));
		const heads = listed.filter((k) => ['conversation', 'node'].includes(parseKey(k)?.kind ?? ''));
		assert.deepEqual(
			listed.slice(0, heads.length),
			heads,
			'documents are listed (and deleted) first',
		);
		const deleted = await deleteConversationMemory(disk, 'wf', 'conv');
		assert.deepEqual(deleted.slice().sort(), listed.slice().sort());
		const left = [
			...(await disk.list('conversation_memory/wf/conv')),
			...(await disk.list('node_memory/wf/conv/')),
			...(await disk.list('memory_files/wf/conv/')),
		];
		assert.deepEqual(left, []);
		assert.equal(
			(await exportDocument(disk, conversationMemoryKey('wf', 'other')))!.messages.length,
			24,
			'other conversations untouched',
		);
	});

	it('clear() removes the document and its sealed objects', async () => {
		const disk = tempDisk();
		await chat(disk, 'conv', 12);
		const key = conversationMemoryKey('wf', 'conv');
		assert.ok((await disk.list(sealedPrefix(key))).length > 0);
		await new TokenBufferMemory('wf', 'conv', { storage: disk, log: SMALL }).clear();
		assert.deepEqual(await disk.list(sealedPrefix(key)), []);
		assert.equal(await disk.get(key), null);
	});
});

describe('pruning', () => {
	it('never deletes a segment a live document references, however old; unreferenced ones go once older than the safe age', async () => {
		const disk = tempDisk();
		await chat(disk, 'conv', 12);
		const key = conversationMemoryKey('wf', 'conv');
		const sealed = await disk.list(sealedPrefix(key));
		for (const o of sealed) age(disk, o.key, 40); // written long ago; the head was written just now
		const oldOrphan = orphan(disk, key, '0-0000000000-aaaaaaaaaaaaaaaa.json');
		age(disk, oldOrphan, 1);
		const youngOrphan = orphan(disk, key, '0-0000000000-bbbbbbbbbbbbbbbb.json');
		const dry = await pruneMemory(disk, { olderThanDays: 30, dryRun: true });
		assert.deepEqual(dry.deleted, [oldOrphan]);
		assert.ok((await disk.get(oldOrphan)) !== null, 'a dry run deletes nothing');
		const result = await pruneMemory(disk, { olderThanDays: 30 });
		assert.deepEqual(result.deleted, [oldOrphan]);
		assert.ok(
			(await disk.get(youngOrphan)) !== null,
			'may belong to a head being written right now',
		);
		assert.equal(
			(await exportDocument(disk, key))!.messages.length,
			24,
			'the live conversation is whole',
		);
		assert.equal((await disk.list('memory_files/wf/conv/')).length, 1, 'its files stay');
	});

	it('an old document goes with all its sealed objects and files', async () => {
		const disk = tempDisk();
		await chat(disk, 'old', 12);
		await chat(disk, 'new', 12);
		for (const o of await disk.list('')) if (o.key.includes('/old')) age(disk, o.key, 40);
		const result = await pruneMemory(disk, { olderThanDays: 30 });
		assert.ok(result.deleted.some((k) => parseKey(k)?.kind === 'sealed'));
		assert.deepEqual(
			(await disk.list('')).filter((o) => o.key.includes('/old')),
			[],
		);
		assert.equal(
			(await exportDocument(disk, conversationMemoryKey('wf', 'new')))!.messages.length,
			24,
		);
	});

	it('keeps everything an unreadable document may reference, and reports it', async () => {
		const disk = tempDisk();
		await chat(disk, 'conv', 12);
		const key = conversationMemoryKey('wf', 'conv');
		writeFileSync(path.join(disk.root, ...key.split('/')), '{"version":3,"messages":[');
		const sealed = await disk.list(sealedPrefix(key));
		for (const o of sealed) age(disk, o.key, 40);
		const result = await pruneMemory(disk, { olderThanDays: 30 });
		assert.deepEqual(result.deleted, []);
		assert.deepEqual(result.skipped.sort(), sealed.map((o) => o.key).sort());
		assert.equal((await disk.list(sealedPrefix(key))).length, sealed.length);
	});

	it('segments of a writer that lost its compare-and-swap are unreferenced: prune removes exactly those', async () => {
		const disk = tempDisk();
		await chat(disk, 'conv', 2);
		const key = conversationMemoryKey('wf', 'conv');
		// Two writers read the same version; both will seal; one loses the race and retries.
		const a = new TokenBufferMemory('wf', 'conv', { storage: disk, log: SMALL });
		const b = new TokenBufferMemory('wf', 'conv', { storage: disk, log: SMALL });
		await a.getHistoryPromptMessages();
		await b.getHistoryPromptMessages();
		for (let i = 0; i < 3; i++) {
			await a.addMessages({ userContent: `a${i}`, assistantContent: 'x' });
			await b.addMessages({ userContent: `b${i}`, assistantContent: 'y' });
		}
		await a.flush();
		assert.equal((await b.flush()).attempts, 2);
		const all = await disk.list(sealedPrefix(key));
		for (const o of all) age(disk, o.key, 1);
		const result = await pruneMemory(disk, { olderThanDays: 30 });
		assert.ok(result.deleted.length > 0, 'the loser’s first segments were orphans');
		assert.equal((await disk.list(sealedPrefix(key))).length, all.length - result.deleted.length);
		const doc = await exportDocument(disk, key);
		assert.equal(doc!.messages.length, 4 + 12);
	});
});
