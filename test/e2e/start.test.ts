/**
 * `npm start` on a real n8n (N8N_VERSION): its ports and its signals. Each run gets its own user folder
 * (LLM_MEMORY_HOME) and ports nothing else uses:
 *   - N8N_PORT=x DEMO_MODEL_PORT=x+1 works (n8n's task broker, which n8n would put on x+1, gets a free port
 *     of its own), the editor answers and a chat reaches the demo model; SIGTERM to the npm process then
 *     stops n8n, its task runner and the demo model;
 *   - again on the same user folder (a restart), with only N8N_PORT given: SIGINT does the same;
 *   - a port in use, or one port given for two servers, is reported before anything starts, naming the
 *     port, the variable, the server that wanted it and the process holding it.
 * A process "of a run" is one below the npm process, one in n8n's session (n8n, its task runner), or the
 * demo model on the run's port; after the signal none of them may be left.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { sendChat } from '../support/chat';
import { ensureN8n, REPO_ROOT } from '../support/n8n-harness';

const CHAT_WEBHOOK = JSON.parse(
	readFileSync(path.join(REPO_ROOT, 'examples/chat-with-memory.json'), 'utf8'),
).nodes.find((n: { webhookId?: string }) => n.webhookId).webhookId as string;

interface Proc {
	pid: number;
	ppid: number;
	sid: number;
	stat: string;
	args: string;
}

/** Every process on the machine, as ps sees it. */
function processTable(): Proc[] {
	const out = execFileSync('ps', ['-eo', 'pid=,ppid=,sid=,stat=,args='], { encoding: 'utf8' });
	return out.split('\n').flatMap((line) => {
		const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
		return m ? [{ pid: +m[1], ppid: +m[2], sid: +m[3], stat: m[4], args: m[5] }] : [];
	});
}

/** Whether a process of an earlier table still runs (same pid, same command, not a zombie). */
const survivors = (procs: Proc[]) => {
	const now = processTable();
	return procs.filter((p) =>
		now.some((q) => q.pid === p.pid && q.args === p.args && !q.stat.startsWith('Z')),
	);
};

/** True when nothing listens on 127.0.0.1:port. */
function portFree(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const s = createServer();
		s.once('error', () => resolve(false));
		s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
	});
}

/** The kernel's ephemeral ports (what listen(0) and outgoing connections are given). */
function ephemeralFloor(): number {
	try {
		const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
			.trim()
			.split(/\s+/);
		return Number(low) || 32768;
	} catch {
		return 32768;
	}
}

/**
 * A port x with x and x + 1 free, at random below the kernel's ephemeral ports: npm start builds for
 * half a minute before it binds them, and a port the kernel handed out once (listen(0)) may be handed
 * to another process of the suites meanwhile (it was: the task broker's port, taken before n8n started).
 */
async function freePortPair(): Promise<number> {
	const top = Math.min(ephemeralFloor(), 32768) - 2;
	for (;;) {
		const port = 20000 + Math.floor(Math.random() * (top - 20000));
		if ((await portFree(port)) && (await portFree(port + 1))) return port;
	}
}

interface Run {
	child: ChildProcess;
	home: string;
	output(): string;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const homes: string[] = [];
const runs: Run[] = [];
const newHome = () => {
	homes.push(mkdtempSync(path.join(tmpdir(), 'npm-start-')));
	return homes[homes.length - 1];
};

/** Starts `command` (npm start, or bash scripts/start.sh) on a user folder (default: a fresh one), offline model. */
function launch(command: string[], env: Record<string, string>, home = newHome()): Run {
	const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env, LLM_MEMORY_HOME: home };
	delete childEnv.LLM_BASE_URL;
	const child = spawn(command[0], command.slice(1), {
		cwd: REPO_ROOT,
		env: childEnv,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let out = '';
	child.stdout!.on('data', (d) => (out += d));
	child.stderr!.on('data', (d) => (out += d));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.once('exit', (code, signal) => resolve({ code, signal })),
	);
	const run = { child, home, output: () => out, exited };
	runs.push(run);
	return run;
}

/** Resolves once the run prints its chat URL; rejects with its output if it exits or times out first. */
async function untilReady(run: Run, timeoutMs = 400_000): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	let exited = false;
	void run.exited.then(() => (exited = true));
	while (!run.output().includes('Chat URL:')) {
		if (exited || Date.now() > deadline)
			throw new Error(`npm start did not get ready:\n${run.output().slice(-4000)}`);
		await new Promise((r) => setTimeout(r, 250));
	}
}

