// Concurrency inside one process and across processes (issue 7, defects 2 and 3), on local disk and on
// radosgw:
//   - same-ID races: two concurrent addMessages with one message ID on ONE memory object: exactly one is
//     refused, and what gets stored stays readable by every reader (a fresh object, decodeDocument);
//     two memory objects (two executions) flushing one ID: exactly one turn is stored;
//   - add during flush: a turn added while a flush is in flight is stored by the next flush, never dropped;
//   - 4 processes × 50 concurrent turns on one key: exactly the acknowledged turns are stored, each once.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';

import {
	clearDocumentCache,
	conversationMemoryKey,
	DuplicateMessageIdError,
	LocalDiskStorage,
	TokenBufferMemory,
} from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { assertTurnsOnce, idCounts, startWriter, storedDocument, turnIds } from '../support/faults';
import type { TurnWriterConfig } from '../support/faults';
import { ensureRgw, rgwStorage } from '../support/rgw';
import { tempDir } from '../support/storages';

const PROCESSES = 4;
const TURNS_EACH = 50;

interface Backend {
	name: string;
	make(): Promise<{
		storage: MemoryStorage;
		writer: Pick<TurnWriterConfig, 'backend' | 'root' | 'endpoint' | 'bucket'>;
	}>;
}

const backends: Backend[] = [
	{
		name: 'local disk',
		make: async () => {
			const root = tempDir();
			return { storage: new LocalDiskStorage({ root }), writer: { backend: 'disk', root } };
		},
	},
	{
		name: 'radosgw',
		make: async () => {
			const s3 = await rgwStorage();
			return { storage: s3, writer: { backend: 's3', endpoint: s3.endpoint, bucket: s3.bucket } };
		},
	},
];

/** What another process would see: the stored bytes, decoded without this process's cache. */
async function storedDoc(storage: MemoryStorage, key: string) {
	const doc = await storedDocument(storage, key);
	assert.ok(doc, `${key} exists`);
	return doc;
}

