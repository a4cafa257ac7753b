/**
 * One n8n that the e2e and editor test files of a suite run share, instead of one n8n per file.
 * scripts/test.sh starts one per n8n version before the e2e suite (`shared-n8n.ts up DIR`), passes its
 * folder on in E2E_SHARED_N8N, and stops it after the editor suite (`shared-n8n.ts down DIR`). Booting
 * n8n and importing and publishing with its CLI cost 17 to 34 s per file on an idle machine (most of
 * each file's time); joining the shared n8n costs about a second.
 *
 *   const n8n = await joinSharedN8n({ tarball, credentials: [cred], workflows: [wf] });
 *   after(() => n8n?.stop());
 *
 * joinSharedN8n takes startN8n's options and gives an N8nInstance. A test file joins as a tenant,
 * through n8n's REST API as the owner (the editor's own calls):
 * - its credentials are created anew, so each tenant holds its own (n8n gives them new IDs, and the
 *   tenant's workflows are pointed at them; a reference n8n would resolve otherwise fails the join);
 * - its workflows are created with their own IDs (an ID another file took fails the join) and the
 *   published ones activated, then their webhooks awaited as startN8n awaits them;
 * - every node of this package that keeps memory on Local Disk gets the file's own folder: an empty
 *   Folder becomes `memoryRoot` (the tenant's .n8n/llm-memory), a relative one is resolved from the
 *   tenant's .n8n as the node resolves it from n8n's, so no file sees another file's memory, and
 *   housekeeping that sweeps a whole storage (Prune Expired, Forget User, List) sweeps the file's own;
 * - `events()` and `log()` hold only what came after the join, events only of the tenant's workflows;
 * - `stop()` deactivates the tenant's workflows (their webhooks stop answering) and deletes its folder.
 * What cannot be shared keeps startN8n: files that restart or stop n8n, set up users (project-boundary),
 * test the harness itself, need an environment the shared n8n does not run with (SHARED_N8N_ENV), or run
 * queue mode. Without E2E_SHARED_N8N (a file run on its own) joinSharedN8n first starts an n8n of the
 * file's own, the same way, on E2E_N8N_PORT: a file behaves alike alone and in the suite.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import {
	loadJson,
	N8N_VERSION,
	packPackage,
	recordTiming,
	runScript,
	startN8n,
	unknownNodeTypes,
	webhookUrls,
} from './n8n-harness';
import type { N8nInstance, StartN8nOptions } from './n8n-harness';
import { setUpOwner, TEST_OWNER } from './n8n-owner';
import { RestSession } from './n8n-users';

type Json = Record<string, any>;

/** Node types of this package start with this; their storage is what each file gets of its own. */
const PACKAGE_PREFIX = 'n8n-nodes-llm-memory.';

/**
 * The environment every shared n8n runs with (a file asking for other values cannot join). The Code node's
 * console.log reaches n8n's log (retention.test.ts reads it); the event log is never rotated while the
 * suites read it (n8n rotates at 10 MB and the tenants' events add up).
 */
export const SHARED_N8N_ENV: Record<string, string> = {
	CODE_ENABLE_STDOUT: 'true',
	N8N_EVENTBUS_LOGWRITER_MAXFILESIZEINKB: String(1024 * 1024),
};

/** What `shared-n8n.ts up` writes to DIR/shared-n8n.json for the test files. */
export interface SharedN8nState {
	version: string;
	baseUrl: string;
	port: number;
	userFolder: string;
	logFile: string;
	pid: number;
	/** The owner's session cookie (the owner is TEST_OWNER). */
	cookie: string;
	env: Record<string, string>;
	tarball: string;
}

/** Waits until n8n's REST API answers (it comes up after /healthz). */
async function restReady(baseUrl: string, timeoutMs = 120_000): Promise<void> {
	let last = '';
	for (const end = Date.now() + timeoutMs; Date.now() < end;) {
		const res = await fetch(`${baseUrl}/rest/settings`).catch((e: Error) => e);
		if (!(res instanceof Error) && res.ok) return;
		last = res instanceof Error ? res.message : `HTTP ${res.status}`;
		await new Promise((r) => setTimeout(r, 250));
	}
	throw new Error(`n8n's REST API at ${baseUrl} did not answer: ${last}`);
}

