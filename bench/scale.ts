/**
 * Scale benchmark (not a test): prints markdown tables. How the Memory Base's cost for one user stays
 * put as the base grows, now that a base keeps one word index and one vector index per user
 * (src/knowledge/partitions.ts). Synthetic bases of 1,000, 10,000 and 100,000 users with 100 captured
 * messages each (one conversation per user, one chunk per message, 64-dimension vectors from a
 * deterministic hashed-word embedder) on local disk, and of 1,000 and 5,000 users on radosgw
 * (RGW_ENDPOINT; scripts/rgw.sh keeps objects in a memstore of RGW_MEMSTORE_BYTES, 3 GiB in
 * scripts/bench.sh; each size's objects are deleted before the next is built, but radosgw frees their
 * room later, so the 5,000-user base overflowed a 1 GiB store).
 *
 * Building: the base is created through MemoryBase (so its configuration says "partitioned"), then
 * MEASURED users capture their messages through the public path (MemoryBase.capture, 50 turns of two
 * messages; each fifth turn reaches the threshold and syncs), and every other ("filler") user's
 * partition is written with the engine's own writers: its messages as one sealed block and a capture
 * log as a sync leaves it (writeBlock, the log store), its chunks as the engine makes them (chunksOf,
 * lexicalChunks) into its partition's indexes, one user's 100 chunks per call, and into the base-wide
 * index 4,096 at a time (as an upgrade copies partitions into it), by BUILDERS processes side by side,
 * then the base-wide word index's term tiers settled (as an upgrade does). A filler user's partition thus holds
 * one lexical and one vector segment, where a user who captured through 10 syncs holds one lexical
 * segment with a tail and 10 vector segments (reported apart).
 *
 * Measuring: a fresh process (so its memory is the searches' own), with the caches the environment
 * configures (scripts/bench.sh: LLM_MEMORY_VECTOR_CACHE_MB=32, LLM_MEMORY_LEXICAL_CACHE_MB=16):
 *   - one user's hybrid recall, MemoryBase.search(query, { userId, k: 5 }), for SEARCHES distinct
 *     random users (each one's first search in the process: its partition read from storage), then
 *     the same user again with another query; time, requests and bytes read per search;
 *   - the process's memory after MEMORY_SEARCHES more searches of random users, and the caches' bytes;
 *   - captures into random existing users' conversations: one message (it opens the log for the word
 *     index), one more, then enough to reach the threshold (the capture syncs);
 *   - searches of every conversation (allUsers: the base-wide index), hybrid and words only, with the
 *     bytes held beyond the caches; at the smallest size also through every partition (the path
 *     before the base-wide index), as the baseline;
 *   - optionally (SCALE_BENCH_LEGACY, local disk) a base from before partitions ("single": one index
 *     for the whole base), built with the same writers, 100 users per call: its first search (which
 *     moves it), then the same recall.
 * Queries are three words of one of the user's messages; "its message in top 5" is a sanity check.
 *
 * Env: SCALE_BENCH_USERS (sizes on disk, 1000,10000,100000), SCALE_BENCH_RGW_USERS (sizes on
 * radosgw, 1000,5000), SCALE_BENCH_LEGACY (1000,10000; empty: none), SCALE_BENCH_CHUNKS (100),
 * SCALE_BENCH_MEASURED (10), SCALE_BENCH_SEARCHES (200), SCALE_BENCH_ALL_SEARCHES (20 up to 1,000
 * users, 5 up to 10,000, 3 beyond), SCALE_BENCH_BUILDERS (2), SCALE_BENCH_CONCURRENCY (users each builder writes at a
 * time: 16 on disk, 8 on radosgw, whose requests time out when a loaded machine queues too many),
 * SCALE_BENCH_STORAGES (disk,rgw), SCALE_BENCH_KEEP (set: each base is kept and its place printed, to
 * compare code on it), SCALE_BENCH_DIMENSIONS (64; 1536 shows what large vectors cost). Quick run:
 * SCALE_BENCH_USERS=1000,10000 SCALE_BENCH_LEGACY=1000.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { fakeEmbedding } from '../demo/model-server';
import {
	acquireLease,
	cacheStats,
	DEFAULT_THRESHOLD,
	folderNames,
	keyPages,
	listedPages,
	LEXICAL_CACHE_BYTES,
	LocalDiskStorage,
	MemoryBase,
	partHash,
	S3Storage,
	settleCellTiers,
	streamedRanking,
	settleTiers,
	userPart,
	VECTOR_CACHE_BYTES,
	wideLexicalPrefix,
} from '../src/internal';
import type {
	CapturedMessage,
	DeleteOptions,
	Embedder,
	FolderPage,
	GetOptions,
	IndexedChunk,
	ListedObject,
	ListOptions,
	MemoryStorage,
	NotModified,
	PutOptions,
	SearchMatch,
	SearchMode,
	SessionLog,
	WideCoverage,
	StoredObject,
} from '../src/internal';
import { BaseIndexes } from '../src/knowledge/base-indexes';
import { chunksOf, lexicalChunks, writeBlock } from '../src/knowledge/capture-log';
import { BaseParts } from '../src/knowledge/parts';
import { emptyLog } from '../src/knowledge/records';
import { register } from '../src/knowledge/registry';
import { seededRandom } from '../test/support/embeddings';
import { bucketStorage, RGW_CREDENTIALS } from '../test/support/rgw';
import { tempDir } from '../test/support/storages';
import { loadLine, machineLine, median, percentile } from './stats';

const DIMS = Number(process.env.SCALE_BENCH_DIMENSIONS ?? 64);
const list = (v: string | undefined, d: string) =>
	(v ?? d)
		.split(',')
		.filter((s) => s.trim() !== '')
		.map(Number);
const SIZES = list(process.env.SCALE_BENCH_USERS, '1000,10000,100000');
const CHUNKS = Number(process.env.SCALE_BENCH_CHUNKS ?? 100);
const MEASURED = Number(process.env.SCALE_BENCH_MEASURED ?? 10);
const SEARCHES = Number(process.env.SCALE_BENCH_SEARCHES ?? 200);
const MEMORY_SEARCHES = 1000;
const CAPTURES = 100;
/**
 * Searches of every conversation per base (hybrid; words only a third as many; the old path 3): each
 * reads the whole base-wide index, so fewer at the larger sizes (minutes each at 100,000 users).
 */
const allSearches = (users: number) =>
	Number(process.env.SCALE_BENCH_ALL_SEARCHES ?? (users <= 1000 ? 20 : users <= 10_000 ? 5 : 3));
const OLD_PATH_SEARCHES = 3;
/**
 * Radosgw sizes: scripts/rgw.sh keeps objects in a memstore (RAM) of RGW_MEMSTORE_BYTES (3 GiB in
 * scripts/bench.sh); 5,000 users store about 0.9 GiB and 10,000 about 1.8 GiB (100,000 would also take
 * over an hour to build). Each size's objects are deleted before the next is built.
 */
const RGW_SIZES = list(process.env.SCALE_BENCH_RGW_USERS, '1000,5000');
const LEGACY = list(process.env.SCALE_BENCH_LEGACY, '1000,10000');
const LEGACY_BATCH = 100;
/** Filler users' chunks written to the base-wide index at once (a segment's worth: WIDE_SEGMENT_CHUNKS). */
const WIDE_BATCH = 4096;
const concurrency = (spec: StorageSpec) =>
	Number(process.env.SCALE_BENCH_CONCURRENCY ?? (spec.kind === 'disk' ? 16 : 8));
const BUILDERS = Number(process.env.SCALE_BENCH_BUILDERS ?? 2);
/** Writers syncing while searches of every conversation run (whileSyncing). */
const WRITERS = Number(process.env.SCALE_BENCH_WRITERS ?? 2);
const STORAGES = (process.env.SCALE_BENCH_STORAGES ?? 'disk,rgw').split(',');
export const BASE_ID = 'scale';
/** The base's threshold (the default): a capture that brings the pending count to it syncs. */
const THRESHOLD = DEFAULT_THRESHOLD;

