import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { promisify } from 'node:util';

import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';

import { ConflictError, LocalDiskStorage, S3Storage } from '../../src/internal';
import type { MemoryStorage, PutOptions, S3StorageOptions } from '../../src/internal';
import { tempDir } from './storages';

const SCRIPT = path.resolve(__dirname, '../../scripts/rgw.sh');
export const RGW_CREDENTIALS = {
	accessKeyId: 'LLMMEMACCESSKEY',
	secretAccessKey: 'LLMMEMSECRETKEY',
};

export interface Rgw {
	endpoint: string;
	stop(): void;
}

export async function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = createServer();
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address() as { port: number };
			srv.close(() => resolve(port));
		});
		srv.on('error', reject);
	});
}

let shared: Promise<Rgw> | undefined;

/**
 * A real Ceph radosgw on loopback. Reuses RGW_ENDPOINT when the test script already started one;
 * otherwise starts its own with scripts/rgw.sh and stops it when the process exits.
 * Missing Ceph packages are a failure, not a skip.
 */
export function ensureRgw(): Promise<Rgw> {
	shared ??= (async () => {
		if (process.env.RGW_ENDPOINT) return { endpoint: process.env.RGW_ENDPOINT, stop: () => {} };
		try {
			execFileSync(SCRIPT, ['check']);
		} catch {
			throw new Error(
				'Ceph radosgw is not installed (apt-get install ceph-mon ceph-osd radosgw); run the README test command',
			);
		}
		const dir = tempDir('rgw');
		const endpoint = execFileSync(SCRIPT, ['up', dir], {
			env: { ...process.env, RGW_LIFETIME_SECONDS: '1800' },
			stdio: ['ignore', 'pipe', 'ignore'],
		})
			.toString()
			.trim();
		const stop = () => execFileSync(SCRIPT, ['down', dir], { stdio: 'ignore' });
		process.once('exit', stop);
		return { endpoint, stop };
	})();
	return shared;
}

/** A fresh bucket on the shared radosgw, and an S3Storage on it. */
export async function rgwStorage(extra: Partial<S3StorageOptions> = {}): Promise<S3Storage> {
	const { endpoint } = await ensureRgw();
	return bucketStorage(endpoint, `t-${randomBytes(6).toString('hex')}`, extra);
}

/** Creates `bucket` on the radosgw at `endpoint` (any radosgw, e.g. a test's own) and an S3Storage on it. */
export async function bucketStorage(
	endpoint: string,
	bucket: string,
	extra: Partial<S3StorageOptions> = {},
): Promise<S3Storage> {
	const client = new S3Client({
		endpoint,
		region: 'us-east-1',
		forcePathStyle: true,
		credentials: RGW_CREDENTIALS,
	});
	await client.send(new CreateBucketCommand({ Bucket: bucket }));
	client.destroy();
	return new S3Storage({
		bucket,
		endpoint,
		forcePathStyle: true,
		region: 'us-east-1',
		credentials: RGW_CREDENTIALS,
		...extra,
	});
}

/**
 * The in-process harness's credentials for a bucket of rgwStorage(): the decrypted LLM Memory S3
 * Storage credential (key prefix "n8n") by type, and the reference a node's `credentials` holds.
 */
export function rgwCredentials(s3: S3Storage) {
	return {
		credentials: {
			llmMemoryS3Api: {
				endpoint: s3.endpoint as string,
				region: 'us-east-1',
				bucket: s3.bucket,
				accessKeyId: RGW_CREDENTIALS.accessKeyId,
				secretAccessKey: RGW_CREDENTIALS.secretAccessKey,
				forcePathStyle: true,
				keyPrefix: 'n8n',
			},
		},
		cred: { llmMemoryS3Api: { id: 'cred-1', name: 'rgw' } },
	};
}

/** Where a child writer process (append, turn and sealing workers) keeps memory: a disk root or a bucket. */
export interface WorkerBackend {
	backend: 'disk' | 's3';
	root?: string;
	endpoint?: string;
	bucket?: string;
}

export function workerStorage(config: WorkerBackend): MemoryStorage {
	return config.backend === 'disk'
		? new LocalDiskStorage({ root: config.root as string })
		: new S3Storage({
				bucket: config.bucket as string,
				endpoint: config.endpoint,
				forcePathStyle: true,
				credentials: RGW_CREDENTIALS,
			});
}

/** A storage test's backend: the storage the test reads, and where its worker processes write it. */
export interface WorkerBackendCase {
	name: string;
	make: () => Promise<{ storage: MemoryStorage; worker: WorkerBackend }>;
}

/** Local disk (a fresh folder named from `tag`) and radosgw (a fresh bucket). */
export function workerBackends(tag?: string): WorkerBackendCase[] {
	return [
		{
			name: 'local disk',
			make: async () => {
				const root = tempDir(tag);
				return { storage: new LocalDiskStorage({ root }), worker: { backend: 'disk', root } };
			},
		},
		{
			name: 'radosgw',
			make: async () => {
				const s3 = await rgwStorage();
				return { storage: s3, worker: { backend: 's3', endpoint: s3.endpoint, bucket: s3.bucket } };
			},
		},
	];
}

/** A worker's storage that counts the conditional writes it lost (puts refused with ConflictError). */
export function conflictCountingStorage(config: WorkerBackend): {
	storage: MemoryStorage;
	conflicts: () => number;
} {
	const inner = workerStorage(config);
	let conflicts = 0;
	const storage: MemoryStorage = {
		get: inner.get.bind(inner) as MemoryStorage['get'],
		delete: inner.delete.bind(inner),
		list: inner.list.bind(inner),
		describe: () => inner.describe(),
		async put(key: string, body: Uint8Array, options?: PutOptions) {
			try {
				return await inner.put(key, body, options);
			} catch (error) {
				if (error instanceof ConflictError) conflicts++;
				throw error;
			}
		},
	};
	return { storage, conflicts: () => conflicts };
}

/** Runs one worker process (tsx) per config, all at once; their standard outputs, in order. */
export async function runWorkers(
	script: string,
	configs: object[],
	timeout: number,
): Promise<string[]> {
	const outputs = await Promise.all(
		configs.map((config) =>
			promisify(execFile)(process.execPath, ['--import', 'tsx', script, JSON.stringify(config)], {
				timeout,
			}),
		),
	);
	return outputs.map((o) => o.stdout);
}

/** Waits until the wall-clock time `startAt` (ms), so that every worker starts at the same time. */
export async function waitUntil(startAt: number): Promise<void> {
	await new Promise((resolve) => setTimeout(resolve, Math.max(0, startAt - Date.now())));
}

/**
 * Byte-length token counts for worker processes: they are started by the dozen and killed within a
 * second, and the real tokenizer's first use costs most of a second; counting is not what they test.
 */
export const byteTokenCounter = {
	encoding: 'utf8-bytes',
	count: (text: string) => Buffer.byteLength(text),
};
