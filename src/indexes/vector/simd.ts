// Approximate dot products of many int8 rows with one int16 query, as a tiny WebAssembly SIMD
// function, for the first pass of an exact search (vector-segment.ts reranks what it might have
// misranked). int8 rows are a quarter of the Float32 bytes, and one instruction multiplies eight
// pairs, so the pass is several times faster than Float32. No native module and nothing to install:
// the module is the 334 bytes below, assembled here (each instruction commented), and compiled by the
// JavaScript engine. Where WebAssembly SIMD is missing, callers use a JavaScript loop over Float32.
//
// (func (export "dots8") (param $q i32) (param $v i32) (param $n i32) (param $stride i32) (param $out i32)
//   for r in 0 … n−1:  out[r] = Σ_j v[r·stride + j] · q[j]   (v: i8, q: i16, out: i32; stride in bytes,
//   a multiple of 32)

// The part of the WebAssembly JavaScript API used here (the compiler's lib has no DOM types).
interface WasmMemory {
	readonly buffer: ArrayBuffer;
}
interface WasmInstance {
	readonly exports: Record<string, unknown>;
}
type WasmModule = object;
declare const WebAssembly: {
	validate(bytes: Uint8Array): boolean;
	Module: new (bytes: Uint8Array) => WasmModule;
	Instance: new (
		module: WasmModule,
		imports: Record<string, Record<string, unknown>>,
	) => WasmInstance;
	Memory: new (descriptor: { initial: number }) => WasmMemory;
};

const I32 = 0x7f;
const V128 = 0x7b;

/** Unsigned LEB128. */
function uleb(n: number): number[] {
	const out: number[] = [];
	do {
		let byte = n & 0x7f;
		n >>>= 7;
		if (n !== 0) byte |= 0x80;
		out.push(byte);
	} while (n !== 0);
	return out;
}

/** Signed LEB128 (i32.const immediates). */
function sleb(n: number): number[] {
	const out: number[] = [];
	for (;;) {
		const byte = n & 0x7f;
		n >>= 7;
		const done = (n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0);
		out.push(done ? byte : byte | 0x80);
		if (done) return out;
	}
}

const section = (id: number, body: number[]) => [id, ...uleb(body.length), ...body];
const name = (s: string) => [...uleb(s.length), ...Buffer.from(s, 'utf8')];

// Instructions (opcodes as the WebAssembly core and SIMD specifications number them).
const get = (i: number) => [0x20, i]; // local.get
const set = (i: number) => [0x21, i]; // local.set
const tee = (i: number) => [0x22, i]; // local.tee
const i32 = (n: number) => [0x41, ...sleb(n)]; // i32.const
const ADD = 0x6a; // i32.add
const SUB = 0x6b; // i32.sub
const LT_U = 0x49; // i32.lt_u
const EQZ = 0x45; // i32.eqz
const BLOCK = [0x02, 0x40]; // block (no result)
const LOOP = [0x03, 0x40]; // loop (no result)
const END = 0x0b;
const brIf = (depth: number) => [0x0d, depth]; // br_if
const I32_STORE = [0x36, 0x02, 0x00]; // i32.store align=4 offset=0
const v128Load = (offset: number) => [0xfd, 0x00, 0x04, ...uleb(offset)]; // v128.load align=16
const load8x8s = (offset: number) => [0xfd, 0x01, 0x03, ...uleb(offset)]; // v128.load8x8_s align=8
const V128_ZERO = [0xfd, 0x0c, ...new Array<number>(16).fill(0)]; // v128.const 0
const I32X4_ADD = [0xfd, ...uleb(0xae)]; // i32x4.add
const I32X4_DOT = [0xfd, ...uleb(0xba)]; // i32x4.dot_i16x8_s: pairs of i16 products, summed in i32
const lane = (i: number) => [0xfd, 0x1b, i]; // i32x4.extract_lane

// Locals: 0 q, 1 v (the current row, moved along), 2 n (rows left), 3 stride (bytes), 4 out (moved
// along), 5 end (of the current row), 6 qp (the query, moved along), 7–10 the four accumulators.
const [Q, V, N, STRIDE, OUT, ROW_END, QP] = [0, 1, 2, 3, 4, 5, 6];
const ACC = [7, 8, 9, 10];
/** Steps per turn of the inner loop, 8 row bytes each. */
const STEPS = 4;

