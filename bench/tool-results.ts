/**
 * Tool Results in Memory benchmark (not a test): prints a markdown table.
 *
 * 20 tool turns, as n8n's AI Agent 3 hands them to memory (chatHistory.addMessages: the user's message,
 * an AI message calling `http_request`, a 50,000-character JSON result, the final answer), stored by the
 * LLM Memory Store's engine path (ChatHistory over a Node-mode memory on local disk) in each mode of
 * Tool Results in Memory; then the history the store hands the agent for turn 21, with its window and
 * budget. Baseline: n8n's Simple Memory (Buffer Window) on the same messages. It stores every message
 * whole and hands the agent its last 2 × Context Window Length messages, which the agent cleans of
 * leading tool messages and orphaned calls (@n8n/n8n-nodes-langchain: BufferWindowMemory with
 * k = Context Window Length; cleanupOrphanedMessages in utils/agent-execution/memoryManagement.js, the
 * same for these turns in 2.8.4 and 2.40.7). Simple Memory has no token budget (the agent's Max Tokens
 * From Memory option is off by default).
 *
 * Tokens: o200k_base (TiktokenCounter), counted the same way for every row: each message's content plus
 * its tool calls as JSON. Per-message formatting overhead of a provider is not included.
 *
 *   node --import tsx bench/tool-results.ts
 * Knobs (env): TOOL_BENCH_TURNS (20), TOOL_BENCH_RESULT_CHARS (50000).
 */
import { ChatHistory, LocalDiskStorage, NodeMemory, TiktokenCounter } from '../src/internal';
import type { ChatMessage, MemoryOptions, PromptMessage } from '../src/internal';
import { tempDir } from '../test/support/storages';
import { machineLine } from './stats';

const TURNS = Number(process.env.TOOL_BENCH_TURNS ?? 20);
const RESULT_CHARS = Number(process.env.TOOL_BENCH_RESULT_CHARS ?? 50_000);
const counter = new TiktokenCounter('o200k_base');
const n = (x: number) => x.toLocaleString('en-US');

/** A message as a model gets it: role, content, tool calls, tool_call_id. */
type Sent = Pick<PromptMessage, 'role' | 'content' | 'tool_calls' | 'tool_call_id'>;

/** A deterministic JSON result of `chars` characters: the orders an HTTP or database tool returns. */
function ordersJson(chars: number, seed: number): string {
	let x = seed * 7919 + 1;
	const next = (m: number) => (x = (x * 1103515245 + 12345) % 2 ** 31) % m;
	const statuses = ['shipped', 'pending', 'delivered', 'cancelled', 'returned'];
	let out = '[';
	for (let i = 0; out.length < chars; i++) {
		const c = next(5000);
		const row = {
			order_id: `ORD-${String(seed * 10_000 + i).padStart(7, '0')}`,
			customer: `Customer ${c}`,
			email: `customer${c}@example.com`,
			total: next(100_000) / 100,
			currency: ['EUR', 'USD', 'GBP'][next(3)],
			status: statuses[next(statuses.length)],
			created_at: `2026-${String(1 + next(12)).padStart(2, '0')}-${String(1 + next(28)).padStart(2, '0')}T${String(next(24)).padStart(2, '0')}:00:00Z`,
			items: 1 + next(9),
		};
		out += `${JSON.stringify(row)},`;
	}
	return `${out.slice(0, chars - 1)}]`;
}

/** Turn `t` as the agent saves it (n8n's buildMessagesFromSteps writes the call's text this way). */
function agentTurn(t: number): ChatMessage[] {
	const args = { url: `https://shop.example.com/api/orders?customer=${t}` };
	const id = `call_${t}`;
	return [
		{
			role: 'user',
			content: `Which orders of customer ${t} are still pending, and what do they total?`,
		},
		{
			role: 'assistant',
			content: `Calling http_request with input: ${JSON.stringify(args)}`,
			toolCalls: [{ id, name: 'http_request', args }],
		},
		{ role: 'tool', content: ordersJson(RESULT_CHARS, t), toolCallId: id, name: 'http_request' },
		{
			role: 'assistant',
			content: `Customer ${t} has ${3 + (t % 4)} pending orders, totalling ${n(1000 + t * 37.5)} EUR. The oldest is from March; the others were placed this month.`,
		},
	];
}

const messagesOf = (turns: number) =>
	Array.from({ length: turns }, (_, i) => agentTurn(i + 1)).flat();

function sentOf(m: ChatMessage): Sent {
	if (m.role === 'tool') return { role: 'tool', content: m.content, tool_call_id: m.toolCallId };
	if (m.role === 'assistant' && m.toolCalls?.length)
		return { role: 'assistant', content: m.content, tool_calls: [...m.toolCalls] };
	return { role: m.role === 'system' ? 'system' : m.role, content: m.content };
}