/**
 * Boots an n8n to share: the package's tarball, no workflows, the owner set up. With `dir` it lives in
 * DIR/n8n and writes DIR/shared-n8n.json.
 */
export async function startSharedN8n(
	options: {
		/** Where n8n's user folder (DIR/n8n) and DIR/shared-n8n.json go, for E2E_SHARED_N8N=DIR. */
		dir?: string;
		/** Leave n8n running when this process exits (`shared-n8n.ts up`). */
		detach?: boolean;
		port?: number;
		tarball?: string;
		lifetimeSeconds?: number;
	} = {},
): Promise<{ state: SharedN8nState; stop: () => Promise<void> }> {
	const tarball = options.tarball ?? (await packPackage());
	const env = { ...SHARED_N8N_ENV };
	const n8n = await startN8n({
		tarball,
		port: options.port,
		userFolder: options.dir ? path.join(options.dir, 'n8n') : undefined,
		detach: options.detach,
		env: {
			...env,
			...(options.lifetimeSeconds ? { E2E_N8N_LIFETIME: String(options.lifetimeSeconds) } : {}),
		},
	});
	try {
		await restReady(n8n.baseUrl);
		const cookie = await setUpOwner(n8n.baseUrl);
		const state: SharedN8nState = {
			version: n8n.version,
			baseUrl: n8n.baseUrl,
			port: n8n.port,
			userFolder: n8n.userFolder,
			logFile: n8n.logFile,
			pid: n8n.pid,
			cookie,
			env,
			tarball,
		};
		if (options.dir)
			writeFileSync(path.join(options.dir, 'shared-n8n.json'), JSON.stringify(state, null, 2));
		return { state, stop: () => n8n.stop() };
	} catch (e) {
		await n8n.stop();
		throw e;
	}
}

