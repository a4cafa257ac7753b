/**
 * Start and stop a real, headless n8n from node:test suites. The version is N8N_VERSION (default: the
 * newest supported, see scripts/n8n.sh); each version runs on its own Node (2.8.x on the system Node 20,
 * 2.40.x on Node 24), which scripts/n8n.sh installs and selects.
 *
 * All the work is done by scripts/n8n.sh (the one place where n8n's environment is defined);
 * this module sequences it: install-or-reuse n8n -> fresh user folder -> install a package tarball ->
 * import credentials + workflows -> publish -> start -> wait until every production webhook answers.
 *
 *   const n8n = await startN8n({ credentials: [cred], workflows: [wf], tarball });
 *   after(() => n8n?.stop());
 *   await sendChat(n8n.chatUrl(webhookId), { sessionId: 's1', chatInput: 'hi' });
 *
 * No owner, no API key: everything goes through the CLI before start and through webhook URLs after.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
	appendFileSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../..');
const SCRIPT = path.join(REPO_ROOT, 'scripts/n8n.sh');

/** Node type names used by our workflows, for the harness's own URL discovery. */
const CHAT_TRIGGER = '@n8n/n8n-nodes-langchain.chatTrigger';
const WEBHOOK = 'n8n-nodes-base.webhook';

