/**
 * The offline demo model of `npm start`, and the one stand-in of the end-to-end tests and benchmarks:
 * a fake OpenAI-compatible Chat Completions server whose replies are a pure function of the request.
 * (It lives here, not in test/, because the product's `npm start` runs it when no LLM_BASE_URL is set.)
 *
 * This is the ONLY stand-in in the e2e tests: no real model can be reached from these machines, so n8n's
 * OpenAI Chat Model node (credential `url` = this server's `/v1`) talks to this instead. Everything else
 * (n8n, the Chat Trigger, our node, storage) is real.
 *
 *   GET  /v1/models             -> one model, "fake-model"
 *   POST /v1/chat/completions   -> non-streaming JSON, or SSE when `stream: true`
 *   POST /v1/embeddings         -> deterministic embeddings (see below)
 *
 * The reply is a pure function of the request, so tests can assert it exactly:
 *   FAKE-LLM reply to "<last user text>" (saw <n> messages: <role,role,...>)
 * A last user message containing `[[fake:status=NNN]]` makes the server answer that HTTP error instead
 * (use 4xx: the OpenAI client retries 5xx with backoff). `[[fake:delay=MS]]` (at most 60000) holds the
 * answer that long, so a test can act while a model call is in flight (e.g. kill the worker running it).
 *
 * Tool calls, so n8n's real AI Agent runs a real tool: when the request offers tools and the conversation
 * ends with a user message containing `[[fake:tool=NAME:ARGS]]` (NAME matched against the offered tools,
 * ignoring case and punctuation; ARGS a JSON object, or a string sent as {"input": ARGS}), the answer is
 * an assistant message calling that tool (several markers: parallel calls), ids `call_<seq>_<n>`.
 * Without markers, a request that offers LLM with Memory's `update_data` tool and ends with an
 * instruction such as "Change category to FRAGRANCE" gets an `update_data` call with a JSON Patch and a
 * summary, so Versioned Data works offline (tool-calls.ts lists the instructions it understands). Once
 * the tool results are in (the conversation ends with tool messages), the answer is text again:
 *   FAKE-LLM reply to "<last user text>" with tool results [<result>, …] (saw <n> messages: <roles>)
 *
 * Images the model returns: a last user message containing `[[fake:image]]` gets, beside the text, one
 * generated image, FAKE_IMAGE_PNG (a 1×1 PNG), as a data URL in the message's `images` list, the shape
 * OpenRouter returns generated images in and LangChain's ChatOpenAI reads (streamed: in the last delta).
 *
 * Embeddings (n8n's Embeddings OpenAI node, for the Memory Base): each input text becomes hashed word
 * features, L2-normalised (`fakeEmbedding`): lower-cased letter/digit words minus a few stop words, each
 * adding 1 at an index given by its FNV-1a hash (mixed), so texts that share words are similar (cosine) and
 * others are not. Dimensions: the request's `dimensions`, else 256. `encoding_format: "base64"` (what the
 * OpenAI SDK asks for by default) gets little-endian Float32 bytes in base64, otherwise arrays of numbers.
 * Failures for tests, both deterministic: an input containing `[[fake:embed-status=NNN]]` answers that
 * HTTP status (4xx: LangChain retries 5xx), and `failEmbeddings({ times, status, after })` makes the
 * next `times` embedding requests fail after `after` more have succeeded (a failure in the middle of a
 * sync that embeds in batches); `slowEmbeddings(ms)` holds every embedding answer (a sync still running).
 * A request for a summary of older turns (LLM with Memory's or the LLM Memory Store's) is answered with
 * an extractive summary (summaries.ts); `failSummaries({ times, status })` fails the next ones.
 * A request to learn facts (Remember Facts) is answered deterministically from what it was given
 * (facts.ts): "I live in Lyon" adds "Lives in Lyon" quoting those words, "we moved to Oslo" then
 * updates it to "Lives in Oslo"; `failFacts({ times, status, malformed })` fails the next ones (an HTTP
 * error, or with `malformed` an answer that is not the JSON asked for).
 *
 * Every request (any path) is kept in memory and, with `log`, appended to a JSONL file.
 *
 * Programmatic: `const llm = await startFakeOpenAi({ port: 5800, log: 'x.jsonl' })` -> { url, port, requests(), clear(), close() }
 * CLI:          node --import tsx demo/model-server.ts --port 5800 --log /tmp/fake-openai.jsonl
 */
import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { contentText, lastUserText, trailingToolResults } from './messages';
import type { ChatMessage } from './messages';
import { factsAnswer, isFactsRequest } from './facts';
import { extractiveSummary, isSummaryRequest } from './summaries';
import { requestedToolCalls } from './tool-calls';

