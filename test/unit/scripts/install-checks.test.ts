// The install scripts check for the very file a step uses, and for its package being fully installed:
// pgvector's build needs PostgreSQL's server headers (postgres.h), which pgxs.mk does not prove (on
// Debian 12 postgresql-client ships pgxs.mk and pg_config, not the headers). Run against a PostgreSQL
// layout and a dpkg database of the test's own (PG_ROOT, NEED_DPKG_ADMINDIR), so the machine's real
// state neither helps nor hurts. make, gcc, libc headers and the keyring are the machine's own.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';

import { tempDir } from '../../support/storages';

const SCRIPTS = resolve(__dirname, '../../../scripts');
const HOST_PACKAGES = ['make', 'gcc', 'libc6-dev', 'debian-archive-keyring'];

interface Layout {
	root: string;
	headers: boolean;
	pgConfig: boolean;
	/** dpkg status of each package named: "install ok installed" unless given. */
	status: Record<string, string>;
}

function layout(options: Partial<Layout> = {}): Layout {
	const root = tempDir('install-checks');
	const headers = options.headers ?? false;
	const pgConfig = options.pgConfig ?? true;
	const bin = join(root, 'lib/15/bin');
	mkdirSync(bin, { recursive: true });
	const exe = (path: string, body: string) => {
		writeFileSync(path, `#!/bin/sh\n${body}\n`);
		chmodSync(path, 0o755);
	};
	exe(join(bin, 'postgres'), 'exit 0');
	const pgxs = join(root, 'lib/15/lib/pgxs/src/makefiles/pgxs.mk');
	mkdirSync(join(pgxs, '..'), { recursive: true });
	writeFileSync(pgxs, '# pgxs\n');
	const server = join(root, 'include/15/server');
	mkdirSync(server, { recursive: true });
	if (headers) writeFileSync(join(server, 'postgres.h'), '/* postgres.h */\n');
	if (pgConfig)
		exe(
			join(bin, 'pg_config'),
			`case "$1" in --includedir-server) echo "${server}";; --pgxs) echo "${pgxs}";; *) exit 2;; esac`,
		);
	const status: Record<string, string> = {
		'postgresql-15': 'install ok installed',
		'postgresql-client-15': 'install ok installed',
		...Object.fromEntries(HOST_PACKAGES.map((p) => [p, 'install ok installed'])),
		...(headers ? { 'postgresql-server-dev-15': 'install ok installed' } : {}),
		...options.status,
	};
	mkdirSync(join(root, 'dpkg/info'), { recursive: true });
	mkdirSync(join(root, 'dpkg/updates'), { recursive: true });
	writeFileSync(
		join(root, 'dpkg/status'),
		Object.entries(status)
			.map(
				([name, s]) =>
					`Package: ${name}\nStatus: ${s}\nPriority: optional\nArchitecture: amd64\nVersion: 15.20-0+deb12u1\nMaintainer: x\nDescription: x\n`,
			)
			.join('\n'),
	);
	return { root, headers, pgConfig, status };
}

function deps(l: Layout) {
	const r = spawnSync('bash', [join(SCRIPTS, 'pgvector.sh'), 'deps'], {
		encoding: 'utf8',
		env: {
			...process.env,
			PG_ROOT: join(l.root, 'lib'),
			PG_SHARE: join(l.root, 'share'),
			NEED_DPKG_ADMINDIR: join(l.root, 'dpkg'),
		},
	});
	return { code: r.status, stderr: r.stderr };
}