/** Runs `bash scripts/n8n.sh ARGS...`; resolves to trimmed stdout, rejects with stderr in the message. */
export function runScript(
	args: string[],
	opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<string> {
	return new Promise((resolve, reject) => {
		execFile(
			'bash',
			[SCRIPT, ...args],
			{
				env: { ...process.env, ...opts.env },
				timeout: opts.timeoutMs ?? 600_000,
				killSignal: 'SIGKILL',
				maxBuffer: 64 * 1024 * 1024,
			},
			(err, stdout, stderr) => {
				if (err) {
					const tail = String(stderr).trim().split('\n').slice(-40).join('\n');
					reject(new Error(`n8n.sh ${args[0]} failed (${err.message.split('\n')[0]}):\n${tail}`));
				} else resolve(String(stdout).trim());
			},
		);
	});
}

/** The n8n version the harness runs: N8N_VERSION, or scripts/n8n.sh's default (the newest supported). */
export const N8N_VERSION: string = execFileSync('bash', [SCRIPT, 'version'], {
	encoding: 'utf8',
}).trim();

/** [major, minor, patch] of N8N_VERSION, for the few places where a test must differ per version. */
export const N8N_VERSION_PARTS = N8N_VERSION.split('.').map(Number) as [number, number, number];

/** True when N8N_VERSION is at least `version` ("2.40", "2.8.4"). */
export function n8nAtLeast(version: string): boolean {
	const want = version.split('.').map(Number);
	for (let i = 0; i < 3; i++) {
		const have = N8N_VERSION_PARTS[i] ?? 0;
		if (have !== (want[i] ?? 0)) return have > (want[i] ?? 0);
	}
	return true;
}

/** Whether N8N_VERSION (and the Node it runs on) is already installed, i.e. ensureN8n() will be quick. */
export function isN8nInstalled(): boolean {
	try {
		execFileSync('bash', [SCRIPT, 'info'], { stdio: 'ignore' });
		return true;
	} catch {
		return false;
	}
}

/** Installs N8N_VERSION (and its Node) unless already installed (~5-6 min cold). Returns the install dir. */
export async function ensureN8n(): Promise<string> {
	return runScript(['install'], { timeoutMs: 40 * 60_000 });
}

// Last-resort cleanup: if the test process exits or is signalled without stop(), kill every n8n we
// started (by its recorded process group). n8n's own `timeout` wrapper bounds it even after a SIGKILL.
const running = new Set<number>();
const tempFolders = new Set<string>();
function killAll() {
	for (const pid of running) {
		try {
			process.kill(-pid, 'SIGKILL');
		} catch {
			/* already gone */
		}
	}
	running.clear();
	if (!process.env.E2E_KEEP)
		for (const dir of tempFolders) rmSync(dir, { recursive: true, force: true });
	tempFolders.clear();
}
process.once('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
	process.once(sig, () => {
		killAll();
		process.kill(process.pid, sig); // listener was once(): this re-raise terminates as usual
	});
}

/**
 * With E2E_TIMINGS=FILE, appends one JSON line per n8n started or joined: the test file, the n8n
 * version and the milliseconds of each phase (how the suites' time was measured; see CONTRIBUTING).
 */
export function recordTiming(entry: Record<string, unknown>): void {
	if (!process.env.E2E_TIMINGS) return;
	const file = path.basename(process.argv[1] ?? '');
	const line = { file, version: N8N_VERSION, ...entry, at: new Date().toISOString() };
	appendFileSync(process.env.E2E_TIMINGS, `${JSON.stringify(line)}\n`);
}

let packed: Promise<string> | undefined;

/**
 * The package's `npm pack` tarball; returns its path. scripts/test.sh builds and packs once per run and
 * passes the tarball on in E2E_TARBALL, which every test file uses. Without it (a file run on its own)
 * this runs `npm run build` + `npm pack` once per process, into destDir or a temp dir removed at exit.
 */
export async function packPackage(destDir?: string): Promise<string> {
	if (destDir) return runScript(['pack', destDir], { timeoutMs: 10 * 60_000 });
	const shared = process.env.E2E_TARBALL;
	if (shared && existsSync(shared)) return shared;
	if (!packed) {
		const dir = mkdtempSync(path.join(tmpdir(), 'llm-memory-pack-'));
		tempFolders.add(dir);
		packed = runScript(['pack', dir], { timeoutMs: 10 * 60_000 });
	}
	return packed;
}

/**
 * Installs the tarball into the user folder's .n8n/nodes. npm installs a tarball once per Node version,
 * into a cache beside it (or N8N_NODES_CACHE), and each user folder gets a copy of that install.
 */
function installPackage(userFolder: string, tarball: string, env: Record<string, string>) {
	const cache = process.env.N8N_NODES_CACHE ?? path.join(path.dirname(tarball), 'installs');
	return runScript(['prepare', userFolder, tarball], { env: { ...env, N8N_NODES_CACHE: cache } });
}

type Json = Record<string, any>;

export interface StartN8nOptions {
	/** Workflow JSON objects or paths to JSON files (object or array). Each needs a stable `id`. */
	workflows?: Array<Json | string>;
	/** Credential objects `{id, name, type, data}` (plaintext data) or paths to JSON files. */
	credentials?: Array<Json | string>;
	/** Workflow ids to publish (activate). Default: every workflow given. */
	publish?: string[];
	/** Community package tarball (from packPackage) to install into .n8n/nodes. */
	tarball?: string;
	/** HTTP port. Default E2E_N8N_PORT or 5690. The task broker uses port+1 unless brokerPort is set. */
	port?: number;
	brokerPort?: number;
	/** Reuse a folder instead of a fresh temp dir (it is not deleted by stop()). */
	userFolder?: string;
	/** URLs to wait for. Default: the chat/webhook URLs of every published Chat Trigger / Webhook node. */
	waitFor?: string[];
	/** Extra environment for n8n (e.g. N8N_LOG_LEVEL=debug). */
	env?: Record<string, string>;
	/**
	 * Leave n8n running when this process exits (the shared n8n of test/support/shared-n8n.ts, which
	 * scripts/test.sh stops). Default: n8n is killed when the process that started it exits.
	 */
	detach?: boolean;
}

export interface N8nInstance {
	/** The n8n version running (N8N_VERSION). */
	version: string;
	baseUrl: string;
	port: number;
	userFolder: string;
	/**
	 * Where the package's nodes keep memory on Local Disk when their Folder is empty: the user folder's
	 * .n8n/llm-memory, or on a shared n8n (test/support/shared-n8n.ts) the test file's own folder.
	 */
	memoryRoot: string;
	logFile: string;
	pid: number;
	/** Milliseconds from `n8n start` until every awaited webhook answered (on a shared n8n: joining it). */
	bootMs: number;
	/** The owner's session cookie when n8n already has its owner (a shared n8n); else undefined. */
	ownerCookie?: string;
	/** Public Chat Trigger URL for a webhookId. */
	chatUrl(webhookId: string): string;
	/** The n8n log so far. */
	log(): string;
	/** n8n's own event log (.n8n/n8nEventLog.log): workflow started/failed/success, with error messages. */
	events(): Json[];
	/** Run any n8n CLI command against this user folder (separate broker port, safe while running). */
	cli(...args: string[]): Promise<string>;
	/** Stop n8n (SIGTERM, then SIGKILL of its process group). Idempotent. Deletes a temp user folder unless E2E_KEEP=1. */
	stop(): Promise<void>;
}

export function loadJson(item: Json | string): Json[] {
	const value = typeof item === 'string' ? JSON.parse(readFileSync(item, 'utf8')) : item;
	return Array.isArray(value) ? value : [value];
}

/** Production URLs that exist once the given workflows are active. */
export function webhookUrls(baseUrl: string, workflows: Json[]): string[] {
	const urls: string[] = [];
	for (const wf of workflows) {
		for (const node of wf.nodes ?? []) {
			if (node.disabled) continue;
			if (node.type === CHAT_TRIGGER && node.webhookId)
				urls.push(`${baseUrl}/webhook/${node.webhookId}/chat`);
			if (node.type === WEBHOOK && node.parameters?.path)
				urls.push(`${baseUrl}/webhook/${node.parameters.path}`);
		}
	}
	return urls;
}

/**
 * Node types used by the workflows that this n8n did not load. Read from the type list n8n itself
 * writes for its editor at boot (`.cache/n8n/public/types/nodes.json` in the user folder), so a
 * workflow n8n cannot activate is caught even when its webhook URL happens to answer: a deterministic
 * check behind wait-webhook's log shortcut, whose timing differs between machines.
 */
export async function unknownNodeTypes(userFolder: string, workflows: Json[]): Promise<string[]> {
	const file = path.join(userFolder, '.cache/n8n/public/types/nodes.json');
	let loaded: Set<string> | undefined;
	for (let attempt = 0; !loaded; attempt++) {
		try {
			const types = JSON.parse(readFileSync(file, 'utf8')) as Array<{ name: string }>;
			loaded = new Set(types.map((t) => t.name));
		} catch (e) {
			// n8n writes the file in the background after it loads its nodes: seconds on a busy machine.
			if (attempt >= 600) throw new Error(`n8n wrote no readable node type list at ${file}: ${e}`);
			await new Promise((r) => setTimeout(r, 100));
		}
	}
	const used = workflows.flatMap((wf) =>
		(wf.nodes ?? []).map((n: Json) => String(n.type)),
	) as string[];
	return [...new Set(used)].filter((t) => !loaded.has(t));
}

/**
 * The user folder an n8n process runs in (a fresh temp dir unless the caller gives one), with the
 * lifecycle both `n8n start` and `n8n worker` share: record the pid, stop idempotently (deleting an
 * own folder unless E2E_KEEP=1), and on a failed start stop and rethrow with the log's tail.
 */
function processHome(
	given: string | undefined,
	tag: string,
	run: (args: string[], timeoutMs?: number) => Promise<string>,
) {
	const ownFolder = !given;
	const userFolder = given ?? mkdtempSync(path.join(tmpdir(), `${tag}-`));
	if (ownFolder) tempFolders.add(userFolder);
	const logFile = path.join(userFolder, 'n8n.log');
	let pid = 0;
	let stopped = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		if (pid) {
			await run(['stop', userFolder], 60_000).catch(() => undefined);
			running.delete(pid);
		}
		if (ownFolder && !process.env.E2E_KEEP) rmSync(userFolder, { recursive: true, force: true });
		tempFolders.delete(userFolder);
	};
	return {
		userFolder,
		logFile,
		pid: () => pid,
		started(p: number) {
			pid = p;
			running.add(p);
		},
		stop,
		async failed(e: unknown): Promise<never> {
			const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30) : [];
			await stop();
			const err = e instanceof Error ? e : new Error(String(e));
			if (log.length) err.message += `\n--- ${logFile} (tail) ---\n${log.join('\n')}`;
			throw err;
		},
	};
}

