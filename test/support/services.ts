/**
 * Real PostgreSQL and Redis (Debian's packages) for tests and benchmarks, through scripts/services.sh:
 * private instances in a temp directory, on free loopback ports, stopped by stop() or, at the latest,
 * when this process exits (and by their own `timeout` lifetime even after a SIGKILL of this process).
 *
 *   ensureServices();                       // apt-get install postgresql redis-server if missing
 *   ensurePgvector();                       // the vector extension for that PostgreSQL (pgvector.sh)
 *   const pg = pgUp();                      // { host, port, user, database, url, psql(sql), stop() }
 *   const redis = redisUp();                // { host, port, cli(args, stdin?), stop() }
 *
 * Synchronous on purpose: each call takes a second or two, and an exit handler must be able to stop them.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(__dirname, '../../scripts/services.sh');

function run(
	args: string[],
	options: { input?: string | Buffer; env?: Record<string, string>; timeoutMs?: number } = {},
): string {
	try {
		return execFileSync('bash', [SCRIPT, ...args], {
			input: options.input,
			env: { ...process.env, ...options.env },
			encoding: 'utf8',
			stdio: ['pipe', 'pipe', 'pipe'],
			timeout: options.timeoutMs ?? 120_000,
			maxBuffer: 256 * 1024 * 1024,
		}).trim();
	} catch (e) {
		const err = e as { stderr?: string; message: string };
		const tail = String(err.stderr ?? '')
			.trim()
			.split('\n')
			.slice(-20)
			.join('\n');
		throw new Error(`services.sh ${args[0]} failed: ${err.message.split('\n')[0]}\n${tail}`);
	}
}

/** Installs PostgreSQL and redis-server from apt when missing (needs root; a no-op when installed). */
export function ensureServices(): void {
	try {
		run(['check']);
	} catch {
		run(['install'], { timeoutMs: 30 * 60_000 });
	}
}

/**
 * Installs pgvector into Debian's PostgreSQL when missing (scripts/pgvector.sh: Debian's source package,
 * built once and cached; needs root; a no-op when installed). Returns its version.
 */
export function ensurePgvector(): string {
	const script = path.resolve(__dirname, '../../scripts/pgvector.sh');
	const pgvector = (...args: string[]) =>
		execFileSync('bash', [script, ...args], {
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'pipe'],
			timeout: 20 * 60_000,
		}).trim();
	try {
		pgvector('check');
	} catch {
		pgvector('install');
	}
	return pgvector('version');
}

// Last-resort cleanup: whatever was not stopped goes down with this process.
const downs = new Map<string, () => void>();
function stopAll() {
	for (const down of [...downs.values()]) {
		try {
			down();
		} catch {
			/* best effort */
		}
	}
	downs.clear();
}
process.once('exit', stopAll);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
	process.once(sig, () => {
		stopAll();
		process.kill(process.pid, sig); // once(): re-raising terminates as usual once no listener is left
	});
}

export interface Postgres {
	host: string;
	port: number;
	user: string;
	database: string;
	/** postgresql://postgres@127.0.0.1:PORT/DB */
	url: string;
	dir: string;
	/** Runs SQL (psql -f -, ON_ERROR_STOP) in the database; returns psql's unaligned, tuples-only output. */
	psql(sql: string): string;
	/** `PostgreSQL 15.18` */
	version(): string;
	stop(): void;
}

export interface StartOptions {
	/** Directory for the instance (default: a fresh temp dir, deleted by stop()). */
	dir?: string;
	/** Lifetime bound in seconds (SERVICES_LIFETIME, default 7200). */
	lifetimeSeconds?: number;
}

function instanceDir(kind: string, options: StartOptions): { dir: string; own: boolean } {
	if (options.dir) return { dir: options.dir, own: false };
	return { dir: mkdtempSync(path.join(tmpdir(), `llm-memory-${kind}-`)), own: true };
}

function lifetimeEnv(options: StartOptions): Record<string, string> {
	return options.lifetimeSeconds ? { SERVICES_LIFETIME: String(options.lifetimeSeconds) } : {};
}

/** A fresh PostgreSQL cluster with database `database` (default "app"). */
export function pgUp(options: StartOptions & { database?: string } = {}): Postgres {
	const { dir, own } = instanceDir('pg', options);
	const env = {
		...lifetimeEnv(options),
		...(options.database ? { SERVICES_PG_DB: options.database } : {}),
	};
	const down = () => {
		run(['pg-down', dir]);
		if (own) rmSync(dir, { recursive: true, force: true });
	};
	downs.set(`pg:${dir}`, down);
	try {
		const url = run(['pg-up', dir], { env });
		const [host, port, user, database] = run(['pg-info', dir]).split(' ');
		const psql = (sql: string) =>
			run(['psql', dir, '-A', '-t', '-f', '-'], { input: sql, timeoutMs: 600_000 });
		return {
			host,
			port: Number(port),
			user,
			database,
			url,
			dir,
			psql,
			version: () => `PostgreSQL ${psql('SHOW server_version').split(' ')[0]}`,
			stop: () => {
				if (downs.delete(`pg:${dir}`)) down();
			},
		};
	} catch (e) {
		downs.delete(`pg:${dir}`);
		down();
		throw e;
	}
}

export interface Redis {
	host: string;
	port: number;
	dir: string;
	/** redis-cli ARGS (stdin: e.g. a RESP stream for --pipe); returns its output. */
	cli(args: string[], input?: string | Buffer): string;
	/** `Redis 7.0.15` */
	version(): string;
	stop(): void;
}

/** A fresh redis-server without persistence. */
export function redisUp(options: StartOptions = {}): Redis {
	const { dir, own } = instanceDir('redis', options);
	const down = () => {
		run(['redis-down', dir]);
		if (own) rmSync(dir, { recursive: true, force: true });
	};
	downs.set(`redis:${dir}`, down);
	try {
		const [host, port] = run(['redis-up', dir], { env: lifetimeEnv(options) }).split(':');
		const cli = (args: string[], input?: string | Buffer) =>
			run(['redis-cli', dir, ...args], { input, timeoutMs: 600_000 });
		return {
			host,
			port: Number(port),
			dir,
			cli,
			version: () => `Redis ${/redis_version:(\S+)/.exec(cli(['INFO', 'server']))?.[1] ?? '?'}`,
			stop: () => {
				if (downs.delete(`redis:${dir}`)) down();
			},
		};
	} catch (e) {
		downs.delete(`redis:${dir}`);
		down();
		throw e;
	}
}

/** The Redis wire format of commands, for `redis-cli --pipe` (binary-safe, one round trip for thousands). */
export function resp(commands: string[][]): Buffer {
	const parts: Buffer[] = [];
	for (const args of commands) {
		parts.push(Buffer.from(`*${args.length}\r\n`));
		for (const a of args) {
			const b = Buffer.from(a, 'utf8');
			parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
		}
	}
	return Buffer.concat(parts);
}