export const f = (x: number, d = 2) => x.toFixed(d);
export const n = (x: number) => Math.round(x).toLocaleString('en');
const mib = (bytes: number) => `${f(bytes / 2 ** 20, 1)} MiB`;
export function size(bytes: number): string {
	if (bytes >= 2 ** 30) return `${f(bytes / 2 ** 30, 2)} GiB`;
	if (bytes >= 2 ** 20) return `${f(bytes / 2 ** 20, 1)} MiB`;
	if (bytes >= 2 ** 10) return `${f(bytes / 2 ** 10, 1)} KiB`;
	return `${bytes} B`;
}
export const ms = (x: number) => (x >= 1000 ? `${f(x / 1000, 2)} s` : `${f(x, x < 10 ? 2 : 1)} ms`);

// ---------------------------------------------------------------------------------------------------
// Storage that counts requests and bytes.

interface Counts {
	get: number;
	put: number;
	list: number;
	delete: number;
	read: number;
	written: number;
}

const zero = (): Counts => ({ get: 0, put: 0, list: 0, delete: 0, read: 0, written: 0 });

/** Wraps a storage: counts requests, bytes of bodies read and written (same identity: same caches). */
export class Counted implements MemoryStorage {
	c = zero();
	constructor(readonly inner: MemoryStorage) {}

	describe(): string {
		return this.inner.describe();
	}

	identity(): string {
		return this.inner.identity?.() ?? this.inner.describe();
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		this.c.get++;
		const got = await this.inner.get(key, options);
		if (got && 'body' in got) this.c.read += got.body.length;
		return got;
	}

	async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		this.c.put++;
		this.c.written += body.length;
		return this.inner.put(key, body, options);
	}

	async delete(key: string, options?: DeleteOptions): Promise<void> {
		this.c.delete++;
		return this.inner.delete(key, options);
	}

	async list(prefix: string): Promise<ListedObject[]> {
		this.c.list++;
		return this.inner.list(prefix);
	}

	/** The inner store's pages, each one a list request (as each is one ListObjectsV2 on S3). */
	async *listPages(prefix: string, options?: ListOptions): AsyncGenerator<ListedObject[]> {
		for await (const page of listedPages(this.inner, prefix, options)) {
			this.c.list++;
			yield page;
		}
	}

	/** The inner store's pages of keys alone, likewise. */
	async *listKeys(prefix: string): AsyncGenerator<string[]> {
		for await (const page of keyPages(this.inner, prefix)) {
			this.c.list++;
			yield page;
		}
	}

	async listFolders(prefix: string, page?: FolderPage): Promise<string[]> {
		this.c.list++;
		return folderNames(this.inner, prefix, page);
	}

	/** The counts since the last call. */
	take(): Counts {
		const out = this.c;
		this.c = zero();
		return out;
	}
}

export const requests = (c: Counts) => c.get + c.put + c.list + c.delete;

type StorageSpec =
	{ kind: 'disk'; root: string } | { kind: 's3'; endpoint: string; bucket: string };

/** The storage of a spec; `build`: on disk, written without fsync (the bench's own fast path). */
function storageOf(spec: StorageSpec, build = false): MemoryStorage {
	if (spec.kind === 'disk') return new LocalDiskStorage({ root: spec.root, durable: !build });
	return new S3Storage({
		bucket: spec.bucket,
		endpoint: spec.endpoint,
		region: 'us-east-1',
		forcePathStyle: true,
		credentials: RGW_CREDENTIALS,
	});
}

// ---------------------------------------------------------------------------------------------------
// Synthetic users: deterministic words, messages and queries.

/** Hashed word features (the tests' fake embedding model) in DIMS dimensions, L2-normalised. */
export class HashEmbedder implements Embedder {
	async embedDocuments(texts: string[]): Promise<number[][]> {
		return texts.map((t) => fakeEmbedding(t, DIMS));
	}
	async embedQuery(text: string): Promise<number[]> {
		return fakeEmbedding(text, DIMS);
	}
}

export const uniform = (rand: () => number, count: number) => Math.floor((rand() + 0.5) * count);

/** 5,000 made-up words of two or three syllables (none an English stop word). */
const VOCAB = (() => {
	const rand = seededRandom(424242);
	const onsets = 'b c d f g h j k l m n p r s t v w z br cl dr fl gr kr pl st tr'.split(' ');
	const vowels = 'a e i o u ai ea io ou'.split(' ');
	const words = new Set<string>();
	while (words.size < 5000) {
		const syllables = 2 + uniform(rand, 2);
		let w = '';
		for (let i = 0; i < syllables; i++)
			w += onsets[uniform(rand, onsets.length)] + vowels[uniform(rand, vowels.length)];
		words.add(w);
	}
	return [...words];
})();

/** A user's dozen topic words (a user talks about the same things). */
export function topicsOf(user: number): string[] {
	const rand = seededRandom(user * 7919 + 1);
	return Array.from({ length: 12 }, () => VOCAB[uniform(rand, VOCAB.length)]);
}

/** Message `j` of `user`: 4 of its topic words and 10 common ones (skewed), in shuffled order. */
function messageWords(user: number, j: number, topics = topicsOf(user)): string[] {
	const rand = seededRandom(user * 100_003 + j * 31 + 17);
	const words = [
		...Array.from({ length: 4 }, () => topics[uniform(rand, topics.length)]),
		...Array.from({ length: 10 }, () => VOCAB[Math.floor((rand() + 0.5) ** 2 * VOCAB.length)]),
	];
	for (let i = words.length - 1; i > 0; i--) {
		const k = uniform(rand, i + 1);
		[words[i], words[k]] = [words[k], words[i]];
	}
	return words;
}

export const messageText = (user: number, j: number, topics?: string[]) =>
	`${messageWords(user, j, topics).join(' ')}.`;

/** A query for `user`: three words of one of its messages, and which message (seq) it came from. */
export function queryOf(user: number, rand: () => number): { text: string; seq: number } {
	const j = uniform(rand, CHUNKS);
	const words = messageWords(user, j);
	const picked = new Set<string>();
	while (picked.size < 3) picked.add(words[uniform(rand, words.length)]);
	return { text: [...picked].join(' '), seq: j + 1 };
}

/** Filler users are numbered 0 … fillers−1; measured users get numbers far from them. */
const MEASURED_FROM = 50_000_000;
const userIdOf = (u: number) =>
	u >= MEASURED_FROM ? `measured-${u - MEASURED_FROM}` : `user-${u}`;
const sessionOf = (u: number) => `chat-${userIdOf(u)}`;

// ---------------------------------------------------------------------------------------------------
// Building.

/** Runs fn(0 … count−1), `width` at a time, reporting progress. */
async function pool(
	count: number,
	width: number,
	fn: (i: number) => Promise<void>,
	progress: (done: number) => void,
): Promise<void> {
	let next = 0;
	let done = 0;
	await Promise.all(
		Array.from({ length: Math.min(width, count) }, async () => {
			while (next < count) {
				await fn(next++);
				progress(++done);
			}
		}),
	);
}

function progressLine(what: string, total: number) {
	const t0 = performance.now();
	const step = Math.max(1, Math.floor(total / 20));
	return (done: number) => {
		if (done % step !== 0 && done !== total) return;
		const s = (performance.now() - t0) / 1000;
		const rate = done / s;
		console.error(
			`  ${what}: ${n(done)} / ${n(total)} users, ${f(rate, 0)}/s, ${f(s, 0)} s, about ${f((total - done) / rate / 60, 1)} min left`,
		);
	};
}

