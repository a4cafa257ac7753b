import { Tiktoken } from 'js-tiktoken/lite';

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

type Ranks = ConstructorParameters<typeof Tiktoken>[0];

// Ranks are bundled in js-tiktoken; required lazily so only the encodings in use are loaded.
/* eslint-disable @typescript-eslint/no-require-imports */
const loadRanks: Record<Encoding, () => Ranks> = {
	cl100k_base: () => require('js-tiktoken/ranks/cl100k_base') as Ranks,
	o200k_base: () => require('js-tiktoken/ranks/o200k_base') as Ranks,
};
/* eslint-enable @typescript-eslint/no-require-imports */

const encoders = new Map<Encoding, Tiktoken>();

/** Encodings whose ranks this process has loaded so far. */
export function loadedEncodings(): Encoding[] {
	return [...encoders.keys()];
}

function encoder(encoding: Encoding): Tiktoken {
	let e = encoders.get(encoding);
	if (!e) {
		const ranks = loadRanks[encoding]();
		e = new Tiktoken((ranks as { default?: Ranks }).default ?? ranks);
		encoders.set(encoding, e);
	}
	return e;
}

/** Non-space runs at least this long are counted in chunks (BPE cost grows with the square of a run). */
const LONG_RUN = /\S{256,}/gu;
const RUN_CHUNK = 64;
/** Characters of long runs counted exactly per text; beyond that, UTF-8 bytes (an upper bound). */
const EXACT_LONG_RUN_CHARS = 16_384;

function countBounded(e: Tiktoken, text: string): number {
	// Special-token text ("<|endoftext|>") typed by a user is counted as ordinary text.
	const exact = (t: string) => (t ? e.encode(t, [], []).length : 0);
	if (text.length < 256) return exact(text);
	let total = 0;
	let last = 0;
	let budget = EXACT_LONG_RUN_CHARS;
	for (const m of text.matchAll(LONG_RUN)) {
		total += exact(text.slice(last, m.index));
		const chars = Array.from(m[0]);
		for (let i = 0; i < chars.length; i += RUN_CHUNK) {
			const chunk = chars.slice(i, i + RUN_CHUNK).join('');
			total += budget > 0 ? exact(chunk) : fallbackTokenCount(chunk);
			budget -= RUN_CHUNK;
		}
		last = (m.index as number) + m[0].length;
	}
	return total + exact(text.slice(last));
}

/** A js-tiktoken counter; one encoder per encoding per process, created on first use. */
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
export function safeCounter(counter: TokenCounter, onFailure: (error: unknown) => void): TokenCounter {
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
