/**
 * Admin pages at scale (not a test): prints a markdown table. What the Memory Base's listings cost as
 * the base grows: Status of the whole base (a page of 100 conversations, the first and one further
 * on), List Captured Messages of every conversation (the first page of 50, and one at offset 5,000),
 * and one user's messages; beside the plain baseline on the same base, every capture log read once
 * (what Status and the listing of every conversation read before they went by pages).
 *
 * Bases: those `bench/scale.ts` keeps (SCALE_BENCH_KEEP=1 prints their folders), given as
 * SCALE_ADMIN_ROOTS, comma-separated `users=folder` (local disk), say
 * `1000=/tmp/scale-bench-a,100000=/tmp/scale-bench-b`. Each base is measured in this process,
 * one operation after the other, the process's caches emptied before each; held: the bytes the
 * process held beyond its caches while the operation ran (heldDuring; garbage is collected first).
 * SCALE_ADMIN_BASELINE=0 leaves the baseline out (at 100,000 users it reads for minutes).
 * SCALE_ADMIN_FORGET=1 adds Forget User of one filler user (user-777: it changes the base, so run it
 * on a copy); SCALE_ADMIN_REGENERATE=1 adds Regenerate, last (it embeds every message again: 2 minutes
 * at 1,000 users here, longer beyond), with the writes of the base-wide manifests it made;
 * SCALE_ADMIN_WHOLE=1 adds a whole-base Sync Now (before Regenerate: nothing is pending, but it takes
 * every conversation's lease and reads every log) and Delete of the base, last (run it on a copy). Three
 * listings come first: every conversation (what a whole-base lock takes), every partition of each
 * index (what a user's Status and Forget look through): what each holds is what it keeps; then the
 * check of the base-wide index for lost parts that a whole-base Status makes (one listing of each of
 * its folders).
 */
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { clearAllCaches, forgetUser, LocalDiskStorage, MemoryBase } from '../src/internal';
import { BaseIndexes } from '../src/knowledge/base-indexes';
import { listSessions, readLog } from '../src/knowledge/capture-log';
import { BASE_ID, Counted, f, HashEmbedder, heldDuring, n, requests, size } from './scale';
import { loadLine, machineLine } from './stats';

// heldDuring collects garbage before each sample: without it, the held column counts garbage too.
if (!(globalThis as { gc?: unknown }).gc) {
	setFlagsFromString('--expose-gc');
	(globalThis as { gc?: unknown }).gc = runInNewContext('gc');
}

interface Row {
	users: number;
	op: string;
	ms: number;
	requests: number;
	held: number;
	out: string;
}

/** Every capture log read once, a few side by side: what the whole-base admin reads cost before pages. */
async function everyLog(base: MemoryBase): Promise<string> {
	const p = (base as unknown as { parts: Parameters<typeof readLog>[0] }).parts;
	const ids = await listSessions(p);
	let captured = 0;
	for (let i = 0; i < ids.length; i += 16) {
		const logs = await Promise.all(ids.slice(i, i + 16).map((s) => readLog(p, s)));
		captured += logs.reduce((sum, l) => sum + l.log.next_seq - 1, 0);
	}
	return `${n(ids.length)} conversations, ${n(captured)} messages`;
}

/** The check Status makes of the base-wide index: one listing of each index's folder against its manifest. */
async function lostParts(parts: Parameters<typeof BaseIndexes.open>[0]): Promise<string> {
	const indexes = await BaseIndexes.open(parts);
	const words = await indexes.wideLexical().lostSegments();
	const vectors = await indexes.wideVectors().lostSegments();
	const listed = (m: { version: unknown; doc?: { segments: unknown[] } }) =>
		m.version === null ? 0 : (m.doc?.segments.length ?? 0);
	return `${words.missing.length + vectors.missing.length} lost; segments listed ${listed(words.manifest)} + ${listed(vectors.manifest)}`;
}

/** Regenerate, and how often it wrote the base-wide manifests (each lists every segment). */
async function regenerated(base: MemoryBase, counted: Counted): Promise<string> {
	const writes = new Map<string, number>();
	const put = counted.put.bind(counted);
	counted.put = (key, body, options) => {
		if (key.endsWith('/manifest.json') && key.includes('/wide'))
			writes.set(key, (writes.get(key) ?? 0) + 1);
		return put(key, body, options);
	};
	try {
		const result = await base.regenerate();
		const manifests = [...writes.values()].join(' + ') || '0';
		return `${n(result.conversations)} conversations, ${n(result.chunks)} chunks; base-wide manifests written ${manifests} times`;
	} finally {
		counted.put = put;
	}
}