/** acc[k mod 4] += dot(8 row bytes at v + 8k widened to i16, 8 query i16 at qp + 16k) */
const step = (k: number) => [
	...get(ACC[k % 4]),
	...get(V),
	...load8x8s(8 * k),
	...get(QP),
	...v128Load(16 * k),
	...I32X4_DOT,
	...I32X4_ADD,
	...set(ACC[k % 4]),
];

const body = [
	// locals: end, qp (i32); four v128 accumulators
	...[2, 2, I32, 4, V128],
	...BLOCK,
	...get(N),
	EQZ,
	...brIf(0),
	...LOOP, // rows
	...ACC.flatMap((a) => [...V128_ZERO, ...set(a)]),
	...get(V),
	...get(STRIDE),
	ADD,
	...set(ROW_END),
	...get(Q),
	...set(QP),
	...LOOP, // 8·STEPS row bytes (twice as many query bytes) per turn
	...Array.from({ length: STEPS }, (_, k) => step(k)).flat(),
	...get(QP),
	...i32(16 * STEPS),
	ADD,
	...set(QP),
	...get(V),
	...i32(8 * STEPS),
	ADD,
	...tee(V), // ends on the next row
	...get(ROW_END),
	LT_U,
	...brIf(0),
	END,
	...get(OUT), // *out = the four lanes of acc0 + acc1 + acc2 + acc3, summed
	...get(ACC[0]),
	...get(ACC[1]),
	...I32X4_ADD,
	...get(ACC[2]),
	...I32X4_ADD,
	...get(ACC[3]),
	...I32X4_ADD,
	...tee(ACC[0]),
	...lane(0),
	...get(ACC[0]),
	...lane(1),
	ADD,
	...get(ACC[0]),
	...lane(2),
	ADD,
	...get(ACC[0]),
	...lane(3),
	ADD,
	...I32_STORE,
	...get(OUT), // out += 4
	...i32(4),
	ADD,
	...set(OUT),
	...get(N), // n −= 1, again while n > 0
	...i32(1),
	SUB,
	...tee(N),
	...brIf(0),
	END,
	END,
	END,
];

const BYTES = new Uint8Array([
	...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
	...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]), // type: (i32 ×5) → ()
	...section(2, [1, ...name('env'), ...name('mem'), 0x02, 0x00, 0x01]), // import memory env.mem
	...section(3, [1, 0]), // one function of type 0
	...section(7, [1, ...name('dots8'), 0x00, 0]), // export it as "dots8"
	...section(10, [1, ...uleb(body.length), ...body]),
]);

/** Bytes per int8 row in WebAssembly memory: the dimensions rounded up to a turn (zeros after them). */
export const strideOf = (dimensions: number) => Math.ceil(dimensions / (8 * STEPS)) * 8 * STEPS;

let compiled: WasmModule | null | undefined;

/** The compiled module, or null where WebAssembly SIMD is not available. */
function simdModule(): WasmModule | null {
	if (compiled !== undefined) return compiled;
	try {
		compiled =
			typeof WebAssembly === 'object' && WebAssembly.validate(BYTES)
				? new WebAssembly.Module(BYTES)
				: null;
	} catch {
		compiled = null;
	}
	return compiled;
}

let enabled = true;

/** Turns the WebAssembly kernel off (true: on where available). For tests and benchmarks. */
export function useSimd(on: boolean): void {
	enabled = on;
}

export function simdAvailable(): boolean {
	return enabled && simdModule() !== null;
}

/** The largest |query value|: Σ|row · query| over a row then stays below 2³¹ (no i32 overflow). */
const queryMax = (stride: number) => Math.min(32767, Math.floor(0x7fffffff / (127 * stride)));

function maxAbs(v: Float32Array, from: number, length: number): number {
	let max = 0;
	for (let j = from; j < from + length; j++) {
		const a = Math.abs(v[j]);
		if (a > max) max = a;
	}
	return max;
}

/**
 * Writes round(v[from + j] / scale) to out[at + j] for j < length; returns the squared lengths of
 * the error, ‖v − out·scale‖², and of the approximation, ‖out·scale‖² (both for the error bound).
 */