for (const backend of backends) {
	describe(`concurrency on ${backend.name}`, () => {
		for (const readFirst of [true, false]) {
			it(`two concurrent addMessages with one ID on one memory object (${readFirst ? 'after reading history' : 'as its first call'}): exactly one is refused`, async () => {
				const { storage } = await backend.make();
				const key = conversationMemoryKey('wf', 'same-id');
				const m = new TokenBufferMemory('wf', 'same-id', { storage });
				if (readFirst) await m.getHistoryPromptMessages();
				const added = await Promise.allSettled([
					m.addMessages({
						messageId: 'same',
						userContent: 'question A',
						assistantContent: 'answer A',
					}),
					m.addMessages({
						messageId: 'same',
						userContent: 'question B',
						assistantContent: 'answer B',
					}),
				]);
				const flushed = await m.flush().then(
					(r) => r,
					(e: unknown) => e,
				);

				// Whatever happened, nothing unreadable may have been stored: check as another process would.
				clearDocumentCache();
				const doc = await storedDocument(storage, key);
				if (doc) {
					assert.equal(idCounts(doc).get('same') ?? 0, 1);
					const fresh = await new TokenBufferMemory('wf', 'same-id', { storage }).messages();
					assert.deepEqual(
						fresh.map((x) => x.message_id),
						doc.messages.map((x) => x.message_id),
					);
				}

				const refused = added.filter((r) => r.status === 'rejected');
				assert.equal(
					refused.length,
					1,
					`exactly one refused: ${JSON.stringify(added.map((r) => r.status))}`,
				);
				assert.ok(
					(refused[0] as PromiseRejectedResult).reason instanceof DuplicateMessageIdError,
					String((refused[0] as PromiseRejectedResult).reason),
				);
				assert.deepEqual(flushed, { written: true, attempts: 1 });
				assertTurnsOnce(await storedDoc(storage, key), ['same']);
			});
		}

		it('two memory objects (two executions) flushing one ID at once: one turn stored, the other refused', async () => {
			const { storage } = await backend.make();
			const key = conversationMemoryKey('wf', 'two-objects');
			const objects = [
				new TokenBufferMemory('wf', 'two-objects', { storage }),
				new TokenBufferMemory('wf', 'two-objects', { storage }),
			];
			await Promise.all(objects.map((m) => m.getHistoryPromptMessages()));
			await Promise.all(
				objects.map((m, i) =>
					m.addMessages({
						messageId: 'same',
						userContent: `question ${i}`,
						assistantContent: `answer ${i}`,
					}),
				),
			);
			const flushed = await Promise.allSettled(objects.map((m) => m.flush()));
			assert.deepEqual(flushed.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
			const refused = flushed.find((r) => r.status === 'rejected') as PromiseRejectedResult;
			assert.ok(refused.reason instanceof DuplicateMessageIdError, String(refused.reason));
			clearDocumentCache();
			const doc = await storedDoc(storage, key);
			assertTurnsOnce(doc, ['same']);
			assert.equal(doc.messages.length, 2);
		});

		it('a turn added while a flush is in flight is stored by the next flush', async () => {
			const { storage } = await backend.make();
			const key = conversationMemoryKey('wf', 'add-during-flush');
			// Hold the first write until t2 has been added, so the flush is surely in flight meanwhile.
			let release!: () => void;
			let entered!: () => void;
			const gate = new Promise<void>((r) => (release = r));
			const inPut = new Promise<void>((r) => (entered = r));
			const put = storage.put.bind(storage);
			let held = false;
			storage.put = async (...args: Parameters<MemoryStorage['put']>) => {
				if (!held && args[0] === key) {
					held = true;
					entered();
					await gate;
				}
				return put(...args);
			};

			const m = new TokenBufferMemory('wf', 'add-during-flush', { storage });
			await m.getHistoryPromptMessages();
			await m.addMessages({
				messageId: 't1',
				userContent: 'question 1',
				assistantContent: 'answer 1',
			});
			const first = m.flush();
			await inPut;
			await m.addMessages({
				messageId: 't2',
				userContent: 'question 2',
				assistantContent: 'answer 2',
			});
			release();
			assert.equal((await first).written, true);
			assert.equal((await m.flush()).written, true, 'the second flush had t2 to write');

			clearDocumentCache();
			const doc = await storedDoc(storage, key);
			assert.deepEqual(turnIds(doc), ['t1', 't2']);
			assertTurnsOnce(doc, ['t1', 't2']);
			assert.equal(
				doc.messages.find((x) => x.message_id === 't2:user')?.parent_message_id,
				't1',
				't2 follows t1',
			);
		});

		it(`${PROCESSES} processes × ${TURNS_EACH} concurrent turns on one key: exactly the acknowledged turns, each once`, async () => {
			const { storage, writer } = await backend.make();
			const key = conversationMemoryKey('wf', 'crowd');
			const writers = Array.from({ length: PROCESSES }, (_, p) =>
				startWriter({
					...writer,
					conversationId: 'crowd',
					tag: `p${p}`,
					turns: TURNS_EACH,
					parallel: true,
				}),
			);
			try {
				await Promise.all(writers.map((w) => w.exited));
			} finally {
				for (const w of writers) w.child.kill('SIGKILL');
			}
			for (const w of writers) {
				assert.ok(w.done, `writer finished: ${w.stderr()}`);
				assert.deepEqual(w.failed, [], 'no turn failed');
			}
			const acked = writers.flatMap((w) => [...w.acked]);
			assert.equal(acked.length, PROCESSES * TURNS_EACH);
			const doc = await storedDoc(storage, key);
			assert.deepEqual(turnIds(doc).sort(), acked.slice().sort(), 'exactly the acknowledged turns');
			assertTurnsOnce(doc, acked);
		});
	});
}

after(async () => (await ensureRgw()).stop());
