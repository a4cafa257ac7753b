// JSON Patch (RFC 6902) and diff: the RFC's own examples, error reporting by operation index and path,
// and the round trip applyPatch(a, diffJson(a, b).patch) = b over thousands of seeded random pairs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
	applyPatch,
	diffJson,
	InvalidInputError,
	jsonEqual,
	MAX_SUMMARY_LINES,
	NotJsonError,
	parsePointer,
	PatchError,
} from '../../../src/internal';
import type { JsonValue } from '../../../src/internal';
import { mulberry32, randomJson, mutate } from './random-json';

const apply = (doc: unknown, patch: unknown) => applyPatch(doc, patch);

function patchError(fn: () => unknown, index: number, pattern?: RegExp): PatchError {
	let caught: unknown;
	try {
		fn();
	} catch (error) {
		caught = error;
	}
	assert.ok(caught instanceof PatchError, `expected a PatchError, got ${String(caught)}`);
	assert.equal(caught.index, index);
	if (pattern) assert.match(caught.message, pattern);
	return caught;
}

describe('RFC 6902 appendix A examples', () => {
	const ok: [string, JsonValue, unknown[], JsonValue][] = [
		[
			'A.1 adding an object member',
			{ foo: 'bar' },
			[{ op: 'add', path: '/baz', value: 'qux' }],
			{ baz: 'qux', foo: 'bar' },
		],
		[
			'A.2 adding an array element',
			{ foo: ['bar', 'baz'] },
			[{ op: 'add', path: '/foo/1', value: 'qux' }],
			{ foo: ['bar', 'qux', 'baz'] },
		],
		[
			'A.3 removing an object member',
			{ baz: 'qux', foo: 'bar' },
			[{ op: 'remove', path: '/baz' }],
			{ foo: 'bar' },
		],
		[
			'A.4 removing an array element',
			{ foo: ['bar', 'qux', 'baz'] },
			[{ op: 'remove', path: '/foo/1' }],
			{ foo: ['bar', 'baz'] },
		],
		[
			'A.5 replacing a value',
			{ baz: 'qux', foo: 'bar' },
			[{ op: 'replace', path: '/baz', value: 'boo' }],
			{ baz: 'boo', foo: 'bar' },
		],
		[
			'A.6 moving a value',
			{ foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
			[{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
			{ foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
		],
		[
			'A.7 moving an array element',
			{ foo: ['all', 'grass', 'cows', 'eat'] },
			[{ op: 'move', from: '/foo/1', path: '/foo/3' }],
			{ foo: ['all', 'cows', 'eat', 'grass'] },
		],
		[
			'A.8 testing a value: success',
			{ baz: 'qux', foo: ['a', 2, 'c'] },
			[
				{ op: 'test', path: '/baz', value: 'qux' },
				{ op: 'test', path: '/foo/1', value: 2 },
			],
			{ baz: 'qux', foo: ['a', 2, 'c'] },
		],
		[
			'A.10 adding a nested member object',
			{ foo: 'bar' },
			[{ op: 'add', path: '/child', value: { grandchild: {} } }],
			{ foo: 'bar', child: { grandchild: {} } },
		],
		[
			'A.11 ignoring unrecognized elements',
			{ foo: 'bar' },
			[{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }],
			{ foo: 'bar', baz: 'qux' },
		],
		[
			'A.14 ~ escape ordering',
			{ '/': 9, '~1': 10 },
			[{ op: 'test', path: '/~01', value: 10 }],
			{ '/': 9, '~1': 10 },
		],
		[
			'A.16 adding an array value',
			{ foo: ['bar'] },
			[{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }],
			{ foo: ['bar', ['abc', 'def']] },
		],
	];
	for (const [name, doc, patch, expected] of ok)
		it(name, () => assert.deepEqual(apply(doc, patch), expected));

	it('A.9 testing a value: error', () => {
		patchError(
			() => apply({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]),
			0,
			/test failed/,
		);
	});
	it('A.12 adding to a nonexistent target', () => {
		patchError(
			() => apply({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]),
			0,
			/"\/baz" does not exist/,
		);
	});
	it('A.13 invalid JSON Patch document (duplicate "op": the last one counts, and fails)', () => {
		const patch = JSON.parse('[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]');
		patchError(() => apply({ foo: 'bar' }, patch), 0, /remove/);
	});
	it('A.15 comparing strings and numbers', () => {
		patchError(() => apply({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]), 0);
	});
});

describe('JSON Pointer (RFC 6901 section 5 examples)', () => {
	const doc: JsonValue = {
		foo: ['bar', 'baz'],
		'': 0,
		'a/b': 1,
		'c%d': 2,
		'e^f': 3,
		'g|h': 4,
		'i\\j': 5,
		'k"l': 6,
		' ': 7,
		'm~n': 8,
	};
	const cases: [string, JsonValue][] = [
		['', doc],
		['/foo', ['bar', 'baz']],
		['/foo/0', 'bar'],
		['/', 0],
		['/a~1b', 1],
		['/c%d', 2],
		['/e^f', 3],
		['/g|h', 4],
		['/i\\j', 5],
		['/k"l', 6],
		['/ ', 7],
		['/m~0n', 8],
	];
	for (const [pointer, value] of cases)
		it(`test ${JSON.stringify(pointer)}`, () => {
			assert.deepEqual(apply(doc, [{ op: 'test', path: pointer, value }]), doc);
		});
	it('parses and refuses pointers', () => {
		assert.deepEqual(parsePointer('/a~1b/~0/~01'), ['a/b', '~', '~1']);
		assert.equal(typeof parsePointer('foo'), 'string');
		assert.equal(typeof parsePointer('/a~2'), 'string');
		assert.equal(typeof parsePointer('/a~'), 'string');
	});
});

describe('applyPatch: every operation, and errors naming the operation', () => {
	it('replace and add at the root, copy, move to the same place', () => {
		assert.equal(apply({ a: 1 }, [{ op: 'replace', path: '', value: 5 }]), 5);
		assert.deepEqual(apply({ a: 1 }, [{ op: 'add', path: '', value: [1] }]), [1]);
		const copied = apply({ a: { b: [1] } }, [
			{ op: 'copy', from: '/a', path: '/c' },
			{ op: 'add', path: '/c/b/-', value: 2 },
		]);
		assert.deepEqual(
			copied,
			{ a: { b: [1] }, c: { b: [1, 2] } },
			'a copy is not shared with its source',
		);
		assert.deepEqual(apply({ a: 1 }, [{ op: 'move', from: '/a', path: '/a' }]), { a: 1 });
		assert.deepEqual(apply([1, 2, 3], [{ op: 'remove', path: '/2' }]), [1, 2]);
		assert.deepEqual(apply([1, 2, 3], [{ op: 'add', path: '/3', value: 4 }]), [1, 2, 3, 4]);
		assert.deepEqual(apply({ a: [{ b: 1 }] }, [{ op: 'replace', path: '/a/0/b', value: null }]), {
			a: [{ b: null }],
		});
	});

	it('test compares JSON values: object keys in any order, arrays in order', () => {
		assert.doesNotThrow(() =>
			apply({ a: { x: 1, y: [1, 2] } }, [{ op: 'test', path: '/a', value: { y: [1, 2], x: 1 } }]),
		);
		patchError(() => apply({ a: [1, 2] }, [{ op: 'test', path: '/a', value: [2, 1] }]), 0);
		patchError(() => apply({ a: 1 }, [{ op: 'test', path: '/a', value: true }]), 0);
		patchError(() => apply({ a: null }, [{ op: 'test', path: '/a', value: {} }]), 0);
	});

	it('names the failing operation by index, op and path; the input is unchanged', () => {
		const doc = { list: [1, 2], obj: { k: 'v' } };
		const before = structuredClone(doc);
		const err = patchError(
			() =>
				apply(doc, [
					{ op: 'add', path: '/list/-', value: 3 },
					{ op: 'replace', path: '/obj/k', value: 'w' },
					{ op: 'remove', path: '/obj/missing' },
				]),
			2,
			/^JSON Patch operation 2 \(remove "\/obj\/missing"\) failed: "\/obj\/missing" does not exist$/,
		);
		assert.equal(err.op, 'remove');
		assert.equal(err.path, '/obj/missing');
		assert.deepEqual(doc, before, 'nothing applied to the input');
	});

	it('works on a frozen input (a stored version)', () => {
		const frozen = Object.freeze({ a: Object.freeze([1]) });
		assert.deepEqual(apply(frozen, [{ op: 'add', path: '/a/0', value: 0 }]), { a: [0, 1] });
	});

	it('refuses what RFC 6902 refuses', () => {
		const bad: [unknown[], RegExp][] = [
			[[{ op: 'add', path: '/a/01', value: 1 }], /not an array index/],
			[[{ op: 'add', path: '/a/3', value: 1 }], /out of bounds/],
			[[{ op: 'remove', path: '/a/-' }], /not an array index/],
			[[{ op: 'replace', path: '/a/2', value: 1 }], /does not exist/],
			[[{ op: 'remove', path: '' }], /whole document/],
			[[{ op: 'add', path: 'a', value: 1 }], /JSON Pointer/],
			[[{ op: 'add', path: '/a~2', value: 1 }], /JSON Pointer/],
			[[{ op: 'add', path: '/x' }], /"value" is missing/],
			[[{ op: 'add', path: '/x', value: undefined }], /not JSON/],
			[[{ op: 'add', path: '/x', value: { f: () => 1 } }], /not JSON: "\/f" is a function/],
			[[{ op: 'jump', path: '/x' }], /unknown "op"/],
			[[{ path: '/x' }], /unknown "op"/],
			[[{ op: 'add', value: 1 }], /"path" must be a string/],
			[[{ op: 'move', path: '/x' }], /"from" must be a string/],
			[[{ op: 'move', from: '/o', path: '/o/p' }], /own children/],
			[[{ op: 'copy', from: '/nope', path: '/x' }], /"\/nope" does not exist/],
			[[{ op: 'add', path: '/s/x', value: 1 }], /not an object or array/],
			[['add'], /must be an object/],
			[[null], /must be an object/],
		];
		for (const [patch, pattern] of bad)
			patchError(() => apply({ a: [1, 2], o: { p: 1 }, s: 'str' }, patch), 0, pattern);
		assert.throws(() => apply({}, { op: 'add' }), InvalidInputError);
		assert.throws(() => apply({ d: new Date() }, []), /"\/d" is a Date object/);
	});

	it('a "__proto__" member is an ordinary key: no prototype is touched', () => {
		const out = apply({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as Record<
			string,
			unknown
		>;
		assert.ok(Object.prototype.hasOwnProperty.call(out, '__proto__'));
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
		assert.equal(Object.getPrototypeOf(out), Object.prototype);
		assert.deepEqual(
			JSON.parse(JSON.stringify(out)),
			JSON.parse('{"__proto__":{"polluted":true}}'),
		);
	});
});

describe('diffJson', () => {
	it('gives a minimal patch and one readable line per change', () => {
		const a = { inci: 'WATER', category: 'PERFUME', tags: ['a', 'b', 'c'], old: 1 };
		const b = { inci: 'WATER', category: 'FRAGRANCE', tags: ['a', 'x', 'b', 'c'], new: { n: 1 } };
		const d = diffJson(a, b);
		assert.deepEqual(d.patch, [
			{ op: 'replace', path: '/category', value: 'FRAGRANCE' },
			{ op: 'add', path: '/tags/1', value: 'x' },
			{ op: 'remove', path: '/old' },
			{ op: 'add', path: '/new', value: { n: 1 } },
		]);
		assert.deepEqual(d.summary, [
			'replaced /category: "PERFUME" → "FRAGRANCE"',
			'added /tags/1: "x"',
			'removed /old (was 1)',
			'added /new: {"n":1}',
		]);
		assert.deepEqual(diffJson(a, structuredClone(a)), { patch: [], summary: [] });
	});

	it('escapes keys in paths and shortens long values', () => {
		const d = diffJson({ 'a/b': 1, '~': 'x'.repeat(100) }, { 'a/b': 2, '~': 'y' });
		assert.deepEqual(
			d.patch.map((p) => p.path),
			['/a~1b', '/~0'],
		);
		assert.ok(d.summary[1].length < 100);
		assert.match(d.summary[1], /^replaced \/~0: "x+… → "y"$/);
	});

	it('aligns arrays: a removal in the middle is one operation', () => {
		const a = [1, 2, 3, 4, 5, 6];
		const b = [1, 2, 4, 5, 6, 7];
		const d = diffJson(a, b);
		assert.deepEqual(d.patch, [
			{ op: 'remove', path: '/2' },
			{ op: 'add', path: '/5', value: 7 },
		]);
	});

	it('folds summaries past MAX_SUMMARY_LINES (the patch stays complete)', () => {
		const a = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i]));
		const b = Object.fromEntries(Array.from({ length: 80 }, (_, i) => [`k${i}`, i + 1]));
		const d = diffJson(a, b);
		assert.equal(d.patch.length, 80);
		assert.equal(d.summary.length, MAX_SUMMARY_LINES + 1);
		assert.equal(d.summary[MAX_SUMMARY_LINES], '… and 30 more changes');
		assert.deepEqual(apply(a, d.patch), b);
	});

	it('refuses values that are not plain JSON', () => {
		assert.throws(() => diffJson({ a: NaN } as never, {}), NotJsonError);
		assert.throws(() => diffJson({}, [undefined] as never), /Invalid b: "\/0" is undefined/);
	});

	it('replaces across types and at the root', () => {
		assert.deepEqual(diffJson({ a: 1 }, [1]).patch, [{ op: 'replace', path: '', value: [1] }]);
		assert.deepEqual(diffJson({ a: [1] }, { a: { 0: 1 } }).patch, [
			{ op: 'replace', path: '/a', value: { 0: 1 } },
		]);
		assert.deepEqual(diffJson({ a: null }, { a: {} }).patch, [
			{ op: 'replace', path: '/a', value: {} },
		]);
	});
});

describe('round trip: applyPatch(a, diffJson(a, b).patch) deep-equals b', () => {
	const check = (a: JsonValue, b: JsonValue, label: string) => {
		const before = JSON.stringify(a);
		const { patch } = diffJson(a, b);
		const out = apply(a, patch);
		assert.ok(jsonEqual(out, b), `${label}: patch ${JSON.stringify(patch)}`);
		assert.deepStrictEqual(out, b, label);
		assert.equal(JSON.stringify(a), before, `${label}: the input is unchanged`);
		// The patch is plain JSON (it can be stored and sent) and applies the same after a round trip.
		assert.ok(jsonEqual(apply(a, JSON.parse(JSON.stringify(patch))), b), label);
	};

	it('1,500 independent random pairs (seed 1)', () => {
		const rnd = mulberry32(1);
		for (let i = 0; i < 1500; i++) check(randomJson(rnd, 4), randomJson(rnd, 4), `pair ${i}`);
	});

	it('1,500 pairs where b is a random edit of a (seed 2)', () => {
		const rnd = mulberry32(2);
		let nonEmpty = 0;
		for (let i = 0; i < 1500; i++) {
			const a = randomJson(rnd, 5);
			const b = mutate(rnd, a, 1 + Math.floor(rnd() * 6));
			if (diffJson(a, b).patch.length > 0) nonEmpty++;
			check(a, b, `edit ${i}`);
			check(b, a, `reverse edit ${i}`);
		}
		assert.ok(nonEmpty > 1200, `most edits change something (${nonEmpty})`);
	});

	it('large arrays (past the alignment limit) still round-trip', () => {
		const rnd = mulberry32(3);
		const a = Array.from({ length: 700 }, () => Math.floor(rnd() * 50));
		const b = Array.from({ length: 650 }, () => Math.floor(rnd() * 50));
		check(a, b, 'big arrays');
	});
});