/** A filler user's messages as a capture would have stored them (IDs random, times spread). */
function fillerMessages(u: number): CapturedMessage[] {
	const userId = userIdOf(u);
	const topics = topicsOf(u);
	const start = Date.UTC(2025, 0, 1) + (u % 365) * 86_400_000;
	return Array.from({ length: CHUNKS }, (_, j) => ({
		seq: j + 1,
		id: randomUUID(),
		run_id: `run-${u}-${j >> 1}`,
		text: messageText(u, j, topics),
		created_at: new Date(start + j * 60_000).toISOString(),
		user_id: userId,
		role: j % 2 === 0 ? 'user' : 'assistant',
	}));
}

/** The user's capture log as a sync of all its messages leaves it: one sealed block, cursor at the end. */
async function writeLog(p: BaseParts, u: number, messages: CapturedMessage[]): Promise<void> {
	const sessionId = sessionOf(u);
	const userId = userIdOf(u);
	const block = await writeBlock(p, sessionId, messages);
	const now = new Date().toISOString();
	const count = messages.length;
	const log: SessionLog = {
		...emptyLog(sessionId, messages[0].created_at),
		next_seq: count + 1,
		cursor: count,
		cursor_message_id: messages[count - 1].id,
		total_processed: count,
		last_sync_at: now,
		updated_at: now,
		sealed: [block],
		users: [userId],
		lexical: { through: count, open: false, gen: Date.now(), users: [userId] },
	};
	await p.logs.update(p.logKey(sessionId), (cur) => (cur.version === null ? log : undefined));
}

/**
 * Chunks of filler users gathered for the base-wide index, written a segment's worth at a time (as an
 * upgrade copies partitions into it): one write per user would make BUILDERS × concurrency writers
 * take turns on its manifests, which is not what a base of that size would have seen.
 */
class WideBatch {
	private words: IndexedChunk[] = [];
	private chunks: IndexedChunk[] = [];
	private rows: number[][] = [];
	private writing = Promise.resolve();

	constructor(private readonly indexes: BaseIndexes) {}

	add(lexical: IndexedChunk[], vectors: IndexedChunk[], rows: number[][]): Promise<void> {
		this.words.push(...lexical);
		this.chunks.push(...vectors);
		this.rows.push(...rows);
		return this.chunks.length >= WIDE_BATCH ? this.flush(WIDE_BATCH) : Promise.resolve();
	}

	/** Writes what was gathered in whole segments (the rest stays for later), or all of it with 1. */
	flush(whole = 1): Promise<void> {
		const n = this.chunks.length - (this.chunks.length % whole);
		const w = this.words.length - (this.words.length % whole);
		const [words, chunks, rows] = [
			this.words.splice(0, w),
			this.chunks.splice(0, n),
			this.rows.splice(0, n),
		];
		this.writing = this.writing.then(async () => {
			if (words.length > 0) await this.indexes.wideLexical().addOlder(words);
			if (chunks.length > 0) await this.indexes.wideVectors().add(chunks, rows, { older: true });
		});
		return this.writing;
	}
}

/** Writes filler users `users`: their logs, their partitions, their chunks into the base-wide batch. */
async function writeUsers(
	p: BaseParts,
	indexes: BaseIndexes,
	kbId: string,
	users: number[],
	wide?: WideBatch,
): Promise<void> {
	const vectors = [];
	const lexical = [];
	const logs: Promise<void>[] = [];
	for (const u of users) {
		const messages = fillerMessages(u);
		logs.push(writeLog(p, u, messages));
		vectors.push(...chunksOf(p, kbId, sessionOf(u), messages));
		lexical.push(...lexicalChunks(p, sessionOf(u), messages));
	}
	const rows = vectors.map((c) => fakeEmbedding(c.text, DIMS));
	if (!wide) {
		// One index for the whole base (a base from before partitions).
		await Promise.all([...logs, indexes.addLexical(lexical), indexes.addVectors(vectors, rows)]);
		return;
	}
	const part = userPart(userIdOf(users[0]));
	await Promise.all([
		...logs,
		indexes.lexicalPart(part).add(lexical),
		indexes.vectorPart(part).add(vectors, rows),
	]);
	await wide.add(lexical, vectors, rows);
}

/** A measured user: 50 turns of two messages through MemoryBase.capture (threshold syncs), then Sync. */
async function captureUser(base: MemoryBase, u: number): Promise<void> {
	const userId = userIdOf(u);
	const sessionId = sessionOf(u);
	const topics = topicsOf(u);
	for (let j = 0; j < CHUNKS; j += 2) {
		const messages = [{ role: 'user', text: messageText(u, j, topics) }];
		if (j + 1 < CHUNKS) messages.push({ role: 'assistant', text: messageText(u, j + 1, topics) });
		const r = await base.capture({ sessionId, userId, runId: `turn-${j >> 1}`, messages });
		if (r.syncError) throw r.syncError;
	}
	await base.sync({ sessionId });
}

interface Built {
	spec: StorageSpec;
	layout: 'partitioned' | 'single';
	users: number;
	fillers: number;
	measured: number;
	buildMs: number;
	measuredMs: number;
	objects: number;
	bytes: number;
	perFiller: { objects: number; bytes: number };
	perMeasured: { objects: number; bytes: number } | null;
	requests: number;
}

/** What one user's objects are (its partitions, log and block), by listing (users 0 and measured-0). */
async function userObjects(storage: MemoryStorage, kbId: string, p: BaseParts, u: number) {
	const h = partHash(`u:${userIdOf(u)}`);
	const prefixes = [
		`memory_base/${BASE_ID}/parts/${h.slice(0, 2)}/${h}/`,
		`knowledge_base/${kbId}/parts/${h.slice(0, 2)}/${h}/`,
		p.sessionPrefix(sessionOf(u)),
	];
	let objects = 0;
	let bytes = 0;
	for (const prefix of prefixes)
		for (const o of await storage.list(prefix)) {
			objects++;
			bytes += o.size;
		}
	return { objects, bytes };
}

/** Writes filler users [from, to) of the base on `spec` (in a builder process of its own). */
async function buildRange(job: BuildJob): Promise<{ requests: number }> {
	const counted = new Counted(storageOf(job.storage, true));
	const p = new BaseParts({ storage: counted, baseId: BASE_ID, embedder: new HashEmbedder() });
	const indexes = await BaseIndexes.open(p);
	if (indexes.kind !== job.layout)
		throw new Error(`the base is ${indexes.kind}, not ${job.layout}`);
	const count = job.to - job.from;
	const progress = progressLine(job.label, count);
	if (job.layout === 'partitioned') {
		const wide = new WideBatch(indexes);
		const write = (i: number) => writeUsers(p, indexes, indexes.kbId, [job.from + i], wide);
		await pool(count, concurrency(job.storage), write, progress);
		await wide.flush();
		const users = Array.from({ length: count }, (_, i) => userPart(userIdOf(job.from + i)));
		await register(p, 'lexical', users);
		await register(p, 'vector', users);
	} else {
		for (let i = 0; i < count; i += LEGACY_BATCH) {
			const batch = Array.from(
				{ length: Math.min(LEGACY_BATCH, count - i) },
				(_, k) => job.from + i + k,
			);
			await writeUsers(p, indexes, indexes.kbId, batch);
			progress(i + batch.length);
		}
	}
	return { requests: requests(counted.take()) };
}

interface BuildJob {
	storage: StorageSpec;
	layout: 'partitioned' | 'single';
	from: number;
	to: number;
	label: string;
}

/** Runs this file in a fresh Node process with `env` set to the job; resolves with its RESULT line. */
function child<T>(env: Record<string, string>, flags: string[] = []): Promise<T> {
	return new Promise((resolve, reject) => {
		const proc = spawn(process.execPath, [...flags, '--import', 'tsx', __filename], {
			env: { ...process.env, ...env },
			stdio: ['ignore', 'pipe', 'inherit'],
		});
		let out = '';
		proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
		proc.on('error', reject);
		proc.on('exit', (code) => {
			const line = out.split('\n').find((l) => l.startsWith('RESULT '));
			if (code !== 0 || !line) reject(new Error(`child process failed (${code}): ${out}`));
			else resolve(JSON.parse(line.slice('RESULT '.length)) as T);
		});
	});
}