export { contentText, lastUserText, trailingToolResults } from './messages';
export type { ChatMessage } from './messages';
export { requestedToolCalls, UPDATE_DATA_TOOL, updateDataArgs } from './tool-calls';
export { factsAnswer, isFactsRequest } from './facts';
export type { FakeToolCall } from './tool-calls';

export interface LoggedRequest {
	seq: number;
	time: string;
	method: string;
	path: string;
	authorization?: string;
	/** Parsed JSON body, or the raw text when it is not JSON, or null when empty. */
	body: any;
}

export interface FakeOpenAiOptions {
	/** 0 picks a free port. Default: E2E_FAKE_LLM_PORT or 5800. */
	port?: number;
	host?: string;
	/** JSONL file that gets one line per request. */
	log?: string;
	/** Override the reply text (default: describeReply). */
	reply?: (messages: ChatMessage[], body: any) => string;
}

export interface FakeOpenAi {
	/** Base URL to put in the openAiApi credential, e.g. http://127.0.0.1:5800/v1 */
	url: string;
	port: number;
	/** All requests so far (a copy). */
	requests(): LoggedRequest[];
	/** Only the POST /v1/chat/completions requests. */
	completions(): LoggedRequest[];
	/** Only the POST /v1/embeddings requests. */
	embeddings(): LoggedRequest[];
	/** Fail the next `times` embedding requests (with `status`, default 400) after `after` (default 0) succeed. */
	failEmbeddings(plan: { times: number; status?: number; after?: number }): void;
	/** Hold every embedding answer this many ms (0: answer at once), so a test can act while a sync runs. */
	slowEmbeddings(ms: number): void;
	/** Fail the next `times` requests for a summary of older turns (with `status`, default 400). */
	failSummaries(plan: { times: number; status?: number }): void;
	/**
	 * Fail the next `times` fact extractions: with `status` (default 400), or with `malformed` an
	 * answer of status 200 that is not the JSON asked for.
	 */
	failFacts(plan: { times: number; status?: number; malformed?: boolean }): void;
	/** Only the fact extraction requests (Remember Facts). */
	factRequests(): LoggedRequest[];
	clear(): void;
	close(): Promise<void>;
}

/** The image `[[fake:image]]` asks for: a 1×1 PNG, always the same bytes. */
export const FAKE_IMAGE_PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
	'base64',
);
const FAKE_IMAGES = [
	{
		type: 'image_url',
		image_url: { url: `data:image/png;base64,${FAKE_IMAGE_PNG.toString('base64')}` },
	},
];

/** What failFacts({ malformed: true }) answers a fact extraction with: not the JSON asked for. */
export const MALFORMED_FACTS_ANSWER = 'Sure! The user seems to live somewhere nice.';

/** The default deterministic reply. */
export function describeReply(messages: ChatMessage[]): string {
	const roles = messages.map((m) => m.role).join(',');
	const results = trailingToolResults(messages);
	const tools = results.length ? ` with tool results [${results.join(', ')}]` : '';
	return `FAKE-LLM reply to "${lastUserText(messages)}"${tools} (saw ${messages.length} messages: ${roles})`;
}

/** Dimensions of a fake embedding when the request does not ask for some. */
export const FAKE_EMBEDDING_DIMENSIONS = 256;

const STOP_WORDS = new Set(
	'a an and are as at be by do does for from has have i in is it its me my of on or that the this to was were what which who with you your'.split(
		' ',
	),
);

/** The words of a text the fake embedding counts. */
export function embeddingWords(text: string): string[] {
	return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !STOP_WORDS.has(w));
}

/** Hashed word features, L2-normalised: texts sharing words are similar, deterministically. */
export function fakeEmbedding(text: string, dimensions = FAKE_EMBEDDING_DIMENSIONS): number[] {
	const v = new Array<number>(dimensions).fill(0);
	const words = embeddingWords(text);
	for (const word of words.length ? words : ['\u2205']) {
		let h = 0x811c9dc5;
		for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
		// MurmurHash3's finaliser: FNV's low bits alone depend on the words' low bits only.
		h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
		h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
		v[((h ^ (h >>> 16)) >>> 0) % dimensions] += 1;
	}
	const norm = Math.sqrt(v.reduce((n, x) => n + x * x, 0));
	return v.map((x) => x / norm);
}

/** The answer to POST /v1/embeddings, or an error status with a message. */
function embeddingsAnswer(body: any): { status: number; value: unknown } {
	const input: unknown[] = Array.isArray(body?.input) ? body.input : [body?.input];
	const texts = input.map((t) => (typeof t === 'string' ? t : JSON.stringify(t)));
	const forced = texts.map((t) => /\[\[fake:embed-status=(\d{3})\]\]/.exec(t)).find(Boolean);
	if (forced)
		return {
			status: Number(forced[1]),
			value: { error: { message: `fake-openai: forced embeddings status ${forced[1]}` } },
		};
	const dims =
		Number.isSafeInteger(body?.dimensions) && body.dimensions > 0 ? body.dimensions : undefined;
	const base64 = body?.encoding_format === 'base64';
	const used = texts.reduce((n, t) => n + tokens(t), 0);
	return {
		status: 200,
		value: {
			object: 'list',
			model: typeof body?.model === 'string' ? body.model : 'fake-embedding',
			data: texts.map((t, index) => {
				const v = fakeEmbedding(t, dims);
				return {
					object: 'embedding',
					index,
					embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString('base64') : v,
				};
			}),
			usage: { prompt_tokens: used, total_tokens: used },
		},
	};
}