export async function startN8n(options: StartN8nOptions = {}): Promise<N8nInstance> {
	await ensureN8n();
	const port = options.port ?? Number(process.env.E2E_N8N_PORT ?? 5690);
	const baseUrl = `http://127.0.0.1:${port}`;
	const env: Record<string, string> = {
		E2E_N8N_PORT: String(port),
		...(options.brokerPort ? { E2E_N8N_BROKER_PORT: String(options.brokerPort) } : {}),
		...options.env,
	};
	const run = (args: string[], timeoutMs?: number) => runScript(args, { env, timeoutMs });
	const home = processHome(options.userFolder, 'n8n-e2e', run);
	const { userFolder, logFile, stop } = home;
	mkdirSync(path.join(userFolder, 'inputs'), { recursive: true });

	const workflows = (options.workflows ?? []).flatMap(loadJson);
	const credentials = (options.credentials ?? []).flatMap(loadJson);
	for (const wf of workflows) {
		if (!wf.id) throw new Error(`workflow "${wf.name}" needs a fixed "id" so it can be published`);
	}

	const t0 = performance.now();
	const phases: Record<string, number> = {};
	const mark = (name: string, since: number) =>
		(phases[name] = Math.round(performance.now() - since));
	try {
		if (options.tarball) await installPackage(userFolder, options.tarball, env);
		mark('prepare', t0);
		const t1 = performance.now();

		const files: string[] = [];
		if (credentials.length) {
			files.push(path.join(userFolder, 'inputs/credentials.json'));
			writeFileSync(files[files.length - 1], JSON.stringify(credentials, null, 2));
		}
		if (workflows.length) {
			files.push(path.join(userFolder, 'inputs/workflows.json'));
			writeFileSync(files[files.length - 1], JSON.stringify(workflows, null, 2));
		}
		if (files.length) await run(['import', userFolder, ...files]);
		mark('import', t1);
		const t2 = performance.now();

		const publish = options.publish ?? workflows.map((wf) => String(wf.id));
		if (publish.length) await run(['publish', userFolder, ...publish]);
		mark('publish', t2);

		const started = performance.now();
		home.started(Number(await run(['start', userFolder, String(port)])));
		if (options.detach) running.delete(home.pid());

		const published = workflows.filter((wf) => publish.includes(String(wf.id)));
		const waitFor = options.waitFor ?? webhookUrls(baseUrl, published);
		if (waitFor.length === 0) waitFor.push(`${baseUrl}/healthz`);
		// The first URL is polled through the boot; once it answers, n8n has activated its workflows and
		// the others answer at once, so they are checked together (each keeps wait-webhook's grace second).
		await run(['wait-webhook', waitFor[0], userFolder], 300_000);
		await Promise.all(
			waitFor.slice(1).map((url) => run(['wait-webhook', url, userFolder], 300_000)),
		);
		const bootMs = performance.now() - started;
		mark('boot', started);
		recordTiming({
			kind: 'own',
			workflows: workflows.length,
			published: publish.length,
			...phases,
		});
		const unknown = await unknownNodeTypes(userFolder, published);
		if (unknown.length)
			throw new Error(
				`Unrecognized node type: ${unknown.join(', ')} (not among the node types n8n loaded; package not installed or stale?)`,
			);

		return {
			version: N8N_VERSION,
			baseUrl,
			port,
			userFolder,
			memoryRoot: path.join(userFolder, '.n8n/llm-memory'),
			logFile,
			pid: home.pid(),
			bootMs,
			chatUrl: (webhookId) => `${baseUrl}/webhook/${webhookId}/chat`,
			log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
			events: () => {
				const file = path.join(userFolder, '.n8n/n8nEventLog.log');
				if (!existsSync(file)) return [];
				return readFileSync(file, 'utf8')
					.split('\n')
					.filter(Boolean)
					.map((l) => JSON.parse(l) as Json);
			},
			cli: (...args) => run(['cli', userFolder, ...args]),
			stop,
		};
	} catch (e) {
		return home.failed(e);
	}
}

