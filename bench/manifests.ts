/**
 * The base-wide indexes' manifests (not a test): what decoding and encoding them costs as a base grows.
 * Every sync writes both (a compare-and-swap each: encode), and the first search or sync after another
 * process's write reads them again (decode). Their size grows with the base: the vector manifest lists
 * each segment's conversations (every conversation of the base), the word manifest each segment.
 * Manifests are made in the shape `bench/scale.ts` leaves them (one conversation of 100 messages per
 * user, a chunk each; vector segments of 4,096 rows in cell tiers, word segments of 4,096 chunks in
 * term tiers, 512 replaced parts awaiting deletion), then decoded and encoded ROUNDS times each
 * through the codecs the indexes use. Prints p50 per size.
 * Env: MANIFEST_BENCH_USERS (1000,10000,100000), MANIFEST_BENCH_ROUNDS (41).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { lexicalManifestCodec } from '../src/indexes/lexical/manifest';
import { manifestCodec } from '../src/indexes/vector/manifest';
import { loadLine, machineLine, median } from './stats';

const SIZES = (process.env.MANIFEST_BENCH_USERS ?? '1000,10000,100000').split(',').map(Number);
const ROUNDS = Number(process.env.MANIFEST_BENCH_ROUNDS ?? 41);
const MESSAGES = 100;
const ROWS = 4096;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
const tier = (i: number) => ({ id: hex(9), ord: i });
const retired = (prefix: string) =>
	Array.from({ length: 512 }, (_, i) => ({ key: `${prefix}${hex(12)}`, bytes: 13_958, at: at(i) }));

function vectorManifest(users: number) {
	const segments = [];
	for (let from = 0; from < users * MESSAGES; from += ROWS) {
		const rows = Math.min(ROWS, users * MESSAGES - from);
		// The users whose messages the rows hold (a segment's first and last may be cut).
		const sessions: string[] = [];
		for (let u = Math.floor(from / MESSAGES); u <= Math.floor((from + rows - 1) / MESSAGES); u++)
			sessions.push(`chat-user-${u}`);
		segments.push({
			key: `knowledge_base/scale/wide/index/segments/${hex(12)}.vec`,
			count: rows,
			sessions: sessions.sort(),
			bytes: rows * 400,
			created_at: at(segments.length),
			tier: tier(segments.length),
		});
	}
	return {
		dimensions: 64,
		segments,
		updated_at: at(0),
		retired: retired('knowledge_base/scale/wide/index/segments/'),
	};
}

function lexicalManifest(users: number) {
	const segments = [];
	for (let from = 0; from < users * MESSAGES; from += ROWS)
		segments.push({
			key: `memory_base/scale/wide/lexical/segments/${hex(12)}.lex`,
			level: 2,
			count: Math.min(ROWS, users * MESSAGES - from),
			bloom: randomBytes(129).toString('base64'),
			from: at(segments.length),
			to: at(segments.length + 1),
			bytes: 633_090,
			tier: tier(segments.length),
		});
	return {
		generation: hex(16),
		tail: [],
		segments,
		updated_at: at(0),
		retired: retired('memory_base/scale/wide/lexical/segments/'),
	};
}

/** p50 of `fn` over ROUNDS calls, after two unmeasured ones. */
function p50(fn: () => unknown): number {
	const times: number[] = [];
	for (let i = 0; i < ROUNDS + 2; i++) {
		const t0 = performance.now();
		fn();
		if (i >= 2) times.push(performance.now() - t0);
	}
	return median(times);
}

const ms = (x: number) => `${x.toFixed(2)} ms`;

console.log('### Base-wide manifests: decode and encode\n');
console.log(`${machineLine()}; ${loadLine()}. ${ROUNDS} rounds each.\n`);
console.log('| manifest | users | bytes | decode p50 | encode p50 |');
console.log('|---|---:|---:|---:|---:|');
for (const users of SIZES) {
	for (const [name, codec, doc] of [
		['vector', manifestCodec, vectorManifest(users)],
		['words', lexicalManifestCodec, lexicalManifest(users)],
	] as const) {
		const encodeIt = () => (codec.encode as (d: unknown) => Uint8Array)(doc);
		const bytes = encodeIt();
		const decode = p50(() => codec.decode('manifest.json', bytes));
		const encode = p50(encodeIt);
		console.log(
			`| ${name} | ${users.toLocaleString('en')} | ${bytes.length.toLocaleString('en')} | ${ms(decode)} | ${ms(encode)} |`,
		);
	}
}
