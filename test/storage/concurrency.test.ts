// 50 turns appended concurrently to one key from 5 processes, on disk and on radosgw: none may be lost.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

import { extractThread, TokenBufferMemory } from '../../src/internal';
import type { MemoryStorage } from '../../src/internal';
import { ensureRgw, rgwStorage, runWorkers } from '../support/rgw';
import { tempDir } from '../support/storages';
import { LocalDiskStorage } from '../../src/internal';

const WORKER = path.resolve(__dirname, '../support/append-worker.ts');
const PROCESSES = 5;
const TURNS_EACH = 10;

async function race(storage: MemoryStorage, config: object) {
	const outputs = await runWorkers(
		WORKER,
		Array.from({ length: PROCESSES }, (_, p) => ({ ...config, turns: TURNS_EACH, tag: `p${p}` })),
		120_000,
	);
	const reported = outputs.flatMap((o) => JSON.parse(o) as { id: string; attempts: number }[]);
	const doc = await new TokenBufferMemory('wf', 'race', { storage }).messages();
	return { reported, doc };
}

function assertNothingLost(
	reported: { id: string; attempts: number }[],
	doc: Awaited<ReturnType<typeof race>>['doc'],
) {
	const total = PROCESSES * TURNS_EACH;
	assert.equal(reported.length, total);
	assert.equal(doc.length, total * 2, 'exactly 50 turns stored');
	const stored = doc
		.filter((m) => m.role === 'assistant')
		.map((m) => m.message_id)
		.sort();
	assert.deepEqual(stored, reported.map((r) => r.id).sort());
	const thread = extractThread('race', doc);
	assert.equal(
		thread.length,
		total * 2,
		'all 50 turns form one thread: later turns follow earlier ones',
	);
	assert.ok(
		reported.some((r) => r.attempts > 1),
		'writers really conflicted',
	);
}

describe('concurrent appends from several processes', () => {
	it(`local disk: ${PROCESSES} processes × ${TURNS_EACH} turns`, async () => {
		const root = tempDir();
		const { reported, doc } = await race(new LocalDiskStorage({ root }), { backend: 'disk', root });
		assertNothingLost(reported, doc);
	});

	it(`radosgw: ${PROCESSES} processes × ${TURNS_EACH} turns`, async () => {
		const s3 = await rgwStorage();
		const { reported, doc } = await race(s3, {
			backend: 's3',
			endpoint: s3.endpoint,
			bucket: s3.bucket,
		});
		assertNothingLost(reported, doc);
	});
});

after(async () => (await ensureRgw()).stop());