export interface WorkerOptions {
	/** Community package tarball to install into this worker's own .n8n/nodes. */
	tarball?: string;
	/** Task broker port (each n8n process on one machine needs its own). */
	brokerPort: number;
	/** Port of the worker's health server; ready means GET /healthz/readiness answers 200. */
	healthPort: number;
	/** Jobs this worker runs at once (n8n's --concurrency; default 5). */
	concurrency?: number;
	/** The queue-mode environment shared with main (database, Redis, encryption key, …). */
	env?: Record<string, string>;
	/** Reuse a folder instead of a fresh temp dir (it is not deleted by stop()). */
	userFolder?: string;
}

export interface N8nWorker {
	userFolder: string;
	logFile: string;
	pid: number;
	healthUrl: string;
	/** The worker's event log (.n8n/n8nEventLog-worker.log): which executions it ran. */
	events(): Json[];
	log(): string;
	/** SIGKILL the worker's whole process group at once (no graceful shutdown). */
	kill(): void;
	stop(): Promise<void>;
}

/** Starts an `n8n worker` (queue mode) in its own user folder and waits until it is ready. */
export async function startN8nWorker(options: WorkerOptions): Promise<N8nWorker> {
	await ensureN8n();
	const healthUrl = `http://127.0.0.1:${options.healthPort}/healthz/readiness`;
	const run = (args: string[], timeoutMs?: number) =>
		runScript(args, { env: options.env ?? {}, timeoutMs });
	const home = processHome(options.userFolder, 'n8n-worker', run);
	const { userFolder, logFile, stop } = home;
	try {
		if (options.tarball) await installPackage(userFolder, options.tarball, options.env ?? {});
		home.started(
			Number(
				await run([
					'worker',
					userFolder,
					String(options.brokerPort),
					String(options.healthPort),
					String(options.concurrency ?? 5),
				]),
			),
		);
		await run(['wait-ready', healthUrl, userFolder], 300_000);
	} catch (e) {
		return home.failed(e);
	}
	const pid = home.pid();
	return {
		userFolder,
		logFile,
		pid,
		healthUrl,
		log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
		events: () => {
			const file = path.join(userFolder, '.n8n/n8nEventLog-worker.log');
			if (!existsSync(file)) return [];
			return readFileSync(file, 'utf8')
				.split('\n')
				.filter(Boolean)
				.map((l) => JSON.parse(l) as Json);
		},
		kill: () => {
			try {
				process.kill(-pid, 'SIGKILL');
			} catch {
				/* already gone */
			}
		},
		stop,
	};
}