async function measureBase(users: number, root: string, baseline: boolean): Promise<Row[]> {
	const counted = new Counted(new LocalDiskStorage({ root }));
	const base = new MemoryBase({ storage: counted, baseId: BASE_ID, embedder: new HashEmbedder() });
	const parts = (base as unknown as { parts: Parameters<typeof BaseIndexes.open>[0] }).parts;
	const partitions = async (kind: 'lexical' | 'vector') =>
		`${n((await (await BaseIndexes.open(parts)).partHashes(kind)).length)} partitions`;
	const ops: Array<[string, () => Promise<string>]> = [
		['every conversation listed', async () => `${n((await base.sessions()).length)} conversations`],
		['every word partition listed', () => partitions('lexical')],
		['every vector partition listed', () => partitions('vector')],
		['base-wide index checked for lost parts', () => lostParts(parts)],
		[
			'Status, first page (100)',
			async () => `${(await base.status()).sessions.length} conversations`,
		],
		[
			'Status, a page further on',
			async () => `${(await base.status({ after: 'chat-user-5' })).sessions.length} conversations`,
		],
		[
			'List Captured, every conversation, first 50',
			async () => `${(await base.listMessages({ allUsers: true, limit: 50 })).messages.length}`,
		],
		[
			'List Captured, every conversation, offset 5,000',
			async () =>
				`${(await base.listMessages({ allUsers: true, offset: 5000, limit: 50 })).messages.length}`,
		],
		[
			'List Captured, one user (user-500)',
			async () => `${(await base.listMessages({ userId: 'user-500', limit: 50 })).total}`,
		],
	];
	if (baseline) ops.push(['baseline: every capture log read', () => everyLog(base)]);
	if (process.env.SCALE_ADMIN_FORGET === '1')
		ops.push([
			'Forget User (user-777)',
			async () => {
				const r = await forgetUser(counted, { userId: 'user-777' });
				return `${r.conversationIds.length} conversations, ${n(r.deleted.length)} deleted, ${n(r.rewritten.length)} rewritten`;
			},
		]);
	const whole = process.env.SCALE_ADMIN_WHOLE === '1';
	if (whole)
		ops.push([
			'Sync Now, whole base (nothing pending)',
			async () => {
				const r = await base.sync();
				return `${n(r.conversations)} conversations (${n(r.sessions.length)} listed), ${n(r.messages)} messages`;
			},
		]);
	if (process.env.SCALE_ADMIN_REGENERATE === '1')
		ops.push(['Regenerate', () => regenerated(base, counted)]);
	if (whole)
		ops.push(['Delete', async () => `${n((await base.delete()).deleted)} objects deleted`]);
	const rows: Row[] = [];
	for (const [op, run] of ops) {
		clearAllCaches();
		counted.take();
		const t0 = performance.now();
		const { out, held } = await heldDuring(run);
		const took = performance.now() - t0;
		rows.push({ users, op, ms: took, requests: requests(counted.take()), held, out });
		console.error(`  ${n(users)} users: ${op}: ${f(took / 1000, 2)} s`);
	}
	return rows;
}

async function main(): Promise<void> {
	const roots = (process.env.SCALE_ADMIN_ROOTS ?? '').split(',').filter(Boolean);
	if (roots.length === 0)
		throw new Error('SCALE_ADMIN_ROOTS: the folders of bases bench/scale.ts kept');
	const baseline = process.env.SCALE_ADMIN_BASELINE !== '0';
	const rows: Row[] = [];
	for (const entry of roots) {
		const [users, root] = entry.split('=');
		rows.push(...(await measureBase(Number(users), root, baseline)));
	}
	const out = [
		'## Admin pages at scale (local disk)',
		'',
		machineLine(),
		loadLine(),
		'',
		'| users | operation | time | requests | held beyond caches | answer |',
		'|---:|---|---:|---:|---:|---|',
		...rows.map(
			(r) =>
				`| ${n(r.users)} | ${r.op} | ${f(r.ms / 1000, 2)} s | ${n(r.requests)} | ${size(r.held)} | ${r.out} |`,
		),
	];
	console.log(out.join('\n'));
}

main().catch((error) => {
	console.error(error);
	process.exit(1);
});
