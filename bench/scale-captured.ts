/**
 * Scale benchmark of bases built the way a workflow builds them (not a test): prints a markdown table.
 * Each user's 100 messages go in through MemoryBase.capture, 10 at a time into the user's one
 * conversation (each capture reaches the threshold of 10 and syncs it), 8 users at a time, on local
 * disk. Then searches of every conversation (MemoryBase.searchReport(query, { allUsers: true, k: 5 }),
 * hybrid), for queries of random users (three words of one of their messages):
 *   - warm: in the process that built the base, its caches as the build left them;
 *   - cold: every cache emptied before each search, as a process that never read the base;
 * and, side by side, the same cold searches through every partition (the path before the base-wide
 * index). Requests, bytes read and the conversations read from their capture logs: medians per search.
 * The embedding model is a stand-in: hashed word features in 64 dimensions (demo/model-server.ts).
 *
 * Env: SCALE_CAPTURED_USERS (30,100,300,1000), SCALE_CAPTURED_SEARCHES (12 per kind),
 * SCALE_CAPTURED_PARTITIONS=0 to leave out the searches through every partition.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';

import { clearAllCaches, LocalDiskStorage, MemoryBase } from '../src/internal';
import { seededRandom } from '../test/support/embeddings';
import { ByKind, kindRows } from './read-kinds';
import {
	BASE_ID,
	HashEmbedder,
	messageText,
	ms,
	n,
	queryOf,
	requests,
	size,
	throughPartitions,
	topicsOf,
	uniform,
} from './scale';
import { loadLine, machineLine, median, percentile } from './stats';

const SIZES = (process.env.SCALE_CAPTURED_USERS ?? '30,100,300,1000').split(',').map(Number);
const SEARCHES = Number(process.env.SCALE_CAPTURED_SEARCHES ?? 12);
const MESSAGES = 100;
const PER_CAPTURE = 10;
const AT_ONCE = 8;
const PARTITIONS = process.env.SCALE_CAPTURED_PARTITIONS !== '0';

interface Measured {
	searches: number;
	p50: number;
	p95: number;
	requests: number;
	read: number;
	logs: number;
	/** GETs by kind of object, means per search. */
	kinds: Map<string, number>;
}

interface Row {
	users: number;
	buildMs: number;
	warm: Measured;
	cold: Measured;
	partitions?: Measured;
}

/** Each user's messages through capture, 10 at a time (each capture syncs), AT_ONCE users at a time. */
async function build(base: MemoryBase, users: number): Promise<void> {
	let next = 0;
	const one = async (u: number) => {
		const topics = topicsOf(u);
		for (let j = 0; j < MESSAGES; j += PER_CAPTURE) {
			const texts = Array.from({ length: PER_CAPTURE }, (_, i) => messageText(u, j + i, topics));
			const r = await base.capture({
				sessionId: `chat-user-${u}`,
				userId: `user-${u}`,
				runId: `run-${j}`,
				texts,
			});
			if (r.syncError) throw r.syncError;
		}
	};
	await Promise.all(
		Array.from({ length: AT_ONCE }, async () => {
			for (let u = next++; u < users; u = next++) await one(u);
		}),
	);
}

/** SEARCHES searches of every conversation; `cold`: every cache emptied before each. */
async function searches(
	base: MemoryBase,
	counted: ByKind,
	users: number,
	seed: number,
	cold: boolean,
): Promise<Measured> {
	const rand = seededRandom(seed);
	const times: number[] = [];
	const reqs: number[] = [];
	const read: number[] = [];
	const logs: number[] = [];
	counted.kinds.clear();
	for (let i = 0; i < SEARCHES; i++) {
		const query = queryOf(uniform(rand, users), rand).text;
		if (cold) clearAllCaches();
		counted.take();
		const t = performance.now();
		const r = await base.searchReport(query, { allUsers: true, k: 5 });
		times.push(performance.now() - t);
		if (r.matches.length === 0) throw new Error(`nothing found for "${query}"`);
		const c = counted.take();
		reqs.push(requests(c));
		read.push(c.read);
		logs.push(r.coverage?.recentConversations ?? 0);
	}
	return {
		searches: SEARCHES,
		p50: median(times),
		p95: percentile(times, 0.95),
		requests: median(reqs),
		read: median(read),
		logs: median(logs),
		kinds: new Map([...counted.kinds].map(([k, v]) => [k, v / SEARCHES])),
	};
}

