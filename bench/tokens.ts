/**
 * Tokenizer benchmark (not a test): our byte-pair counter against js-tiktoken's encode() on the same
 * texts, medians of repeated runs, interleaved. Same encoding (o200k_base), same ranks; the counts must
 * match (the table prints both), except past the 128 KiB exact budget, where ours extrapolates.
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import { Tiktoken } from 'js-tiktoken/lite';

import { TiktokenCounter } from '../src/internal';
import { machineLine, median } from './stats';

/* eslint-disable @typescript-eslint/no-require-imports */
const reference = new Tiktoken(require('js-tiktoken/ranks/o200k_base'));
/* eslint-enable @typescript-eslint/no-require-imports */
const ours = new TiktokenCounter('o200k_base');

const zh =
	'我们今天讨论的是记忆系统的设计与实现，包括会话级别和节点级别的历史记录。这个系统需要在任何对话长度下都保持快速，并且不会丢失或泄露任何一轮对话。';
const ja =
	'これは日本語の文章です。記憶システムは会話の長さに関係なく速くなければなりません。東京の天気は晴れです。';
const en = 'The quick brown fox jumps over the lazy dog, and memory keeps every turn of the chat. ';
const repeat = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);

const cases: Array<{ name: string; text: string; reference: boolean }> = [
	{ name: 'English prose, 27,000 chars', text: repeat(en, 27_000), reference: true },
	{ name: 'Chinese prose, 17,500 chars', text: repeat(zh, 17_500), reference: true },
	{ name: 'Chinese prose, 27,000 chars', text: repeat(zh, 27_000), reference: true },
	{ name: 'Japanese prose, 27,000 chars', text: repeat(ja, 27_000), reference: true },
	{
		name: 'Chinese without punctuation, 3,000 chars',
		text: repeat(zh.replace(/[，。]/g, ''), 3_000),
		reference: true,
	},
	{ name: 'base64 blob, 1 MB', text: randomBytes(750_000).toString('base64'), reference: false },
	{ name: 'one unbroken run, 1 MB', text: 'x'.repeat(1_000_000), reference: false },
];

const ROUNDS = Number(process.env.BENCH_TOKEN_ROUNDS ?? 5);
const time = (f: () => number) => {
	const t = performance.now();
	const n = f();
	return { ms: performance.now() - t, n };
};

ours.count('warm up 你好');
reference.encode('warm up 你好', [], []);
console.log('\n### Token counting: our byte-pair counter against js-tiktoken (o200k_base)\n');
console.log(machineLine(`median of ${ROUNDS}, interleaved`));
console.log('\n| text | ours | js-tiktoken encode() | speed-up | tokens (ours / js-tiktoken) |');
console.log('|---|---:|---:|---:|---:|');
for (const c of cases) {
	const a: number[] = [];
	const b: number[] = [];
	let na = 0;
	let nb = 0;
	for (let r = 0; r < ROUNDS; r++) {
		const x = time(() => ours.count(c.text));
		a.push(x.ms);
		na = x.n;
		if (c.reference) {
			const y = time(() => reference.encode(c.text, [], []).length);
			b.push(y.ms);
			nb = y.n;
		}
	}
	const ref = c.reference ? `${median(b).toFixed(1)} ms` : 'not run (quadratic)';
	const ratio = c.reference ? `${(median(b) / median(a)).toFixed(1)}×` : '—';
	const counts = c.reference
		? `${na.toLocaleString('en')} / ${nb.toLocaleString('en')}`
		: `${na.toLocaleString('en')} (estimated past 128 KiB)`;
	console.log(`| ${c.name} | ${median(a).toFixed(1)} ms | ${ref} | ${ratio} | ${counts} |`);
}
