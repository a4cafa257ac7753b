// Seeded random JSON for property tests: a PRNG, random values, and random edits of a value.
import type { JsonValue } from '../../../src/internal';

/** mulberry32: a small seeded PRNG (same sequence for the same seed). */
export function mulberry32(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

// Keys that need JSON Pointer escaping, the empty key, digits (object keys that look like indexes) and __proto__.
const KEYS = ['a', 'b', 'c', 'name', '', '0', '1', 'a/b', '~', '~1', '/', 'é', '__proto__', 'x y'];
const STRINGS = ['', 'x', 'PERFUME', 'FRAGRANCE', 'a/b', '~0', '😀', 'line\nbreak', '"q"'];

function pick<T>(rnd: () => number, xs: readonly T[]): T {
	return xs[Math.floor(rnd() * xs.length)];
}

function setOwn(obj: Record<string, JsonValue>, key: string, value: JsonValue) {
	Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

export function randomJson(rnd: () => number, depth: number): JsonValue {
	const r = rnd();
	if (depth <= 0 || r < 0.35) {
		const s = rnd();
		if (s < 0.15) return null;
		if (s < 0.3) return rnd() < 0.5;
		if (s < 0.55) return Math.floor(rnd() * 10) - 3;
		if (s < 0.65) return Math.round(rnd() * 1e6) / 100;
		return pick(rnd, STRINGS);
	}
	if (r < 0.65)
		return Array.from({ length: Math.floor(rnd() * 6) }, () => randomJson(rnd, depth - 1));
	const obj: Record<string, JsonValue> = {};
	const n = Math.floor(rnd() * 6);
	for (let i = 0; i < n; i++) setOwn(obj, pick(rnd, KEYS), randomJson(rnd, depth - 1));
	return obj;
}

/** A copy of `value` with `edits` random changes somewhere inside (insert, delete, replace, add/remove keys). */
export function mutate(rnd: () => number, value: JsonValue, edits: number): JsonValue {
	let out = JSON.parse(JSON.stringify(value)) as JsonValue;
	for (let e = 0; e < edits; e++) out = editOnce(rnd, out);
	return out;
}

function editOnce(rnd: () => number, value: JsonValue): JsonValue {
	if (Array.isArray(value)) {
		const r = rnd();
		if (value.length > 0 && r < 0.4) {
			const i = Math.floor(rnd() * value.length);
			value[i] = editOnce(rnd, value[i]);
		} else if (value.length > 0 && r < 0.65) value.splice(Math.floor(rnd() * value.length), 1);
		else value.splice(Math.floor(rnd() * (value.length + 1)), 0, randomJson(rnd, 2));
		return value;
	}
	if (value !== null && typeof value === 'object') {
		const keys = Object.keys(value);
		const r = rnd();
		if (keys.length > 0 && r < 0.5) {
			const k = pick(rnd, keys);
			setOwn(value, k, editOnce(rnd, value[k]));
		} else if (keys.length > 0 && r < 0.7) delete value[pick(rnd, keys)];
		else setOwn(value, pick(rnd, KEYS), randomJson(rnd, 2));
		return value;
	}
	return rnd() < 0.5 ? randomJson(rnd, 2) : value;
}