async function run(users: number): Promise<Row> {
	const root = path.join(tmpdir(), `scale-captured-${users}-${process.pid}`);
	await rm(root, { recursive: true, force: true });
	const counted = new ByKind(new LocalDiskStorage({ root, durable: false }));
	const base = new MemoryBase({ storage: counted, baseId: BASE_ID, embedder: new HashEmbedder() });
	console.error(`${n(users)} users: capturing…`);
	const t0 = performance.now();
	await build(base, users);
	const buildMs = performance.now() - t0;
	console.error(`  built in ${ms(buildMs)}; searching…`);
	const warm = await searches(base, counted, users, 7, false);
	const cold = await searches(base, counted, users, 7, true);
	const partitions = PARTITIONS
		? await throughPartitions(counted, () => searches(base, counted, users, 7, true))
		: undefined;
	await rm(root, { recursive: true, force: true });
	return { users, buildMs, warm, cold, partitions };
}

function table(rows: Row[]): string[] {
	const line = (r: Row, name: string, m: Measured) =>
		`| ${n(r.users)} | ${ms(r.buildMs)} | ${name} | ${ms(m.p50)} | ${ms(m.p95)} | ${n(m.requests)} | ${size(m.read)} | ${n(m.logs)} |`;
	const first = rows[0];
	const last = rows[rows.length - 1];
	const ratio = (pick: (r: Row) => number) => `${(pick(last) / pick(first)).toFixed(2)}×`;
	return [
		`### Memory Base: a search of every conversation, the base built by capture\n`,
		`${machineLine()}; ${loadLine()}\n`,
		`Users of ${MESSAGES} messages, captured ${PER_CAPTURE} at a time through MemoryBase.capture (each capture syncs), ${AT_ONCE} users at a time, on local disk; hashed-word stand-in vectors of 64 dimensions. ${SEARCHES} hybrid searches of every conversation (k 5) per row, queries of random users. Warm: in the building process; cold: every cache emptied before each search; through every partition: the same cold searches the way before the base-wide index. Requests, bytes read and logs read (conversations read from their capture logs): medians.\n`,
		'| users | build | search | p50 | p95 | requests | bytes read | logs read |',
		'|---:|---:|---|---:|---:|---:|---:|---:|',
		...rows.flatMap((r) => [
			line(r, 'warm', r.warm),
			line(r, 'cold', r.cold),
			...(r.partitions ? [line(r, 'cold, through every partition', r.partitions)] : []),
		]),
		'',
		`From ${n(first.users)} to ${n(last.users)} users, requests per search: warm ${ratio((r) => r.warm.requests)}, cold ${ratio((r) => r.cold.requests)}; ${first.partitions && last.partitions ? `through every partition ${ratio((r) => r.partitions!.requests)}; ` : ''}cold p95 ${ratio((r) => r.cold.p95)}.`,
		'',
		`GETs of a search of every conversation by what they read (means per search):\n`,
		`| what is read | ${rows.flatMap((r) => [`${n(r.users)} warm`, `${n(r.users)} cold`]).join(' | ')} |`,
		`|---|${rows.flatMap(() => ['---:', '---:']).join('|')}|`,
		...kindRows(rows.flatMap((r) => [r.warm.kinds, r.cold.kinds])),
	];
}

async function main(): Promise<void> {
	const rows: Row[] = [];
	for (const users of SIZES) rows.push(await run(users));
	console.log(table(rows).join('\n'));
}

main().catch((e: unknown) => {
	console.error(e);
	process.exit(1);
});
