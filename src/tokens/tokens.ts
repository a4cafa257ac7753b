import { BoundedCache } from '../common/bounded-cache';
import { BpeCounter } from './bpe';
import type { BpeRanks } from './bpe';

export type Encoding = 'cl100k_base' | 'o200k_base';

/** Counts tokens of one string. Implementations must not throw; see `fallbackTokenCount`. */
export interface TokenCounter {
	readonly encoding: string;
	count(text: string): number;
}

/** o200k_base for gpt-4o, gpt-4.1, gpt-5 and the o-series; cl100k_base for everything else. */
export function encodingForModel(model: string | undefined): Encoding {
	const name = (model ?? '').toLowerCase();
	if (/gpt-4o|gpt-4\.1|gpt-5/.test(name)) return 'o200k_base';
	if (/(^|[^a-z0-9])o\d+($|[-_.:])/.test(name)) return 'o200k_base';
	return 'cl100k_base';
}

/**
 * Upper bound used when a tokenizer fails: UTF-8 bytes. Every BPE token covers at least one byte,
 * so the budget stays a real bound even then.
 */
export function fallbackTokenCount(text: string): number {
	return Buffer.byteLength(text, 'utf8');
}

/** Process-wide count of tokenizer calls, for benchmarks and tests. */
export const tokenizerStats = { calls: 0, failures: 0 };

type Ranks = BpeRanks;

// Ranks are bundled in js-tiktoken; required lazily so only the encodings in use are loaded.
/* eslint-disable @typescript-eslint/no-require-imports */
const loadRanks: Record<Encoding, () => Ranks> = {
	cl100k_base: () => require('js-tiktoken/ranks/cl100k_base') as Ranks,
	o200k_base: () => require('js-tiktoken/ranks/o200k_base') as Ranks,
};
/* eslint-enable @typescript-eslint/no-require-imports */

/** One counter per encoding, its ranks loaded on first use (room for every encoding: none is evicted). */
const encoders = new BoundedCache<BpeCounter>({
	name: 'token encoders',
	maxEntries: Object.keys(loadRanks).length,
});
const loaded = new Set<Encoding>();

/** Encodings whose ranks this process has loaded so far. */
export function loadedEncodings(): Encoding[] {
	return [...loaded];
}

function encoder(encoding: Encoding): BpeCounter {
	return encoders.getOrSet(encoding, () => {
		const ranks = loadRanks[encoding]();
		loaded.add(encoding);
		return new BpeCounter((ranks as { default?: Ranks }).default ?? ranks);
	});
}

/** Bytes of text counted exactly per call; beyond that the count is estimated (below). */
const EXACT_BYTES = 128 * 1024;
/** A single piece longer than this (a pasted blob without breaks) is counted from a sample of this size. */
const PIECE_SAMPLE_BYTES = 16 * 1024;

/**
 * Exact counts for prose of any script, CJK included, up to 128 KiB per message (js-tiktoken's count).
 * Only pathological input is bounded: past that budget, or inside one piece longer than 16 KiB, the
 * count is extrapolated at the tokens-per-byte ratio measured on what was counted exactly, and never
 * exceeds the byte length (which bounds any BPE count). Real prose keeps its ratio, so the estimate
 * stays within a few per cent.
 */
function countBounded(bpe: BpeCounter, text: string): number {
	let exactBytes = 0;
	let exactTokens = 0;
	let estimatedBytes = 0;
	for (const m of bpe.pieces(text)) {
		if (exactBytes >= EXACT_BYTES) {
			estimatedBytes += Buffer.byteLength(text.slice(m.index), 'utf8'); // the rest, in one go
			break;
		}
		const bytes = Buffer.from(m[0], 'utf8').toString('latin1');
		const counted = bytes.length > PIECE_SAMPLE_BYTES ? bytes.slice(0, PIECE_SAMPLE_BYTES) : bytes;
		exactBytes += counted.length;
		exactTokens += bpe.countPiece(counted);
		estimatedBytes += bytes.length - counted.length;
	}
	if (estimatedBytes === 0) return exactTokens;
	return (
		exactTokens + Math.min(estimatedBytes, Math.ceil((estimatedBytes * exactTokens) / exactBytes))
	);
}

/** A counter with js-tiktoken's ranks; one encoder per encoding per process, created on first use. */
export class TiktokenCounter implements TokenCounter {
	constructor(
		readonly encoding: Encoding,
		private readonly onFailure: (error: unknown) => void = () => {},
	) {}

	count(text: string): number {
		tokenizerStats.calls++;
		try {
			return countBounded(encoder(this.encoding), text);
		} catch (error) {
			tokenizerStats.failures++;
			this.onFailure(error);
			return fallbackTokenCount(text);
		}
	}
}

/** Wraps any counter so that a throw becomes the byte-length upper bound and a reported failure. */
export function safeCounter(
	counter: TokenCounter,
	onFailure: (error: unknown) => void,
): TokenCounter {
	return {
		encoding: counter.encoding,
		count(text) {
			try {
				const n = counter.count(text);
				if (!Number.isInteger(n) || n < 0) throw new Error(`token counter returned ${String(n)}`);
				return n;
			} catch (error) {
				onFailure(error);
				return fallbackTokenCount(text);
			}
		},
	};
}