async function build(
	spec: StorageSpec,
	users: number,
	layout: 'partitioned' | 'single',
	label: string,
): Promise<Built> {
	const counted = new Counted(storageOf(spec, true));
	const storage = counted;
	const embedder = new HashEmbedder();
	const options = { storage, baseId: BASE_ID, embedder };
	const base = new MemoryBase(options);
	const p = new BaseParts(options);
	const t0 = performance.now();
	await base.configure();
	if (layout === 'single') {
		// A base from before partitions: its configuration has no layout and no base-wide index
		// (rewritten before any capture), and the empty base-wide manifest the new base made goes.
		await p.configs.update(p.configKey, (cur) => {
			const rest = { ...cur.doc };
			delete rest.layout;
			delete rest.wide;
			return rest;
		});
		await storage.delete(`${wideLexicalPrefix(BASE_ID)}manifest.json`);
	}
	// A sync of a single base moves it to partitions (upgrade.ts): a legacy base has no measured users.
	const measured = layout === 'single' ? 0 : Math.min(MEASURED, users);
	for (let m = 0; m < measured; m++) await captureUser(base, MEASURED_FROM + m);
	const measuredMs = performance.now() - t0;
	const kbId = (await BaseIndexes.open(p)).kbId;
	const fillers = users - measured;
	// Partitions are independent: BUILDERS processes write a range of users each. One index for the
	// whole base takes one writer (its manifest is one compare-and-swap).
	const builders = layout === 'partitioned' ? Math.min(BUILDERS, fillers) : 1;
	const done = await Promise.all(
		Array.from({ length: builders }, (_, b) => {
			const from = Math.floor((fillers * b) / builders);
			const to = Math.floor((fillers * (b + 1)) / builders);
			const job: BuildJob = {
				storage: spec,
				layout,
				from,
				to,
				label: `building ${label}${builders > 1 ? ` [${b + 1}/${builders}]` : ''}`,
			};
			return child<{ requests: number }>({ SCALE_BENCH_BUILD: JSON.stringify(job) });
		}),
	);
	// The word tiers of the base-wide index, as an upgrade's copy leaves them (the builders only add).
	const t1 = performance.now();
	if (layout === 'partitioned') {
		const wide = await BaseIndexes.open(p);
		await settleTiers(wide.wideLexical());
		await settleCellTiers(wide.wideVectors());
		process.stderr.write(
			`${label}: word and cell tiers settled in ${((performance.now() - t1) / 1000).toFixed(1)} s\n`,
		);
	}
	const buildMs = performance.now() - t0;
	const req = requests(counted.take()) + done.reduce((s, d) => s + d.requests, 0);
	const all = [...(await storage.list('memory_base/')), ...(await storage.list('knowledge_base/'))];
	return {
		spec,
		layout,
		users,
		fillers,
		measured,
		buildMs,
		measuredMs,
		objects: all.length,
		bytes: all.reduce((s, o) => s + o.size, 0),
		perFiller: await userObjects(storage, kbId, p, 0),
		perMeasured: measured > 0 ? await userObjects(storage, kbId, p, MEASURED_FROM) : null,
		requests: req,
	};
}

// ---------------------------------------------------------------------------------------------------
// Measuring (in a child process: its memory and caches are the searches' own).

interface MeasureSpec {
	storage: StorageSpec;
	fillers: number;
	measured: number;
	legacy: boolean;
	/** Also search every conversation the way before the base-wide index (every partition). */
	oldPath: boolean;
	searches: number;
	seed: number;
}

/** Searches of every conversation: times, requests, bytes, and what they held outside the caches. */
interface AllSummary extends Summary {
	errors: string[];
	/** Of the exact 50 nearest vectors (every segment read), how many the cell tiers' search found: median and lowest. */
	recall?: { median: number; min: number; tiers: number };
	/** The most bytes the process held beyond what its caches hold, during a search (sampled). */
	held: number;
	coverage?: WideCoverage | null;
}

interface Sample {
	ms: number;
	requests: number;
	read: number;
}

interface Summary {
	count: number;
	p50: number;
	p95: number;
	requests: number;
	read: number;
	/** Searches whose query's message was among the results (recall sanity). */
	found?: number;
}

const zeroSummary = (): Summary => ({ count: 0, p50: NaN, p95: NaN, requests: NaN, read: NaN });

function summarise(samples: Sample[], found?: number): Summary {
	return {
		count: samples.length,
		p50: median(samples.map((s) => s.ms)),
		p95: percentile(
			samples.map((s) => s.ms),
			0.95,
		),
		requests: median(samples.map((s) => s.requests)),
		read: median(samples.map((s) => s.read)),
		...(found !== undefined ? { found } : {}),
	};
}

interface Measured {
	cold: Summary;
	warm: Summary;
	measuredCold?: Summary;
	measuredWarm?: Summary;
	memory?: {
		/** RSS after the first searches (the code loaded and compiled), before the measured ones. */
		rssBefore: number;
		rss: number;
		heapUsed: number;
		external: number;
		/** RSS half-way through the MEMORY_SEARCHES (growth between it and the end: a leak?). */
		rssHalf: number;
		caches: Record<string, { entries: number; weight: number; maxWeight: number | null }>;
	};
	firstCapture?: Summary;
	nextCapture?: Summary;
	/** A capture that reaches the threshold: the conversation's sync of THRESHOLD messages with it. */
	syncCapture?: Summary;
	/** Searches of every conversation (hybrid, then words only), and the bytes they held outside the caches. */
	allUsers?: AllSummary;
	allUsersLexical?: AllSummary;
	/** The same through every partition (the path before the base-wide index), at the smallest size. */
	allUsersOld?: AllSummary;
	/** Hybrid searches of every conversation while writers sync (whileSyncing). */
	allUsersSyncing?: AllSummary & { syncs: number; writerErrors: string[] };
	/** A base from before partitions: its first search, which moves it. */
	legacyFirst?: Sample;
	vectorCacheBytes: number;
	lexicalCacheBytes: number;
	/** RSS after the one-user searches (before the memory run). */
	rssAfter: number;
}

/** Distinct numbers from [from, to), as many as asked (or all of them). */
function distinct(rand: () => number, from: number, to: number, count: number): number[] {
	const want = Math.min(count, to - from);
	const out = new Set<number>();
	while (out.size < want) out.add(from + uniform(rand, to - from));
	return [...out];
}