describe('pgvector.sh deps: what the build uses, checked for itself', () => {
	it('pgxs.mk present, server headers missing: fails naming postgres.h, its package and the install command', () => {
		const r = deps(layout({ headers: false }));
		assert.equal(r.code, 1, r.stderr);
		assert.match(r.stderr, /missing \S+\/include\/15\/server\/postgres\.h/);
		assert.match(r.stderr, /package postgresql-server-dev-15=15\.20-0\+deb12u1/);
		assert.match(
			r.stderr,
			/apt-get install --reinstall -y --no-install-recommends postgresql-server-dev-15=15\.20-0\+deb12u1$/m,
		);
	});

	it('headers and pg_config there, packages installed: passes, silently', () => {
		const r = deps(layout({ headers: true }));
		assert.equal(r.code, 0, r.stderr);
		assert.equal(r.stderr, '');
	});

	it('headers there but their package cut short mid-install: fails (installed again)', () => {
		const r = deps(
			layout({
				headers: true,
				status: { 'postgresql-server-dev-15': 'install ok half-installed' },
			}),
		);
		assert.equal(r.code, 1, r.stderr);
		assert.match(
			r.stderr,
			/not fully installed according to dpkg \(package postgresql-server-dev-15=/,
		);
	});

	it('no pg_config: fails naming it and its package', () => {
		const r = deps(layout({ headers: true, pgConfig: false }));
		assert.equal(r.code, 1, r.stderr);
		assert.match(r.stderr, /missing \S+\/lib\/15\/bin\/pg_config \(package postgresql-client-15\)/);
	});
});

/** Runs a few need.sh calls in a fresh bash with the test's dpkg database. */
function need(l: Layout, script: string) {
	const r = spawnSync('bash', ['-c', `. "${join(SCRIPTS, 'need.sh')}"; ${script}`], {
		encoding: 'utf8',
		env: { ...process.env, NEED_DPKG_ADMINDIR: join(l.root, 'dpkg') },
	});
	return { code: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
}

describe('need.sh: a file and its package, or a command that runs', () => {
	it('a file that exists from a package that is installed passes; a missing file names the package once', () => {
		const l = layout();
		const ok = need(l, `need_file make /usr/bin/make; need_ok && echo ok`);
		assert.equal(ok.stdout, 'ok');
		const missing = need(
			l,
			`need_file make /nonexistent/a; need_file make /nonexistent/b; need_ok || need_list; need_say t`,
		);
		assert.equal(missing.stdout, 'make');
		assert.match(missing.stderr, /t: missing \/nonexistent\/a \(package make\)/);
	});

	it('a package dpkg does not know is needed, even if the file is there', () => {
		const l = layout();
		const r = need(l, `need_file redis-server /usr/bin/make; need_ok || need_list`);
		assert.equal(r.stdout, 'redis-server');
	});

	it('a command that is there but does not run is needed', () => {
		const l = layout();
		assert.equal(need(l, `need_run make false; need_ok || need_list`).stdout, 'make');
		assert.equal(need(l, `need_run make true; need_ok && echo ok`).stdout, 'ok');
	});
});

describe('need.sh: installs on one machine take turns', () => {
	it("two installs at once run apt one after the other, and apt waits for dpkg's lock", async () => {
		const root = tempDir('install-turns');
		const bin = join(root, 'bin');
		mkdirSync(join(root, 'dpkg/info'), { recursive: true });
		mkdirSync(join(root, 'dpkg/updates'), { recursive: true });
		mkdirSync(bin, { recursive: true });
		writeFileSync(join(root, 'dpkg/status'), '');
		const log = join(root, 'log');
		// A stand-in apt-get and dpkg: an install takes half a second, then the package is there.
		const fake = (name: string, body: string) => {
			writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
			chmodSync(join(bin, name), 0o755);
		};
		fake('dpkg', 'exit 0');
		fake(
			'apt-get',
			[
				`echo "args $*" >> "${log}"`,
				'case "$*" in *" install "*)',
				`  echo "start $$" >> "${log}"; sleep 0.5`,
				`  grep -q '^Package: fakepkg' "${root}/dpkg/status" || printf 'Package: fakepkg\\nStatus: install ok installed\\nVersion: 1\\nArchitecture: all\\n\\n' >> "${root}/dpkg/status"`,
				`  touch "${root}/file"; echo "end $$" >> "${log}";;`,
				'esac',
			].join('\n'),
		);
		const errors: string[] = [];
		const run = () =>
			new Promise<number | null>((done) => {
				const child = spawn(
					'bash',
					[
						'-c',
						`. "${join(SCRIPTS, 'need.sh')}"; need_file fakepkg "${root}/file"; need_install t`,
					],
					{
						env: {
							...process.env,
							PATH: `${bin}:${process.env.PATH}`,
							NEED_DPKG_ADMINDIR: join(root, 'dpkg'),
							NEED_LOCK: join(root, 'lock'),
						},
						stdio: ['ignore', 'ignore', 'pipe'],
					},
				);
				child.stderr.on('data', (d: Buffer) => errors.push(d.toString()));
				child.on('close', done);
			});
		assert.deepEqual(await Promise.all([run(), run()]), [0, 0], errors.join(''));
		const lines = readFileSync(log, 'utf8').trim().split('\n');
		const turns = lines.filter((l) => /^(start|end) /.test(l)).map((l) => l.split(' ')[0]);
		assert.deepEqual(turns, ['start', 'end', 'start', 'end'], lines.join('\n'));
		for (const l of lines.filter((x) => x.startsWith('args ')))
			assert.match(l, /-o DPkg::Lock::Timeout=600 /);
	});
});

describe('need.sh: a download tried again', () => {
	/** Runs `with_tries` on a command that fails its first `failures` runs (counted in a file). */
	function tries(failures: number, extra: Record<string, string> = {}) {
		const root = tempDir('with-tries');
		const count = join(root, 'count');
		writeFileSync(count, '0');
		const script = [
			`. "${join(SCRIPTS, 'need.sh')}"`,
			// A shell function, as n8n.sh's with_node is.
			`flaky() { local n; n=$(($(cat "${count}") + 1)); echo $n > "${count}"; [ $n -gt ${failures} ]; }`,
			'with_tries t flaky npm install x',
		].join('\n');
		const r = spawnSync('bash', ['-c', script], {
			encoding: 'utf8',
			env: { ...process.env, NEED_TRY_WAIT: '0', ...extra },
		});
		return { code: r.status, stderr: r.stderr, runs: Number(readFileSync(count, 'utf8')) };
	}

	it('a command that fails twice then succeeds: three runs, each failure said, exit 0', () => {
		const r = tries(2);
		assert.equal(r.code, 0, r.stderr);
		assert.equal(r.runs, 3);
		assert.match(r.stderr, /t: flaky npm install x failed \(try 1 of 3\); trying again in 0 s/);
		assert.match(r.stderr, /try 2 of 3/);
	});

	it('a command that keeps failing: given up after NEED_TRIES runs, exit 1, saying so', () => {
		const r = tries(10, { NEED_TRIES: '2' });
		assert.equal(r.code, 1);
		assert.equal(r.runs, 2);
		assert.match(r.stderr, /t: flaky npm install x failed 2 times/);
	});

	it('a command that succeeds at once runs once, silently', () => {
		const r = tries(0);
		assert.deepEqual([r.code, r.runs, r.stderr], [0, 1, '']);
	});
});