/** The ports the run printed: "Ports: n8n X, n8n task broker Y, demo model Z". */
function printedPorts(run: Run) {
	const m = /^Ports: n8n (\d+), n8n task broker (\d+), demo model (\d+)$/m.exec(run.output());
	assert.ok(m, run.output());
	return { n8n: +m[1], broker: +m[2], demo: +m[3] };
}

/** The processes of a running run: below its npm process, in n8n's session, or the demo model. */
function processesOf(run: Run, demoPort: number): Proc[] {
	const table = processTable();
	const sid = Number(readFileSync(path.join(run.home, 'n8n.pid'), 'utf8')); // n8n's session leader
	const mine = new Set<number>([run.child.pid!]);
	for (let size = 0; size !== mine.size;) {
		size = mine.size;
		for (const p of table) if (mine.has(p.ppid)) mine.add(p.pid);
	}
	return table.filter(
		(p) =>
			mine.has(p.pid) ||
			p.sid === sid ||
			p.args.includes(`demo/model-server.ts --port ${demoPort}`),
	);
}

/** A started run, checked: the editor answers and a chat turn reaches the demo model. */
async function checkServing(run: Run) {
	await untilReady(run);
	const ports = printedPorts(run);
	const editor = await fetch(`http://127.0.0.1:${ports.n8n}/`);
	assert.equal(editor.status, 200, 'the editor answers');
	const chatUrl = `http://127.0.0.1:${ports.n8n}/webhook/${CHAT_WEBHOOK}/chat`;
	const reply = await sendChat(chatUrl, { sessionId: `start-${ports.n8n}`, chatInput: 'Hello' });
	assert.equal(reply.status, 200, reply.body);
	assert.match(String(reply.shown), /^FAKE-LLM reply to "Hello" \(saw 2 messages/);
	const procs = processesOf(run, ports.demo);
	const has = (re: RegExp) => procs.some((p) => re.test(p.args));
	assert.ok(has(/n8n start$/), 'n8n runs');
	assert.ok(has(/task-runner/), "n8n's task runner runs");
	assert.ok(has(/demo\/model-server\.ts/), 'the demo model runs');
	return { ports, procs };
}

/**
 * The demo survives a reload: two turns, then the chat page's Load Previous Session returns both (from
 * the LLM Memory Store on the Chat Trigger), and a third turn sees every message. The model is the
 * offline demo model, whose reply says how many messages it was sent.
 */
async function checkReload(port: number): Promise<void> {
	const chatUrl = `http://127.0.0.1:${port}/webhook/${CHAT_WEBHOOK}/chat`;
	const sessionId = `reload-${port}`;
	const turn = async (chatInput: string, saw: number) => {
		const reply = await sendChat(chatUrl, { sessionId, chatInput });
		assert.equal(reply.status, 200, reply.body);
		assert.match(String(reply.shown), new RegExp(`\\(saw ${saw} messages`), reply.body);
	};
	await turn('My name is Ada', 2);
	await turn('I live in Oslo', 4);
	const loaded = await sendChat(chatUrl, { sessionId, action: 'loadPreviousSession' });
	assert.equal(loaded.status, 200, loaded.body);
	const texts = (loaded.json?.data ?? []).map(
		(m: { kwargs?: { content?: unknown } }) => m.kwargs?.content,
	);
	assert.equal(texts.length, 4, loaded.body);
	assert.deepEqual([texts[0], texts[2]], ['My name is Ada', 'I live in Oslo']);
	await turn('What do you know about me?', 6);
}

/** Signals the npm process and checks that it exits and that nothing of the run is left. */
async function stopAndCheck(run: Run, signal: NodeJS.Signals, procs: Proc[], ports: number[]) {
	run.child.kill(signal);
	// The timer is cleared once npm exits: a pending one kept this test process alive a minute longer.
	let timer: NodeJS.Timeout | undefined;
	const { code } = await Promise.race([
		run.exited,
		new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`npm start ignored ${signal}`)), 60_000);
		}),
	]).finally(() => clearTimeout(timer));
	assert.equal(code, 0, run.output().slice(-2000));
	const deadline = Date.now() + 5_000;
	while (survivors(procs).length && Date.now() < deadline)
		await new Promise((r) => setTimeout(r, 200));
	assert.deepEqual(
		survivors(procs).map((p) => `${p.pid} ${p.args}`),
		[],
		`processes of the run left after ${signal}`,
	);
	for (const port of ports) assert.ok(await portFree(port), `port ${port} is free again`);
}