function quantize(
	v: Float32Array,
	from: number,
	length: number,
	scale: number,
	out: Int8Array | Int16Array,
	at: number,
): [error: number, approximation: number] {
	const inverse = scale > 0 ? 1 / scale : 0;
	let error = 0;
	let approximation = 0;
	for (let j = 0; j < length; j++) {
		const x = v[from + j];
		const n = Math.floor(x * inverse + 0.5); // not Math.round: several times slower in V8 here
		const y = n * scale;
		out[at + j] = n;
		error += (x - y) * (x - y);
		approximation += y * y;
	}
	return [error, approximation];
}

/** Whether more than `share` of the mask's entries are marked. */
function denser(mask: Uint8Array, share: number): boolean {
	let marked = 0;
	for (let r = 0; r < mask.length; r++) marked += mask[r] !== 0 ? 1 : 0;
	return marked > share * mask.length;
}

/** A query as dots8 takes it: q ≈ values · scale, with error = ‖q − values · scale‖₂ and norm = ‖q‖₂. */
export interface QuantizedQuery {
	values: Int16Array;
	scale: number;
	error: number;
	norm: number;
}

export function quantizeQuery(q: Float32Array): QuantizedQuery {
	const values = new Int16Array(strideOf(q.length));
	const scale = maxAbs(q, 0, q.length) / queryMax(values.length);
	const [error] = quantize(q, 0, q.length, scale, values, 0);
	let norm = 0;
	for (let j = 0; j < q.length; j++) norm += q[j] * q[j];
	return { values, scale, error: Math.sqrt(error), norm: Math.sqrt(norm) };
}

/**
 * `count` rows of `dimensions` floats as int8 in their own WebAssembly memory (symmetric, one scale
 * per row: max |x| / 127; rows padded to strideOf), with room for a query and the scores. Row r is
 * about int8 · scale[r], off by error[r] (‖x − int8 · scale‖₂); reach[r] is ‖int8 · scale‖₂.
 */
export class QuantizedRows {
	private readonly run: (q: number, v: number, n: number, stride: number, out: number) => void;
	private readonly query: Int16Array;
	private readonly scores: Int32Array;
	readonly stride: number;
	readonly scale: Float64Array;
	readonly error: Float64Array;
	readonly reach: Float64Array;
	/** What this holds in memory: the WebAssembly memory and the three numbers per row. */
	readonly bytes: number;

	constructor(
		vectors: Float32Array,
		readonly count: number,
		readonly dimensions: number,
	) {
		this.stride = strideOf(dimensions);
		const rowBytes = count * this.stride;
		const total = rowBytes + 2 * this.stride + 4 * count;
		const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(total / 65536)) });
		const instance = new WebAssembly.Instance(simdModule() as WasmModule, { env: { mem: memory } });
		this.run = instance.exports.dots8 as QuantizedRows['run'];
		const rows = new Int8Array(memory.buffer, 0, rowBytes);
		this.query = new Int16Array(memory.buffer, rowBytes, this.stride);
		this.scores = new Int32Array(memory.buffer, rowBytes + 2 * this.stride, count);
		this.scale = new Float64Array(count);
		this.error = new Float64Array(count);
		this.reach = new Float64Array(count);
		for (let r = 0; r < count; r++) {
			const from = r * dimensions;
			const scale = maxAbs(vectors, from, dimensions) / 127;
			const [error, reach] = quantize(vectors, from, dimensions, scale, rows, r * this.stride);
			this.scale[r] = scale;
			this.error[r] = Math.sqrt(error);
			this.reach[r] = Math.sqrt(reach);
		}
		this.bytes = memory.buffer.byteLength + 24 * count;
	}

	/**
	 * Σ int8 · query.values for every row `mask` marks (all rows without one), as a view valid until
	 * the next call; unmarked rows hold stale numbers. A sparse mask (one user's rows) is computed run
	 * by run of consecutive marked rows, so a filtered search does not pay for the whole segment.
	 */
	dots(query: QuantizedQuery, mask?: Uint8Array): Int32Array {
		this.query.set(query.values);
		const q = this.query.byteOffset;
		const out = this.scores.byteOffset;
		if (!mask || denser(mask, 0.5)) {
			this.run(q, 0, this.count, this.stride, out);
			return this.scores;
		}
		for (let r = 0; r < this.count;) {
			if (mask[r] === 0) {
				r++;
				continue;
			}
			let end = r + 1;
			while (end < this.count && mask[end] !== 0) end++;
			this.run(q, r * this.stride, end - r, this.stride, out + 4 * r);
			r = end;
		}
		return this.scores;
	}
}