async function measure(spec: MeasureSpec): Promise<Measured> {
	const counted = new Counted(storageOf(spec.storage));
	const base = new MemoryBase({ storage: counted, baseId: BASE_ID, embedder: new HashEmbedder() });
	const rand = seededRandom(spec.seed);
	const timed = async <T>(fn: () => Promise<T>): Promise<[T, Sample]> => {
		counted.take();
		const t0 = performance.now();
		const out = await fn();
		const time = performance.now() - t0;
		const c = counted.take();
		return [out, { ms: time, requests: requests(c), read: c.read }];
	};
	/** Users searched in this process (their manifests are in its documents cache). */
	const searched = new Set<number>();
	const search = async (u: number, query: { text: string; seq: number }) => {
		searched.add(u);
		const userId = userIdOf(u);
		const [hits, sample] = await timed(() => base.search(query.text, { userId, k: 5 }));
		checkScope(hits, userId);
		return { sample, found: hits.some((h) => h.sessionId === sessionOf(u) && h.seq === query.seq) };
	};
	// A base from before partitions: its first search finds it idle and moves it (upgrade.ts).
	const legacyFirst = spec.legacy ? (await timed(() => search(0, queryOf(0, rand))))[1] : undefined;
	// The code's first run (compilation, the WebAssembly kernel): user 0, never sampled.
	for (let i = 0; i < 3; i++) await search(0, queryOf(0, rand));
	(globalThis as { gc?: () => void }).gc?.();
	const rssBefore = process.memoryUsage().rss;
	const recall = async (users: number[]) => {
		const cold: Sample[] = [];
		const warm: Sample[] = [];
		let found = 0;
		for (const u of users) {
			const first = await search(u, queryOf(u, rand));
			cold.push(first.sample);
			if (first.found) found++;
			warm.push((await search(u, queryOf(u, rand))).sample);
		}
		return { cold: summarise(cold, found / users.length), warm: summarise(warm) };
	};
	console.error(`    ${spec.searches} searches of one user each…`);
	const fillerUsers = distinct(rand, 1, spec.fillers, spec.searches);
	const { cold, warm } = await recall(fillerUsers);
	const out: Measured = {
		cold,
		warm,
		...(legacyFirst ? { legacyFirst } : {}),
		vectorCacheBytes: VECTOR_CACHE_BYTES,
		lexicalCacheBytes: LEXICAL_CACHE_BYTES,
		rssAfter: 0,
	};
	if (spec.measured > 0) {
		const m = await recall(Array.from({ length: spec.measured }, (_, i) => MEASURED_FROM + i));
		out.measuredCold = m.cold;
		out.measuredWarm = m.warm;
	}
	out.rssAfter = process.memoryUsage().rss;
	if (spec.legacy) return out;
	console.error(`    ${MEMORY_SEARCHES} searches of random users…`);
	let rssHalf = 0;
	for (let i = 0; i < MEMORY_SEARCHES; i++) {
		const u = uniform(rand, spec.fillers);
		await search(u, queryOf(u, rand));
		if (i !== MEMORY_SEARCHES / 2 - 1) continue;
		(globalThis as { gc?: () => void }).gc?.();
		rssHalf = process.memoryUsage().rss;
	}
	(globalThis as { gc?: () => void }).gc?.();
	const mem = process.memoryUsage();
	out.memory = {
		rssBefore,
		rssHalf,
		rss: mem.rss,
		heapUsed: mem.heapUsed,
		external: mem.external,
		caches: Object.fromEntries(
			cacheStats().map((c) => [
				c.name,
				{ entries: c.entries, weight: c.weight, maxWeight: c.maxWeight },
			]),
		),
	};
	console.error(`    ${CAPTURES} users capture one message, one more, then enough to sync…`);
	// Each user's log has nothing pending (as a sync left it): 1, 1, then THRESHOLD − 2 messages.
	const strides = [1, 1, THRESHOLD - 2];
	const captures: Sample[][] = strides.map(() => []);
	// Users never searched here: a capture's requests do not depend on what the searches cached.
	const unsearched = new Set<number>();
	const left = spec.fillers - 1 - [...searched].filter((u) => u >= 1 && u < spec.fillers).length;
	while (unsearched.size < Math.min(CAPTURES, left)) {
		const u = 1 + uniform(rand, spec.fillers - 1);
		if (!searched.has(u)) unsearched.add(u);
	}
	for (const u of unsearched) {
		let j = CHUNKS;
		for (const [k, count] of strides.entries()) {
			const messages = Array.from({ length: count }, () => ({
				role: j % 2 === 0 ? 'user' : 'assistant',
				text: messageText(u, j++),
			}));
			const [r, sample] = await timed(() =>
				base.capture({
					sessionId: sessionOf(u),
					userId: userIdOf(u),
					runId: `bench-${k}`,
					messages,
				}),
			);
			const syncs = k === strides.length - 1;
			if (r.captured !== count || (r.sync?.messages ?? 0) !== (syncs ? THRESHOLD : 0))
				throw new Error(`capture ${k} of user ${u}: ${JSON.stringify(r)}`);
			captures[k].push(sample);
		}
	}
	[out.firstCapture, out.nextCapture, out.syncCapture] = captures.map((c) => summarise(c));
	const users = spec.fillers + spec.measured;
	const across = (mode: SearchMode, count: number) =>
		searchAll(base, counted, { rand, fillers: spec.fillers, count, mode, timed });
	console.error(`    ${allSearches(users)} searches of every conversation…`);
	out.allUsers = await across('hybrid', allSearches(users));
	out.allUsers.recall = await vectorRecall(counted, rand, spec.fillers, allSearches(users));
	out.allUsersLexical = await across('lexical', Math.ceil(allSearches(users) / 3));
	if (spec.oldPath) {
		console.error(`    ${OLD_PATH_SEARCHES} through every partition (the path before)…`);
		out.allUsersOld = await throughPartitions(counted, () => across('hybrid', OLD_PATH_SEARCHES));
	}
	// Last: the writers change the base.
	console.error(`    ${allSearches(users)} more while ${WRITERS} writers sync other users…`);
	out.allUsersSyncing = await whileSyncing(spec, () => across('hybrid', allSearches(users)));
	return out;
}

/**
 * `run` while WRITERS writers each capture THRESHOLD messages at a time into random users'
 * conversations (so each capture syncs, and the base-wide index merges as it grows), through a base
 * and a storage of their own (their requests are not counted), in this process.
 */
async function whileSyncing(
	spec: MeasureSpec,
	run: () => Promise<AllSummary>,
): Promise<AllSummary & { syncs: number; writerErrors: string[] }> {
	const writer = new MemoryBase({
		storage: storageOf(spec.storage),
		baseId: BASE_ID,
		embedder: new HashEmbedder(),
	});
	const rand = seededRandom(spec.seed + 1);
	const writerErrors: string[] = [];
	let done = false;
	let syncs = 0;
	const loop = async (w: number) => {
		for (let i = 0; !done; i++) {
			const u = 1 + uniform(rand, spec.fillers - 1);
			const messages = Array.from({ length: THRESHOLD }, (_, j) => ({
				role: j % 2 === 0 ? 'user' : 'assistant',
				text: messageText(u, CHUNKS + i * THRESHOLD + j),
			}));
			try {
				const r = await writer.capture({
					sessionId: sessionOf(u),
					userId: userIdOf(u),
					runId: `writer-${w}-${i}`,
					messages,
				});
				if (r.sync) syncs++;
			} catch (error) {
				writerErrors.push(`${(error as Error).name}: ${(error as Error).message}`);
			}
		}
	};
	const loops = Array.from({ length: WRITERS }, (_, w) => loop(w));
	try {
		// The searches start once each writer could have synced once (a first sync opens the base).
		for (let waited = 0; syncs + writerErrors.length < WRITERS && waited < 120_000; waited += 50)
			await new Promise((r) => setTimeout(r, 50));
		const before = syncs;
		const out = await run();
		return { ...out, syncs: syncs - before, writerErrors };
	} finally {
		done = true;
		await Promise.all(loops);
	}
}

/**
 * The bytes the process holds beyond its caches while `fn` runs: sampled every 25 ms after two garbage
 * collections (heap and external memory, less what the caches say they hold), from where it started.
 */
export async function heldDuring<T>(fn: () => Promise<T>): Promise<{ out: T; held: number }> {
	const gc = (globalThis as { gc?: () => void }).gc;
	const state = () => {
		// Twice: buffers let go are freed by a collection after the one that found them unreachable, so
		// one collection counts the last search's garbage (it moved the figure by ±20 MiB).
		gc?.();
		gc?.();
		const m = process.memoryUsage();
		return m.heapUsed + m.external - cacheStats().reduce((n, c) => n + c.weight, 0);
	};
	const start = state();
	let peak = start;
	// A sample every 25 ms, or four times as long as the last collection took: with hundreds of MiB live
	// (the search through every partition), back-to-back collections would leave the search no time.
	let timer: NodeJS.Timeout | undefined;
	const sample = () => {
		const t = performance.now();
		peak = Math.max(peak, state());
		timer = setTimeout(sample, Math.max(25, 4 * (performance.now() - t)));
	};
	timer = setTimeout(sample, 25);
	try {
		const out = await fn();
		return { out, held: Math.max(0, peak - start) };
	} finally {
		clearTimeout(timer);
	}
}

