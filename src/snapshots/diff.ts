// Structural diff of two JSON values as an RFC 6902 patch, with one human-readable line per change.
import {
	canonicalJson,
	escapePointerToken,
	hasOwn,
	isJsonObject,
	showJson,
	toJsonText,
} from './json';
import type { JsonValue } from './json';
import type { JsonPatch, PatchOperation } from './patch';

export interface JsonDiff {
	/** Applied to the first value with applyPatch, gives the second (deep-equal). */
	patch: JsonPatch;
	/** One line per change, e.g. `replaced /category: "PERFUME" → "FRAGRANCE"`; at most MAX_SUMMARY_LINES. */
	summary: string[];
}

/** Summary lines past this are folded into one "… and N more changes" line (the patch stays complete). */
export const MAX_SUMMARY_LINES = 50;

/** Arrays whose changed middles multiply to more than this are compared index by index, not aligned. */
const MAX_ALIGN_CELLS = 250_000;

interface Change {
	op: PatchOperation;
	/** The value replaced or removed. */
	old?: JsonValue;
}

/**
 * The changes that turn `a` into `b`: objects key by key, arrays aligned on their longest common
 * subsequence of equal elements (so an insertion or removal in the middle is one operation), elements
 * that changed in place compared recursively. Only add, remove and replace are produced. Values that
 * are not plain JSON are refused (NotJsonError naming `a` or `b`).
 */
export function diffJson(a: JsonValue, b: JsonValue): JsonDiff {
	// Plain JSON only (NotJsonError otherwise), and nesting bounded: the walk below recurses.
	toJsonText('a', a, Infinity);
	toJsonText('b', b, Infinity);
	const changes: Change[] = [];
	walk(a, b, '', changes);
	const summary = changes.slice(0, MAX_SUMMARY_LINES).map(describe);
	if (changes.length > MAX_SUMMARY_LINES)
		summary.push(`… and ${changes.length - MAX_SUMMARY_LINES} more changes`);
	return { patch: changes.map((c) => c.op), summary };
}

function describe({ op, old }: Change): string {
	const where = op.path === '' ? '(the whole value)' : op.path;
	switch (op.op) {
		case 'add':
			return `added ${where}: ${showJson(op.value)}`;
		case 'remove':
			return `removed ${where} (was ${showJson(old)})`;
		case 'replace':
			return `replaced ${where}: ${showJson(old)} → ${showJson(op.value)}`;
		default:
			return `${op.op} ${where}`;
	}
}

function walk(a: JsonValue, b: JsonValue, path: string, out: Change[]): void {
	if (a === b) return;
	if (Array.isArray(a) && Array.isArray(b)) return diffArrays(a, b, path, out);
	if (isJsonObject(a) && isJsonObject(b)) {
		for (const key of Object.keys(a)) {
			const p = `${path}/${escapePointerToken(key)}`;
			if (hasOwn(b, key)) walk(a[key], b[key], p, out);
			else out.push({ op: { op: 'remove', path: p }, old: a[key] });
		}
		for (const key of Object.keys(b))
			if (!hasOwn(a, key))
				out.push({ op: { op: 'add', path: `${path}/${escapePointerToken(key)}`, value: b[key] } });
		return;
	}
	if (typeof a !== 'object' || typeof b !== 'object' || canonicalJson(a) !== canonicalJson(b))
		out.push({ op: { op: 'replace', path, value: b }, old: a });
}

function diffArrays(a: JsonValue[], b: JsonValue[], path: string, out: Change[]): void {
	const ka = a.map(canonicalJson);
	const kb = b.map(canonicalJson);
	let start = 0;
	while (start < a.length && start < b.length && ka[start] === kb[start]) start++;
	let endA = a.length;
	let endB = b.length;
	while (endA > start && endB > start && ka[endA - 1] === kb[endB - 1]) {
		endA--;
		endB--;
	}
	const n = endA - start;
	const m = endB - start;
	// Steps over the changed middle: true = keep (equal elements), otherwise a gap [deleted, inserted].
	const steps: (true | [number, number])[] = [];
	if (n > 0 && m > 0 && n * m <= MAX_ALIGN_CELLS) {
		// Longest common subsequence over the middle (suffix table), then walk it into keeps and gaps.
		const width = m + 1;
		const lcs = new Uint32Array((n + 1) * width);
		for (let i = n - 1; i >= 0; i--)
			for (let j = m - 1; j >= 0; j--)
				lcs[i * width + j] =
					ka[start + i] === kb[start + j]
						? lcs[(i + 1) * width + j + 1] + 1
						: Math.max(lcs[(i + 1) * width + j], lcs[i * width + j + 1]);
		let i = 0;
		let j = 0;
		let del = 0;
		let ins = 0;
		while (i < n || j < m) {
			if (i < n && j < m && ka[start + i] === kb[start + j]) {
				if (del || ins) steps.push([del, ins]);
				del = ins = 0;
				steps.push(true);
				i++;
				j++;
			} else if (j >= m || (i < n && lcs[(i + 1) * width + j] >= lcs[i * width + j + 1])) {
				del++;
				i++;
			} else {
				ins++;
				j++;
			}
		}
		if (del || ins) steps.push([del, ins]);
	} else if (n > 0 || m > 0) steps.push([n, m]);
	// Positions: `pos` indexes the array as patched so far (b's elements before it, a's after it).
	let pos = start;
	let ai = start;
	let bi = start;
	for (const step of steps) {
		if (step === true) {
			pos++;
			ai++;
			bi++;
			continue;
		}
		const [del, ins] = step;
		const paired = Math.min(del, ins);
		for (let k = 0; k < paired; k++) walk(a[ai + k], b[bi + k], `${path}/${pos + k}`, out);
		for (let k = paired; k < del; k++)
			out.push({ op: { op: 'remove', path: `${path}/${pos + paired}` }, old: a[ai + k] });
		for (let k = paired; k < ins; k++)
			out.push({ op: { op: 'add', path: `${path}/${pos + k}`, value: b[bi + k] } });
		pos += ins;
		ai += del;
		bi += ins;
	}
}