/**
 * npm start picks the demo model's port from 5801 up when DEMO_MODEL_PORT is not given, but binds it
 * only after building and installing the package, seconds later. scripts/test.sh runs the n8n versions
 * side by side, so two runs of this file could pick the same port in that moment: a run that lets npm
 * start pick it takes its turn, through flock(1) on a file in the temp dir (held by a child process
 * until release() or until this process exits), and releases it once its ports are bound. (The other
 * ports are given, or picked from a port the kernel chose for this run.)
 */
function takeTurn(): Promise<() => void> {
	const file = path.join(tmpdir(), 'n8n-nodes-llm-memory-npm-start.lock');
	const child = spawn('flock', [file, 'sh', '-c', 'echo held; exec cat >/dev/null'], {
		stdio: ['pipe', 'pipe', 'inherit'],
	});
	return new Promise((resolve, reject) => {
		child.once('error', reject);
		child.once('exit', (code) => reject(new Error(`flock ${file} exited (${code})`)));
		child.stdout!.once('data', () => resolve(() => child.stdin!.end()));
	});
}

describe('npm start: ports and signals', () => {
	let release: (() => void) | undefined;
	before(async () => {
		await ensureN8n();
	});

	after(() => {
		for (const run of runs) if (run.child.exitCode === null) run.child.kill('SIGKILL');
		for (const home of homes) {
			const pidFile = path.join(home, 'n8n.pid');
			if (existsSync(pidFile)) {
				try {
					process.kill(-Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
				} catch {
					/* already gone */
				}
			}
			if (!process.env.E2E_KEEP) rmSync(home, { recursive: true, force: true });
		}
		release?.();
	});

	it('N8N_PORT=x DEMO_MODEL_PORT=x+1 works; SIGTERM to npm stops n8n, its task runner and the demo model', async () => {
		const x = await freePortPair();
		const run = launch(['npm', 'start'], { N8N_PORT: String(x), DEMO_MODEL_PORT: String(x + 1) });
		const { ports, procs } = await checkServing(run);
		await checkReload(ports.n8n);
		assert.match(run.output(), /Reload the chat page: the conversation comes back/);
		assert.deepEqual([ports.n8n, ports.demo], [x, x + 1]);
		assert.ok(
			![x, x + 1].includes(ports.broker),
			`the broker got a port of its own: ${ports.broker}`,
		);
		await stopAndCheck(run, 'SIGTERM', procs, [ports.n8n, ports.broker, ports.demo]);
	});

	it('again on the same folder: ports not given are chosen free; SIGINT to npm stops everything too', async () => {
		release = await takeTurn();
		const x = await freePortPair();
		const run = launch(['npm', 'start'], { N8N_PORT: String(x) }, runs[0]?.home);
		const { ports, procs } = await checkServing(run);
		release(); // every port of the run is bound: another run's npm start now sees them taken
		release = undefined;
		assert.equal(new Set([ports.n8n, ports.broker, ports.demo]).size, 3, run.output());
		await stopAndCheck(run, 'SIGINT', procs, [ports.n8n, ports.broker, ports.demo]);
	});

	it('a port in use, or given twice, is reported before anything starts', async () => {
		const x = await freePortPair();
		const holder: Server = createServer();
		await new Promise<void>((r) => holder.listen(x + 1, '127.0.0.1', () => r()));
		try {
			const busy = launch(['bash', 'scripts/start.sh'], {
				N8N_PORT: String(x),
				DEMO_MODEL_PORT: String(x + 1),
			});
			assert.equal((await busy.exited).code, 1);
			assert.match(
				busy.output(),
				new RegExp(
					`npm start: port ${x + 1} \\(DEMO_MODEL_PORT\\), wanted by the demo model server, is already in use by pid ${process.pid} \\(`,
				),
			);
			assert.ok(!existsSync(path.join(busy.home, 'setup.log')), 'nothing was set up');
		} finally {
			await new Promise((r) => holder.close(r));
		}
		const twice = launch(['bash', 'scripts/start.sh'], {
			N8N_PORT: String(x),
			N8N_RUNNERS_BROKER_PORT: String(x),
		});
		assert.equal((await twice.exited).code, 1);
		assert.match(
			twice.output(),
			new RegExp(
				`npm start: port ${x} is wanted twice: by n8n \\(editor and webhooks\\) \\(N8N_PORT\\) and by n8n's task broker \\(N8N_RUNNERS_BROKER_PORT\\)`,
			),
		);
	});
});