/** `count` searches of every conversation (queries of random users), then three more measured for memory. */
async function searchAll(
	base: MemoryBase,
	counted: Counted,
	o: {
		rand: () => number;
		fillers: number;
		count: number;
		mode: SearchMode;
		timed: <T>(fn: () => Promise<T>) => Promise<[T, Sample]>;
	},
): Promise<AllSummary> {
	const all: Sample[] = [];
	const errors: string[] = [];
	let coverage: WideCoverage | null = null;
	const one = async () => {
		const u = uniform(o.rand, o.fillers);
		const q = queryOf(u, o.rand).text;
		const r = await base.searchReport(q, { allUsers: true, k: 5, mode: o.mode });
		if (r.matches.length === 0) throw new Error('no results');
		coverage = r.coverage ?? null;
	};
	for (let i = 0; i < o.count; i++) {
		try {
			all.push((await o.timed(one))[1]);
		} catch (error) {
			// Reported, not fatal: what such a search does at this size is the finding.
			const c = counted.take();
			errors.push(
				`${(error as Error).name}: ${(error as Error).message} (${requests(c)} requests)`,
			);
			console.error(`    the search of every conversation failed: ${errors.at(-1)}`);
		}
	}
	// The most any of three more searches held: one search's figure varied from run to run.
	let held = 0;
	for (let i = 0; i < 3; i++)
		held = Math.max(held, (await heldDuring(() => one().catch(() => undefined))).held);
	counted.take();
	return { ...(all.length ? summarise(all) : zeroSummary()), errors, held, coverage };
}

/**
 * The vector side of a search of every conversation against exact cosine: of the 50 nearest vectors
 * (every base-wide segment read), how many its cell tiers found, for `count` queries of random users.
 */
async function vectorRecall(
	storage: MemoryStorage,
	rand: () => number,
	fillers: number,
	count: number,
): Promise<{ median: number; min: number; tiers: number }> {
	const p = new BaseParts({ storage, baseId: BASE_ID, embedder: new HashEmbedder() });
	const wide = (await BaseIndexes.open(p)).wideVectors();
	const tiers = (await wide.readManifest(true)).doc.cells?.tiers.length ?? 0;
	const found: number[] = [];
	for (let i = 0; i < count; i++) {
		const q = fakeEmbedding(queryOf(uniform(rand, fillers), rand).text, DIMS);
		const cells = await streamedRanking(wide, q, 50, {});
		const exact = await streamedRanking(wide, q, 50, {}, undefined, { exhaustive: true });
		// By score, not ID: rows of one text tie, and which of them the 50th place takes is arbitrary.
		const kth = exact.matches.at(-1)?.score ?? -Infinity;
		const near = cells.matches.filter((m) => m.score >= kth - 1e-6).length;
		found.push(Math.min(1, near / Math.max(1, exact.matches.length)));
	}
	found.sort((a, b) => a - b);
	return { median: found[Math.floor(found.length / 2)] ?? 1, min: found[0] ?? 1, tiers };
}

/**
 * Runs `fn` with the base's searches of every conversation going through every partition, the way
 * before the base-wide index: its state set back to "building" while a lease of the whole base is held
 * (so no search builds it again meanwhile), then restored.
 */
export async function throughPartitions<T>(
	storage: MemoryStorage,
	fn: () => Promise<T>,
): Promise<T> {
	const p = new BaseParts({ storage, baseId: BASE_ID });
	const lease = await acquireLease(
		storage,
		p.baseLeaseKey,
		{ ttlMs: 3_600_000, operation: 'benchmark' },
		() => new Error('the base is busy'),
	);
	const set = (state: 'building' | 'ready') =>
		p.configs.update(p.configKey, (cur) => ({
			...cur.doc,
			wide: { ...(cur.doc.wide ?? { since: cur.doc.created_at }), state },
		}));
	try {
		await set('building');
		return await fn();
	} finally {
		await set('ready');
		await lease.release();
	}
}

/** A user's search returns that user's chunks only (anything else is an engine defect). */
function checkScope(hits: SearchMatch[], userId: string): void {
	if (hits.length === 0) throw new Error(`the search of ${userId} found nothing`);
	const other = hits.find((h) => h.userId !== userId);
	if (other) throw new Error(`the search of ${userId} returned a chunk of ${other.userId}`);
}

/** Runs `measure` in a fresh Node process with this process's environment (cache settings). */
function measureIn(spec: MeasureSpec): Promise<Measured> {
	return child<Measured>({ SCALE_BENCH_MEASURE: JSON.stringify(spec) }, ['--expose-gc']);
}

// ---------------------------------------------------------------------------------------------------
// The runs and tables.

interface Run {
	storage: string;
	built: Built;
	m: Measured;
}

async function storages(): Promise<
	Array<{ name: string; sizes: number[]; make: () => Promise<StorageSpec> }>
> {
	const out: Array<{ name: string; sizes: number[]; make: () => Promise<StorageSpec> }> = [];
	if (STORAGES.includes('disk'))
		out.push({
			name: 'local disk',
			sizes: SIZES,
			make: async () => ({ kind: 'disk', root: tempDir('scale-bench') }),
		});
	const endpoint = process.env.RGW_ENDPOINT;
	if (endpoint && STORAGES.includes('rgw'))
		out.push({
			name: 'radosgw',
			sizes: RGW_SIZES,
			make: async () => {
				const s3 = await bucketStorage(endpoint, `scale-${randomUUID().slice(0, 8)}`);
				return { kind: 's3', endpoint, bucket: s3.bucket as string };
			},
		});
	return out;
}

async function runOne(
	name: string,
	spec: StorageSpec,
	users: number,
	layout: 'partitioned' | 'single',
	smallest: boolean,
): Promise<Run> {
	const label = `${n(users)} users (${layout}) on ${name}`;
	console.error(`${label}: building…`);
	const built = await build(spec, users, layout, label);
	console.error(
		`  built in ${f(built.buildMs / 1000, 1)} s: ${n(built.objects)} objects, ${size(built.bytes)}`,
	);
	console.error(`${label}: measuring in a fresh process…`);
	const m = await measureIn({
		storage: spec,
		fillers: built.fillers,
		measured: built.measured,
		legacy: layout === 'single',
		oldPath: smallest && layout === 'partitioned',
		searches: SEARCHES,
		seed: users,
	});
	console.error(
		`  recall p50 ${ms(m.cold.p50)}, p95 ${ms(m.cold.p95)}, ${m.cold.requests} requests, ${size(m.cold.read)} read`,
	);
	return { storage: name, built, m };
}

/**
 * Removes a run's storage: on disk its folder; on radosgw every object of its bucket, 16 at a time, so
 * the next size has the memstore to itself once radosgw frees their room (it does so later: on
 * 2026-11-30 a 5,000-user build filled a 1 GiB store that way).
 */
