// RFC 6902 JSON Patch (add, remove, replace, move, copy, test) over RFC 6901 JSON Pointers.
import { InvalidInputError, NotJsonError, PatchError } from '../errors';
import { cloneJson, hasOwn, jsonEqual, setOwn, showJson, toJsonText } from './json';
import type { JsonValue } from './json';

export type PatchOperation =
	| { op: 'add'; path: string; value: JsonValue }
	| { op: 'remove'; path: string }
	| { op: 'replace'; path: string; value: JsonValue }
	| { op: 'move'; from: string; path: string }
	| { op: 'copy'; from: string; path: string }
	| { op: 'test'; path: string; value: JsonValue };

/** A JSON Patch document: operations applied in order, all or nothing. */
export type JsonPatch = PatchOperation[];

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The reference tokens of a JSON Pointer, unescaped; a string error when it is not one. */
export function parsePointer(pointer: string): string[] | string {
	if (pointer === '') return [];
	if (!pointer.startsWith('/')) return 'a JSON Pointer is "" or starts with "/"';
	const tokens = pointer.slice(1).split('/');
	for (const t of tokens)
		if (/~(?![01])/.test(t)) return `"~" must be followed by 0 or 1 (in "${t}")`;
	return tokens.map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

type Container = JsonValue[] | Record<string, JsonValue>;

/** Thrown inside one operation; applyPatch turns it into a PatchError naming the operation. */
class OpFailure extends Error {}

function fail(reason: string): never {
	throw new OpFailure(reason);
}

function pointerOf(tokens: string[], n: number): string {
	return tokens
		.slice(0, n)
		.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`)
		.join('');
}

/** The value at `tokens` (which must exist). */
function valueAt(doc: JsonValue, tokens: string[]): JsonValue {
	let cur: JsonValue = doc;
	for (let i = 0; i < tokens.length; i++) {
		const t = tokens[i];
		if (Array.isArray(cur)) {
			if (!ARRAY_INDEX.test(t)) fail(`"${pointerOf(tokens, i + 1)}": "${t}" is not an array index`);
			const index = Number(t);
			if (index >= cur.length)
				fail(`"${pointerOf(tokens, i + 1)}" does not exist (the array has ${cur.length} elements)`);
			cur = cur[index];
		} else if (typeof cur === 'object' && cur !== null) {
			if (!hasOwn(cur, t)) fail(`"${pointerOf(tokens, i + 1)}" does not exist`);
			cur = cur[t];
		} else {
			fail(`"${pointerOf(tokens, i)}" is ${showJson(cur, 30)}, not an object or array`);
		}
	}
	return cur;
}

/** The container that holds the location `tokens` (its parent must exist and be an object or array). */
function parentOf(doc: JsonValue, tokens: string[]): Container {
	const parent = valueAt(doc, tokens.slice(0, -1));
	if (typeof parent !== 'object' || parent === null)
		fail(
			`"${pointerOf(tokens, tokens.length - 1)}" is ${showJson(parent, 30)}, not an object or array`,
		);
	return parent;
}

function indexIn(array: JsonValue[], token: string, tokens: string[], allowEnd: boolean): number {
	if (token === '-' && allowEnd) return array.length;
	if (!ARRAY_INDEX.test(token))
		fail(`"${pointerOf(tokens, tokens.length)}": "${token}" is not an array index`);
	const index = Number(token);
	const max = allowEnd ? array.length : array.length - 1;
	if (index > max)
		fail(
			`"${pointerOf(tokens, tokens.length)}": index ${index} is out of bounds (the array has ${array.length} elements)`,
		);
	return index;
}

/** add: returns the new root (the document itself changes in place below the root). */
function add(doc: JsonValue, tokens: string[], value: JsonValue): JsonValue {
	if (tokens.length === 0) return value;
	const parent = parentOf(doc, tokens);
	const key = tokens[tokens.length - 1];
	if (Array.isArray(parent)) parent.splice(indexIn(parent, key, tokens, true), 0, value);
	else setOwn(parent, key, value);
	return doc;
}

function remove(doc: JsonValue, tokens: string[]): JsonValue {
	if (tokens.length === 0) fail('the whole document cannot be removed');
	const parent = parentOf(doc, tokens);
	const key = tokens[tokens.length - 1];
	if (Array.isArray(parent)) parent.splice(indexIn(parent, key, tokens, false), 1);
	else {
		if (!hasOwn(parent, key)) fail(`"${pointerOf(tokens, tokens.length)}" does not exist`);
		delete parent[key];
	}
	return doc;
}

function replace(doc: JsonValue, tokens: string[], value: JsonValue): JsonValue {
	if (tokens.length === 0) return value;
	const parent = parentOf(doc, tokens);
	const key = tokens[tokens.length - 1];
	if (Array.isArray(parent)) parent[indexIn(parent, key, tokens, false)] = value;
	else {
		if (!hasOwn(parent, key)) fail(`"${pointerOf(tokens, tokens.length)}" does not exist`);
		setOwn(parent, key, value);
	}
	return doc;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * Applies an RFC 6902 JSON Patch and returns the result. The input is never changed (it may be a frozen
 * stored version): the patch works on a copy, and either every operation applies or a PatchError names
 * the first that failed (its index, op and path) and nothing is returned. Values the patch inserts are
 * copied, so the result shares nothing with the patch either.
 */
export function applyPatch(document: unknown, patch: unknown): JsonValue {
	toJsonText('document', document, Infinity);
	if (!Array.isArray(patch))
		throw new InvalidInputError('patch', 'must be an array of JSON Patch operations');
	let doc = cloneJson(document as JsonValue);
	patch.forEach((raw: unknown, index) => {
		const op = raw as Record<string, unknown>;
		const name = typeof op?.op === 'string' ? op.op : String(op?.op);
		const path = typeof op?.path === 'string' ? op.path : '';
		const failed = (reason: string) => new PatchError(index, name, path, reason);
		if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
			throw failed('an operation must be an object');
		if (!OPS.has(name))
			throw failed(
				`unknown "op" ${JSON.stringify(op.op)} (add, remove, replace, move, copy or test)`,
			);
		if (typeof op.path !== 'string') throw failed('"path" must be a string');
		const tokens = parsePointer(op.path);
		if (typeof tokens === 'string') throw failed(`"path" is not a JSON Pointer: ${tokens}`);
		let value: JsonValue | undefined;
		if (name === 'add' || name === 'replace' || name === 'test') {
			if (!hasOwn(op, 'value')) throw failed('"value" is missing');
			try {
				toJsonText('value', op.value, Infinity);
			} catch (error) {
				if (error instanceof NotJsonError)
					throw failed(
						`"value" is not JSON: ${error.path === '' ? 'it' : `"${error.path}"`} ${error.problem}`,
					);
				throw error;
			}
			value = cloneJson(op.value as JsonValue);
		}
		let fromTokens: string[] = [];
		if (name === 'move' || name === 'copy') {
			if (typeof op.from !== 'string') throw failed('"from" must be a string');
			const parsed = parsePointer(op.from);
			if (typeof parsed === 'string') throw failed(`"from" is not a JSON Pointer: ${parsed}`);
			fromTokens = parsed;
		}
		try {
			switch (name) {
				case 'add':
					doc = add(doc, tokens, value as JsonValue);
					break;
				case 'remove':
					doc = remove(doc, tokens);
					break;
				case 'replace':
					valueAt(doc, tokens);
					doc = replace(doc, tokens, value as JsonValue);
					break;
				case 'move': {
					const from = op.from as string;
					if (path.startsWith(`${from}/`))
						fail(`"from" ${JSON.stringify(from)} cannot be moved into one of its own children`);
					const moved = valueAt(doc, fromTokens);
					if (from === path) break;
					doc = remove(doc, fromTokens);
					doc = add(doc, tokens, moved);
					break;
				}
				case 'copy':
					doc = add(doc, tokens, cloneJson(valueAt(doc, fromTokens)));
					break;
				case 'test': {
					const actual = valueAt(doc, tokens);
					if (!jsonEqual(actual, value))
						fail(`test failed: the value is ${showJson(actual)}, not ${showJson(value)}`);
					break;
				}
			}
		} catch (error) {
			if (error instanceof OpFailure) throw failed(error.message);
			throw error;
		}
	});
	return doc;
}