function readShared(dir: string): SharedN8nState {
	const file = path.join(dir, 'shared-n8n.json');
	if (!existsSync(file))
		throw new Error(
			`E2E_SHARED_N8N=${dir} holds no shared-n8n.json (start it: shared-n8n.ts up ${dir})`,
		);
	const state = JSON.parse(readFileSync(file, 'utf8')) as SharedN8nState;
	if (state.version !== N8N_VERSION)
		throw new Error(
			`the shared n8n in ${dir} runs n8n ${state.version}, this process n8n ${N8N_VERSION}`,
		);
	return state;
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

/** The tenant's memory folder for a node's configured Folder, as nodes/shared/storage.ts resolves it. */
function tenantFolder(configured: unknown, memoryRoot: string, node: string): string {
	const given = typeof configured === 'string' ? configured.trim() : '';
	if (given.startsWith('='))
		throw new Error(
			`node "${node}": its Folder is an expression, which cannot be pointed at the file's own folder (use startN8n)`,
		);
	return given ? path.resolve(path.dirname(memoryRoot), given) : memoryRoot;
}

/** A tenant's copy of a workflow: its credentials' new IDs, and its own memory folder. */
function forTenant(wf: Json, credentialIds: Map<string, string>, memoryRoot: string): Json {
	const copy = structuredClone(wf);
	for (const node of (copy.nodes ?? []) as Json[]) {
		for (const [type, ref] of Object.entries((node.credentials ?? {}) as Json))
			if (ref && typeof ref === 'object' && credentialIds.has(ref.id))
				node.credentials[type] = { ...ref, id: credentialIds.get(ref.id) };
		if (String(node.type).startsWith(PACKAGE_PREFIX)) {
			node.parameters ??= {};
			if (node.parameters.storage !== 's3')
				node.parameters.localFolder = tenantFolder(
					node.parameters.localFolder,
					memoryRoot,
					node.name,
				);
		}
	}
	return copy;
}

/** The credential references of a workflow's nodes, "node/type → id", to compare what n8n stored. */
function credentialRefs(wf: Json): string[] {
	return ((wf.nodes ?? []) as Json[]).flatMap((n) =>
		Object.entries((n.credentials ?? {}) as Json).map(([t, ref]) => `${n.name}/${t} → ${ref?.id}`),
	);
}

/** Bytes of a file from `offset` on ('' when the file does not exist). */
function readFrom(file: string, offset: number): string {
	if (!existsSync(file)) return '';
	return readFileSync(file).subarray(offset).toString('utf8');
}

const sizeOf = (file: string) => (existsSync(file) ? statSync(file).size : 0);

/**
 * Joins the shared n8n (E2E_SHARED_N8N) as a tenant; without E2E_SHARED_N8N, starts one of this file's
 * own first. Takes startN8n's options: `port` is where an n8n of the file's own listens; `env` must be
 * what the shared n8n runs with; `userFolder`, `brokerPort` and `detach` belong to startN8n alone.
 */
export async function joinSharedN8n(options: StartN8nOptions = {}): Promise<N8nInstance> {
	for (const key of ['userFolder', 'brokerPort', 'detach'] as const)
		if (options[key] !== undefined)
			throw new Error(`joinSharedN8n: "${key}" is for an n8n of the file's own (startN8n)`);
	const shared = process.env.E2E_SHARED_N8N;
	const own = shared
		? undefined
		: await startSharedN8n({ port: options.port, tarball: options.tarball });
	const state = own ? own.state : readShared(shared as string);
	const started = performance.now();
	for (const [key, value] of Object.entries(options.env ?? {}))
		if (state.env[key] !== value)
			throw new Error(
				`joinSharedN8n: the shared n8n runs without ${key}=${value} (SHARED_N8N_ENV in test/support/shared-n8n.ts; or use startN8n)`,
			);
	if (
		options.tarball &&
		options.tarball !== state.tarball &&
		sha256(options.tarball) !== sha256(state.tarball)
	)
		throw new Error(
			`joinSharedN8n: the shared n8n runs the package of ${state.tarball}, not ${options.tarball}`,
		);

	const name = path.basename(process.argv[1] ?? 'tenant').replace(/\.test\.ts$|\.ts$/, '');
	const home = path.join(state.userFolder, 'tenants', `${name}-${randomBytes(3).toString('hex')}`);
	const memoryRoot = path.join(home, '.n8n/llm-memory');
	mkdirSync(memoryRoot, { recursive: true });
	const eventFile = path.join(state.userFolder, '.n8n/n8nEventLog.log');
	const logFrom = sizeOf(state.logFile);
	const eventsFrom = sizeOf(eventFile);
	const owner = new RestSession(state.baseUrl, state.cookie, TEST_OWNER.email);

	const credentials = (options.credentials ?? []).flatMap(loadJson);
	const workflows = (options.workflows ?? []).flatMap(loadJson);
	for (const wf of workflows)
		if (!wf.id) throw new Error(`workflow "${wf.name}" needs a fixed "id" so it can be published`);
	const ids = new Set(workflows.map((wf) => String(wf.id)));
	const publish = options.publish ?? [...ids];
	const activated: string[] = [];
	let stopped = false;
	const stop = async () => {
		if (stopped) return;
		stopped = true;
		for (const id of activated) {
			const r = await owner
				.request('POST', `/rest/workflows/${id}/deactivate`, {})
				.catch((e: Error) => ({ status: 0, text: e.message }));
			if (r.status !== 200 && !own)
				process.stderr.write(`shared n8n: deactivating ${id} answered ${r.status} ${r.text}\n`);
		}
		if (!process.env.E2E_KEEP) rmSync(home, { recursive: true, force: true });
		await own?.stop();
	};

	try {
		const credentialIds = new Map<string, string>();
		for (const c of credentials) {
			const created = await owner.call('POST', '/rest/credentials', {
				name: c.name,
				type: c.type,
				data: c.data,
			});
			if (c.id) credentialIds.set(String(c.id), String(created.id));
		}
		const mine = workflows.map((wf) => forTenant(wf, credentialIds, memoryRoot));
		const published = mine.filter((wf) => publish.includes(String(wf.id)));
		const unknown = await unknownNodeTypes(state.userFolder, published);
		if (unknown.length)
			throw new Error(
				`Unrecognized node type: ${unknown.join(', ')} (not among the node types n8n loaded; package not installed or stale?)`,
			);
		const versions = new Map<string, string>();
		for (const wf of mine) {
			const body = { ...wf };
			delete body.active;
			const created = await owner.call('POST', '/rest/workflows', body);
			if (String(created.id) !== String(wf.id))
				throw new Error(`n8n gave workflow ${wf.id} the ID ${created.id}`);
			// n8n resolves a credential ID it does not know by the credential's name: that could be
			// another file's credential, so the references must be stored exactly as given.
			const [stored, given] = [credentialRefs(created), credentialRefs(wf)];
			if (JSON.stringify(stored) !== JSON.stringify(given))
				throw new Error(
					`n8n resolved a credential reference of workflow ${wf.id} otherwise than given (by its name, to another file's credential?): ${stored.join(', ')} instead of ${given.join(', ')}`,
				);
			versions.set(String(wf.id), String(created.versionId));
		}
		for (const id of publish) {
			if (!versions.has(id)) throw new Error(`publish: no workflow ${id} was given`);
			await owner.call('POST', `/rest/workflows/${id}/activate`, { versionId: versions.get(id) });
			activated.push(id);
		}
		const waitFor = options.waitFor ?? webhookUrls(state.baseUrl, published);
		await Promise.all(
			waitFor.map((url) => runScript(['wait-webhook', url], { timeoutMs: 300_000 })),
		);
	} catch (e) {
		await stop();
		const err = e instanceof Error ? e : new Error(String(e));
		const log = readFrom(state.logFile, logFrom).split('\n').slice(-30).join('\n');
		if (log.trim()) err.message += `\n--- ${state.logFile} (tail, since the join) ---\n${log}`;
		throw err;
	}
	const joinMs = performance.now() - started;
	recordTiming({
		kind: own ? 'joined (own)' : 'joined',
		workflows: workflows.length,
		published: publish.length,
		join: Math.round(joinMs),
	});

	return {
		version: state.version,
		baseUrl: state.baseUrl,
		port: state.port,
		userFolder: state.userFolder,
		memoryRoot,
		logFile: state.logFile,
		pid: state.pid,
		bootMs: joinMs,
		ownerCookie: state.cookie,
		chatUrl: (webhookId) => `${state.baseUrl}/webhook/${webhookId}/chat`,
		log: () => readFrom(state.logFile, logFrom),
		events: () => {
			const lines = readFrom(eventFile, eventsFrom).split('\n');
			const events: Json[] = [];
			lines.forEach((line, i) => {
				if (!line.trim()) return;
				try {
					events.push(JSON.parse(line) as Json);
				} catch (e) {
					if (i < lines.length - 1) throw e; // only the line n8n is writing may be partial
				}
			});
			return events.filter((e) => ids.has(String(e.payload?.workflowId)));
		},
		cli: (...args) =>
			runScript(['cli', state.userFolder, ...args], {
				env: { ...state.env, E2E_N8N_PORT: String(state.port) },
			}),
		stop,
	};
}

// shared-n8n.ts up DIR   boots n8n on E2E_SHARED_N8N_PORT (else E2E_N8N_PORT) into DIR; writes DIR/shared-n8n.json
// shared-n8n.ts down DIR stops it
if (require.main === module) {
	const [cmd, dir] = process.argv.slice(2);
	const main = async () => {
		if (!dir || !['up', 'down'].includes(cmd)) throw new Error('usage: shared-n8n.ts up|down DIR');
		if (cmd === 'up') {
			const started = performance.now();
			mkdirSync(dir, { recursive: true });
			const port = Number(process.env.E2E_SHARED_N8N_PORT ?? process.env.E2E_N8N_PORT ?? 5690);
			const { state } = await startSharedN8n({
				dir,
				port,
				detach: true,
				lifetimeSeconds: 3 * 3600,
			});
			const seconds = ((performance.now() - started) / 1000).toFixed(0);
			console.log(
				`shared n8n: n8n ${state.version} on ${state.baseUrl} (pid ${state.pid}), up in ${seconds} s`,
			);
		} else {
			const file = path.join(dir, 'shared-n8n.json');
			if (!existsSync(file)) return;
			const state = JSON.parse(readFileSync(file, 'utf8')) as SharedN8nState;
			await runScript(['stop', state.userFolder], { timeoutMs: 60_000 });
			rmSync(file, { force: true });
		}
	};
	main().catch((e: unknown) => {
		console.error(`shared-n8n.ts ${cmd}: ${(e as Error).stack ?? e}`);
		process.exit(1);
	});
}