async function dispose(spec: StorageSpec): Promise<void> {
	if (process.env.SCALE_BENCH_KEEP) {
		console.log(`  kept: ${spec.kind === 'disk' ? spec.root : `s3://${spec.bucket}`}`);
		return;
	}
	if (spec.kind === 'disk') {
		const { rm } = await import('node:fs/promises');
		await rm(spec.root, { recursive: true, force: true });
		return;
	}
	const storage = storageOf(spec);
	const keys = (await storage.list('')).map((o) => o.key);
	await pool(
		keys.length,
		16,
		(i) => storage.delete(keys[i]),
		() => undefined,
	);
}

function tables(runs: Run[], legacy: Run[], notes: string[]): string[] {
	const part = runs;
	const out: string[] = [];
	const cache = part[0]?.m ?? legacy[0]?.m;
	const cacheNote = cache
		? `caches of the measuring process: vector segments ${mib(cache.vectorCacheBytes)} (LLM_MEMORY_VECTOR_CACHE_MB), lexical segments ${mib(cache.lexicalCacheBytes)} (LLM_MEMORY_LEXICAL_CACHE_MB)`
		: '';
	out.push(
		'\n### Memory Base at scale: building\n',
		`Users of ${CHUNKS} messages each (one chunk per message, ${DIMS}-dimension vectors). The first ${MEASURED} users of each base capture through MemoryBase.capture (50 turns of two messages, a sync at each threshold of 10); every other user's partition is written with the engine's index writers (BaseIndexes.addLexical/addVectors, one user's chunks per call; ${BUILDERS} processes, each writing ${concurrency({ kind: 'disk', root: '' })} users at a time on disk, ${concurrency({ kind: 's3', endpoint: '', bucket: '' })} on radosgw; on disk without fsync) beside a capture log and sealed block as a sync leaves them; then the base-wide word index's term tiers are settled, as an upgrade's copy leaves them (part of the build time). Stored: the sum of the sizes of every object listed.\n`,
		'| storage | users | build | of which captured users | requests per user | stored objects | stored bytes | per user (filler) | per user (captured) |',
		'|---|---:|---:|---:|---:|---:|---:|---:|---:|',
	);
	for (const r of part) {
		const b = r.built;
		const per = (x: { objects: number; bytes: number } | null) =>
			x ? `${x.objects} objects, ${size(x.bytes)}` : '–';
		out.push(
			`| ${r.storage} | ${n(b.users)} | ${f(b.buildMs / 1000, 1)} s | ${f(b.measuredMs / 1000, 1)} s (${b.measured}) | ${f(b.requests / b.users, 1)} | ${n(b.objects)} | ${size(b.bytes)} | ${per(b.perFiller)} | ${per(b.perMeasured)} |`,
		);
	}
	out.push(
		'\n### Memory Base at scale: one user’s hybrid recall\n',
		`MemoryBase.search(query, { userId, k: 5 }), lexical and vector (the embedder set), for ${SEARCHES} distinct random users: "first" is each user’s first search in the process (its partition read from storage), "again" the same user’s next search with another query. Requests and bytes read: medians per search. ${cacheNote}. Queries are three words of one of the user’s messages; "its message in top 5": how often that message was among the results.\n`,
		'| storage | users | first p50 | first p95 | requests | bytes read | again p50 | again p95 | requests | bytes read | its message in top 5 |',
		'|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
	);
	for (const r of part) {
		const { cold, warm } = r.m;
		out.push(
			`| ${r.storage} | ${n(r.built.users)} | ${ms(cold.p50)} | ${ms(cold.p95)} | ${cold.requests} | ${size(cold.read)} | ${ms(warm.p50)} | ${ms(warm.p95)} | ${warm.requests} | ${size(warm.read)} | ${f((cold.found ?? 0) * 100, 0)}% |`,
		);
	}
	const captured = part.filter((r) => r.m.measuredCold);
	if (captured.length > 0) {
		out.push(
			`\nThe same for the ${MEASURED} users who captured through MemoryBase.capture and sync (their partitions as syncs of 10 messages leave them: more vector segments):\n`,
			'| storage | users | first p50 | first max | requests | bytes read | again p50 | requests | bytes read |',
			'|---|---:|---:|---:|---:|---:|---:|---:|---:|',
		);
		for (const r of captured) {
			const cold = r.m.measuredCold!;
			const warm = r.m.measuredWarm!;
			out.push(
				`| ${r.storage} | ${n(r.built.users)} | ${ms(cold.p50)} | ${ms(cold.p95)} | ${cold.requests} | ${size(cold.read)} | ${ms(warm.p50)} | ${warm.requests} | ${size(warm.read)} |`,
			);
		}
	}
	out.push(
		`\n### Memory Base at scale: process memory after ${n(MEMORY_SEARCHES)} searches of random users\n`,
		`The measuring process after the searches above and ${n(MEMORY_SEARCHES)} more of random users (after a garbage collection). ${cacheNote}; the documents cache (manifests, logs, configuration) has its own 128 MiB cap.\n`,
		`| storage | users | RSS before the searches | RSS after ${n(MEMORY_SEARCHES / 2)} | RSS after ${n(MEMORY_SEARCHES)} | heap used | external (buffers, WebAssembly) | vector segments cache | lexical segments cache | documents cache |`,
		'|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
	);
	for (const r of part) {
		const mem = r.m.memory;
		if (!mem) continue;
		const c = (name: string) => {
			const s = mem.caches[name];
			return s ? `${mib(s.weight)} (${n(s.entries)})` : '–';
		};
		out.push(
			`| ${r.storage} | ${n(r.built.users)} | ${mib(mem.rssBefore)} | ${mib(mem.rssHalf)} | ${mib(mem.rss)} | ${mib(mem.heapUsed)} | ${mib(mem.external)} | ${c('vector segments')} | ${c('lexical segments')} | ${c('documents')} |`,
		);
	}
	out.push(
		'\n### Memory Base at scale: capture of one message\n',
		`MemoryBase.capture into a random existing user’s conversation (its log closed, nothing pending, as a sync leaves it), for ${CAPTURES} distinct users, three captures each: one message (it opens the log for the word index: one write of the user’s lexical manifest), one more message (the log open already), then ${THRESHOLD - 2} messages, which reach the threshold of ${THRESHOLD}: that capture syncs the conversation (embeds and indexes ${THRESHOLD} messages) before it returns. Requests: median.\n`,
		'| storage | users | first capture p50 | p95 | requests | next capture p50 | p95 | requests | capture with sync p50 | p95 | requests |',
		'|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
	);
	for (const r of part) {
		const [a, b, c] = [r.m.firstCapture, r.m.nextCapture, r.m.syncCapture];
		// A base too small for that many distinct users captures none.
		if (a?.p50 === undefined || b?.p50 === undefined || c?.p50 === undefined) continue;
		out.push(
			`| ${r.storage} | ${n(r.built.users)} | ${ms(a.p50)} | ${ms(a.p95)} | ${a.requests} | ${ms(b.p50)} | ${ms(b.p95)} | ${b.requests} | ${ms(c.p50)} | ${ms(c.p95)} | ${c.requests} |`,
		);
	}
	out.push(...allTable(part));
	const ratioLines: string[] = [];
	for (const name of [...new Set(part.map((r) => r.storage))]) {
		const rs = part.filter((r) => r.storage === name).sort((a, b) => a.built.users - b.built.users);
		if (rs.length < 2) continue;
		const [a, b] = [rs[0], rs[rs.length - 1]];
		const x = (p: number, q: number) => `${f(q / p)}×`;
		const cap = (s: Summary | undefined, t: Summary | undefined, k: 'requests' | 'p50' | 'p95') =>
			s && t ? x(s[k], t[k]) : '–';
		const { m: p, built: pb } = a;
		const { m: q, built: qb } = b;
		ratioLines.push(
			`| ${name} | ${n(pb.users)} → ${n(qb.users)} (${f(qb.users / pb.users, 0)}×) | ${x(p.cold.p95, q.cold.p95)} | ${x(p.cold.read, q.cold.read)} | ${x(p.cold.requests, q.cold.requests)} | ${x(p.warm.p95, q.warm.p95)} | ${cap(p.allUsers, q.allUsers, 'p95')} | ${cap(p.allUsers, q.allUsers, 'requests')} | ${cap(p.allUsersLexical, q.allUsersLexical, 'p95')} | ${cap(p.firstCapture, q.firstCapture, 'requests')} | ${cap(p.firstCapture, q.firstCapture, 'p50')} | ${cap(p.syncCapture, q.syncCapture, 'requests')} | ${cap(p.syncCapture, q.syncCapture, 'p50')} |`,
		);
	}
	if (ratioLines.length > 0)
		out.push(
			'\n### Memory Base at scale: from the smallest base to the largest\n',
			'Ratios of the largest base’s figure to the smallest’s (1.00× is flat).\n',
			'| storage | users | recall p95 (first) | bytes read per search | requests per search | recall p95 (again) | every conversation p95 (hybrid) | its requests | every conversation p95 (words) | capture requests | capture p50 | capture with sync requests | capture with sync p50 |',
			'|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
			...ratioLines,
		);
	if (legacy.length > 0) {
		out.push(
			'\n### Memory Base at scale: a base from before partitions, moved by its first search\n',
			`A base whose configuration has no layout ("single": one word index and one vector index for every user, as bases created before partitions keep them), built with the same writers in batches of ${LEGACY_BATCH} users, beside the partitioned base of the same size. Its first search (of one user) finds it idle and moves it: into partitions, and the base-wide index built from them (upgrade.ts); the searches after it are measured as for the partitioned base. ${cacheNote}.\n`,
			'| storage | users | stored bytes (before) | first search (moves it) | requests | then: first p50 | first p95 | requests | bytes read | partitioned base: first p95 | ratio |',
			'|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
		);
		for (const l of legacy) {
			const p = part.find((r) => r.storage === l.storage && r.built.users === l.built.users);
			const first = l.m.legacyFirst;
			out.push(
				`| ${l.storage} | ${n(l.built.users)} | ${size(l.built.bytes)} | ${first ? ms(first.ms) : '–'} | ${first ? n(first.requests) : '–'} | ${ms(l.m.cold.p50)} | ${ms(l.m.cold.p95)} | ${l.m.cold.requests} | ${size(l.m.cold.read)} | ${p ? ms(p.m.cold.p95) : '–'} | ${p ? `${f(l.m.cold.p95 / p.m.cold.p95)}×` : '–'} |`,
			);
		}
	}
	if (notes.length > 0) out.push('', ...notes);
	return out;
}

/** The table of searches of every conversation: each size's hybrid and word searches, the old path at the smallest. */
function allTable(part: Run[]): string[] {
	const out = [
		'\n### Memory Base at scale: a search of every conversation\n',
		`MemoryBase.search(query, { allUsers: true, k: 5 }): the base-wide index and the logs it lists as open, read one segment after another (up to four at a time on each side), for queries of random users (${allSearches(1000)} per base up to 1,000 users, ${allSearches(10_000)} up to 10,000, ${allSearches(100_000)} beyond; words only a third as many: p95 of a few is their slowest). "Held": the most bytes the process held beyond its caches during any of three more such searches (heap and external memory after two garbage collections every 25 ms, less what the caches hold). "Through every partition": the same search the way before the base-wide index (every partition read), at the smallest size. "Cell tiers": those the base-wide vector index holds (as the build's upkeep left them); "vector recall@50": for as many queries again, the share of the 50 vectors the search through the cell tiers found that are at least as near as the 50th nearest by exact cosine (every base-wide segment read; vectors of one text tie) (median and lowest). "While writers sync": as many hybrid searches again, while ${WRITERS} writers in the same process each capture ${THRESHOLD} messages at a time into random users' conversations (each capture syncs them into the base-wide index, whose segments and tiers merge as it grows); the writers' own requests are not counted, and they share the process's CPU with the search.\n`,
		'| storage | users | search | searches | p50 | p95 | requests | bytes read | held outside the caches | chunks in the base-wide index | logs read | cell tiers | vector recall@50 (median, lowest) |',
		'|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
	];
	const row = (r: Run, what: string, a: AllSummary | undefined) => {
		if (!a) return;
		const failed = a.errors.length ? ` (${a.errors.length} failed)` : '';
		const c = a.coverage;
		out.push(
			`| ${r.storage} | ${n(r.built.users)} | ${what} | ${a.count}${failed} | ${a.count ? ms(a.p50) : 'failed'} | ${a.count ? ms(a.p95) : '–'} | ${a.count ? n(a.requests) : '–'} | ${a.count ? size(a.read) : '–'} | ${mib(a.held)} | ${c?.chunks != null ? n(c.chunks) : '–'} | ${c?.recentConversations ?? '–'} | ${a.recall ? a.recall.tiers : '–'} | ${a.recall ? `${f(a.recall.median, 2)}, ${f(a.recall.min, 2)}` : '–'} |`,
		);
	};
	for (const r of part) {
		row(r, 'hybrid', r.m.allUsers);
		row(r, 'words', r.m.allUsersLexical);
		row(r, 'hybrid, through every partition', r.m.allUsersOld);
		const syncing = r.m.allUsersSyncing;
		row(r, `hybrid, while ${WRITERS} writers sync (${syncing?.syncs ?? 0} syncs)`, syncing);
		for (const e of new Set(syncing?.writerErrors ?? []))
			out.push(`\nA writer failed on ${r.storage} at ${n(r.built.users)} users: ${e}`);
	}
	for (const r of part)
		for (const a of [r.m.allUsers, r.m.allUsersLexical, r.m.allUsersOld, r.m.allUsersSyncing])
			for (const e of new Set(a?.errors ?? []))
				out.push(`\nFailed on ${r.storage} at ${n(r.built.users)} users: ${e}`);
	return out;
}

/** Why radosgw stops where it does: its memstore's size, and the build rate it had. */
function rgwNote(rgw: Run[]): string {
	const last = rgw.at(-1)?.built;
	if (!last) return '';
	const perUser = last.bytes / last.users;
	const rate = last.fillers / (last.buildMs - last.measuredMs);
	const larger = SIZES.filter((u) => u > last.users);
	if (larger.length === 0) return '';
	return `Radosgw only up to ${n(last.users)} users: scripts/rgw.sh keeps objects in RAM (RGW_MEMSTORE_BYTES, 3 GiB in scripts/bench.sh), and a base stores ${size(perUser)} per user (${larger.map((u) => `${size(u * perUser)} at ${n(u)} users`).join(', ')}); building ${n(Math.max(...larger))} users at the ${f(rate * 1000, 0)} users/s measured here would also take about ${f(Math.max(...larger) / rate / 60_000, 0)} minutes.`;
}

async function main(): Promise<void> {
	const t0 = performance.now();
	console.error(`Scale benchmark: ${SIZES.join(', ')} users of ${CHUNKS} messages…`);
	const runs: Run[] = [];
	const legacy: Run[] = [];
	const notes: string[] = [];
	const smallest = Math.min(...SIZES, ...RGW_SIZES);
	for (const s of await storages()) {
		for (const users of s.sizes) {
			const spec = await s.make();
			try {
				runs.push(await runOne(s.name, spec, users, 'partitioned', users === smallest));
			} finally {
				await dispose(spec);
			}
		}
		if (s.name === 'radosgw') notes.push(rgwNote(runs.filter((r) => r.storage === s.name)));
		if (s.name !== 'local disk') continue;
		for (const users of LEGACY) {
			const spec = await s.make();
			try {
				legacy.push(await runOne(s.name, spec, users, 'single', false));
			} finally {
				await dispose(spec);
			}
		}
	}
	console.log(`\n${machineLine(loadLine())}`);
	console.log(tables(runs, legacy, notes).join('\n'));
	const minutes = (performance.now() - t0) / 60_000;
	console.log(`\nBenchmark run time: ${f(minutes, 1)} min.`);
}

/** This file's three roles: the benchmark, a builder of users, a measuring process. */
function role(): Promise<unknown> {
	const { SCALE_BENCH_BUILD: job, SCALE_BENCH_MEASURE: spec } = process.env;
	const result = (r: unknown) => console.log(`RESULT ${JSON.stringify(r)}`);
	if (job) return buildRange(JSON.parse(job) as BuildJob).then(result);
	if (spec) return measure(JSON.parse(spec) as MeasureSpec).then(result);
	return main();
}

if (require.main === module) {
	role().catch((e: unknown) => {
		console.error(e);
		process.exit(1);
	});
}