/** Rough, deterministic token count (4 characters per token). */
const tokens = (s: string) => Math.ceil(s.length / 4);

function readBody(req: IncomingMessage): Promise<string> {
	return new Promise((resolve, reject) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
		req.on('error', reject);
	});
}

function sendJson(res: ServerResponse, status: number, value: unknown) {
	res.writeHead(status, { 'content-type': 'application/json' });
	res.end(JSON.stringify(value));
}

export async function startFakeOpenAi(options: FakeOpenAiOptions = {}): Promise<FakeOpenAi> {
	const host = options.host ?? '127.0.0.1';
	const wanted = options.port ?? Number(process.env.E2E_FAKE_LLM_PORT ?? 5800);
	const makeReply = options.reply ?? describeReply;
	const log: LoggedRequest[] = [];
	let seq = 0;
	/** failEmbeddings(): how many embedding requests still succeed, then how many fail and how. */
	const embedFailures = { after: 0, times: 0, status: 400 };
	let embedDelayMs = 0;
	const summaryFailures = { times: 0, status: 400 };
	const factsFailures = { times: 0, status: 400, malformed: false };

	const server = createServer(async (req, res) => {
		try {
			const raw = await readBody(req);
			let body: any = null;
			if (raw) {
				try {
					body = JSON.parse(raw);
				} catch {
					body = raw;
				}
			}
			const path = (req.url ?? '/').split('?')[0];
			const entry: LoggedRequest = {
				seq: ++seq,
				time: new Date().toISOString(),
				method: req.method ?? '',
				path,
				authorization: req.headers.authorization,
				body,
			};
			log.push(entry);
			if (options.log) appendFileSync(options.log, JSON.stringify(entry) + '\n');

			if (req.method === 'GET' && path === '/v1/models') {
				return sendJson(res, 200, {
					object: 'list',
					data: [{ id: 'fake-model', object: 'model', created: 0, owned_by: 'e2e' }],
				});
			}
			if (req.method === 'POST' && path === '/v1/embeddings') {
				if (embedDelayMs > 0) await new Promise((r) => setTimeout(r, embedDelayMs));
				if (embedFailures.after > 0) embedFailures.after--;
				else if (embedFailures.times > 0) {
					embedFailures.times--;
					return sendJson(res, embedFailures.status, {
						error: {
							message: 'fake-openai: planned embeddings failure',
							type: 'invalid_request_error',
						},
					});
				}
				const answer = embeddingsAnswer(body);
				return sendJson(res, answer.status, answer.value);
			}
			if (req.method !== 'POST' || path !== '/v1/chat/completions') {
				return sendJson(res, 404, {
					error: {
						message: `fake-openai: no route ${req.method} ${path}`,
						type: 'invalid_request_error',
					},
				});
			}
			const messages: ChatMessage[] = Array.isArray(body?.messages) ? body.messages : [];
			const facts = isFactsRequest(messages);
			let malformedFacts = false;
			if (facts && factsFailures.times > 0) {
				factsFailures.times--;
				if (!factsFailures.malformed)
					return sendJson(res, factsFailures.status, {
						error: { message: 'fake-openai: planned facts failure', type: 'invalid_request_error' },
					});
				malformedFacts = true;
			}
			// A summary or facts request quotes old turns: their [[fake:…]] markers must not act on it.
			const summary = isSummaryRequest(messages) || facts;
			if (!facts && summary && summaryFailures.times > 0) {
				summaryFailures.times--;
				return sendJson(res, summaryFailures.status, {
					error: { message: 'fake-openai: planned summary failure', type: 'invalid_request_error' },
				});
			}
			const forced = summary ? null : /\[\[fake:status=(\d{3})\]\]/.exec(lastUserText(messages));
			if (forced) {
				return sendJson(res, Number(forced[1]), {
					error: {
						message: `fake-openai: forced status ${forced[1]}`,
						type: 'invalid_request_error',
					},
				});
			}

			const delay = summary ? null : /\[\[fake:delay=(\d{1,5})\]\]/.exec(lastUserText(messages));
			if (delay) await new Promise((r) => setTimeout(r, Math.min(Number(delay[1]), 60_000)));

			const toolCalls = summary ? [] : requestedToolCalls(messages, body, entry.seq);
			const text = facts
				? malformedFacts
					? MALFORMED_FACTS_ANSWER
					: factsAnswer(messages)
				: summary
					? extractiveSummary(messages)
					: toolCalls.length
						? ''
						: makeReply(messages, body);
			const images =
				!summary && !toolCalls.length && lastUserText(messages).includes('[[fake:image]]')
					? { images: FAKE_IMAGES }
					: {};
			const promptTokens = tokens(messages.map((m) => contentText(m.content)).join('\n'));
			const usage = {
				prompt_tokens: promptTokens,
				completion_tokens: tokens(text),
				total_tokens: promptTokens + tokens(text),
			};
			const base = {
				id: `chatcmpl-fake-${entry.seq}`,
				created: 1700000000,
				model: typeof body?.model === 'string' ? body.model : 'fake-model',
			};

			if (body?.stream === true) {
				res.writeHead(200, {
					'content-type': 'text/event-stream',
					'cache-control': 'no-cache',
					connection: 'keep-alive',
				});
				const chunk = (delta: object, finish: string | null, extra: object = {}) =>
					res.write(
						`data: ${JSON.stringify({
							...base,
							object: 'chat.completion.chunk',
							choices: [{ index: 0, delta, finish_reason: finish }],
							...extra,
						})}\n\n`,
					);
				chunk({ role: 'assistant', content: '' }, null);
				// Split into a few pieces so streaming consumers really have to concatenate.
				for (const piece of text.match(/.{1,16}/gs) ?? []) chunk({ content: piece }, null);
				toolCalls.forEach((c, index) =>
					chunk(
						{
							tool_calls: [
								{
									index,
									id: c.id,
									type: 'function',
									function: { name: c.name, arguments: c.arguments },
								},
							],
						},
						null,
					),
				);
				chunk(
					images,
					toolCalls.length ? 'tool_calls' : 'stop',
					body?.stream_options?.include_usage ? { usage } : {},
				);
				return res.end('data: [DONE]\n\n');
			}

			return sendJson(res, 200, {
				...base,
				object: 'chat.completion',
				choices: [
					toolCalls.length
						? {
								index: 0,
								message: {
									role: 'assistant',
									content: null,
									tool_calls: toolCalls.map((c) => ({
										id: c.id,
										type: 'function',
										function: { name: c.name, arguments: c.arguments },
									})),
								},
								logprobs: null,
								finish_reason: 'tool_calls',
							}
						: {
								index: 0,
								message: { role: 'assistant', content: text, ...images },
								logprobs: null,
								finish_reason: 'stop',
							},
				],
				usage,
			});
		} catch (e) {
			return sendJson(res, 500, { error: { message: `fake-openai crashed: ${String(e)}` } });
		}
	});

	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(wanted, host, () => resolve());
	});
	const port = (server.address() as AddressInfo).port;

	return {
		url: `http://${host}:${port}/v1`,
		port,
		requests: () => log.map((r) => ({ ...r })),
		completions: () => log.filter((r) => r.method === 'POST' && r.path === '/v1/chat/completions'),
		embeddings: () => log.filter((r) => r.method === 'POST' && r.path === '/v1/embeddings'),
		failEmbeddings: (plan) => {
			embedFailures.times = plan.times;
			embedFailures.status = plan.status ?? 400;
			embedFailures.after = plan.after ?? 0;
		},
		slowEmbeddings: (ms) => {
			embedDelayMs = Math.max(0, Math.min(ms, 60_000));
		},
		failSummaries: (plan) => {
			summaryFailures.times = plan.times;
			summaryFailures.status = plan.status ?? 400;
		},
		failFacts: (plan) => {
			factsFailures.times = plan.times;
			factsFailures.status = plan.status ?? 400;
			factsFailures.malformed = plan.malformed === true;
		},
		factRequests: () =>
			log.filter(
				(r) =>
					r.method === 'POST' &&
					r.path === '/v1/chat/completions' &&
					isFactsRequest(Array.isArray(r.body?.messages) ? r.body.messages : []),
			),
		clear: () => {
			log.length = 0;
		},
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}

// CLI entry point: node --import tsx demo/model-server.ts --port 5800 --log file.jsonl
if (require.main === module) {
	const arg = (name: string) => {
		const i = process.argv.indexOf(`--${name}`);
		return i > 0 ? process.argv[i + 1] : undefined;
	};
	startFakeOpenAi({ port: arg('port') ? Number(arg('port')) : undefined, log: arg('log') }).then(
		(s) => {
			console.log(`fake-openai listening on ${s.url}`);
			const stop = () => void s.close().then(() => process.exit(0));
			process.on('SIGTERM', stop);
			process.on('SIGINT', stop);
		},
		(e) => {
			console.error(e);
			process.exit(1);
		},
	);
}