function tokensOf(messages: readonly Sent[]): number {
	let total = 0;
	for (const m of messages) {
		total += counter.count(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
		if (m.tool_calls?.length) total += counter.count(JSON.stringify(m.tool_calls));
	}
	return total;
}

/** n8n's cleanupOrphanedMessages: no leading tool result or call without its result, no trailing ones. */
function cleanupOrphaned(history: Sent[]): Sent[] {
	const out = [...history];
	const calls = (m?: Sent) => (m?.tool_calls?.length ?? 0) > 0;
	const leadingOrphan = () => out[0]?.role === 'tool' || (calls(out[0]) && out[1]?.role !== 'tool');
	while (leadingOrphan()) out.shift();
	const trailingOrphan = () => {
		const last = out.at(-1);
		if (calls(last)) return true;
		if (last?.role !== 'tool') return false;
		let i = out.length - 2;
		while (i >= 0 && out[i].role === 'tool') i--;
		return !calls(out[i]);
	};
	while (trailingOrphan()) out.pop();
	return out;
}

interface Row {
	memory: string;
	setting: string;
	stored: number;
	sent: readonly Sent[];
}

/** n8n's Simple Memory with Context Window Length k, on the same messages. */
function simpleMemory(all: readonly ChatMessage[], k: number): Row {
	const stored = all.map(sentOf);
	return {
		memory: 'n8n Simple Memory',
		setting: `Context Window Length ${k}${k === 5 ? ' (default)' : ''}`,
		stored: tokensOf(stored),
		sent: cleanupOrphaned(stored.slice(-k * 2)),
	};
}

/** The LLM Memory Store with these options: the turns stored through ChatHistory, the history of turn 21. */
async function store(
	options: Pick<MemoryOptions, 'toolResults' | 'maxToolOutputChars'>,
	limits: { messageLimit: number; maxTokenLimit: number },
	setting: string,
): Promise<Row> {
	const storage = new LocalDiskStorage({ root: tempDir('tool-bench') });
	const memory = new NodeMemory('wf', 'bench', 'store', {
		storage,
		model: 'gpt-4o-mini',
		...options,
	});
	const history = new ChatHistory(memory);
	for (let t = 1; t <= TURNS; t++) await history.addMessages(agentTurn(t));
	const stored = await memory.messages();
	const sent = (await memory.getHistoryPromptMessages(limits)).messages;
	return { memory: 'LLM Memory Store', setting, stored: tokensOf(stored), sent };
}

const turnsIn = (sent: readonly Sent[]) => sent.filter((m) => m.role === 'user').length;

function resultsIn(sent: readonly Sent[]): string {
	const results = sent.filter((m) => m.role === 'tool').map((m) => String(m.content).length);
	if (!results.length) return '0';
	const sizes = [...new Set(results)].map(n).join(' / ');
	return `${results.length} × ${sizes} characters`;
}

async function main(): Promise<void> {
	const all = messagesOf(TURNS);
	const defaults = { messageLimit: 10, maxTokenLimit: 2000 };
	const unbounded = { messageLimit: 10, maxTokenLimit: 1e9 };
	const rows: Row[] = [
		simpleMemory(all, 5),
		simpleMemory(all, 10),
		await store({ toolResults: 'keep' }, defaults, 'Keep (defaults: 10 turns, 2,000 tokens)'),
		await store({ toolResults: 'keep' }, unbounded, 'Keep, 10 turns, no token budget'),
		await store(
			{ toolResults: 'keep', maxToolOutputChars: 1000 },
			defaults,
			'Keep, Max Characters per Tool Result 1,000 (defaults)',
		),
		await store({ toolResults: 'note' }, defaults, 'Keep a Short Note (defaults)'),
		await store({ toolResults: 'leaveOut' }, defaults, 'Leave Out Tool Turns (defaults)'),
	];
	const result = counter.count(ordersJson(RESULT_CHARS, 1));
	console.log(
		`### Tool results in memory: ${TURNS} tool turns, each with a ${n(RESULT_CHARS)}-character JSON result (${n(result)} tokens)\n`,
	);
	console.log(machineLine('o200k_base'));
	console.log('');
	console.log(
		`| memory | setting | stored after ${TURNS} turns (tokens) | history sent on turn ${TURNS + 1} (tokens) | turns in it | tool results in it |`,
	);
	console.log('|---|---|---:|---:|---:|---|');
	for (const r of rows) {
		const first =
			r.sent[0]?.role === 'assistant' && !r.sent[0].tool_calls
				? ' (+ an answer without its question)'
				: '';
		console.log(
			`| ${r.memory} | ${r.setting} | ${n(r.stored)} | **${n(tokensOf(r.sent))}** | ${turnsIn(r.sent)}${first} | ${resultsIn(r.sent)} |`,
		);
	}
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
