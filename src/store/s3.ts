import { randomUUID } from 'node:crypto';

import {
	DeleteObjectCommand,
	GetObjectCommand,
	HeadObjectCommand,
	ListObjectsV2Command,
	PutObjectCommand,
	S3Client,
} from '@aws-sdk/client-s3';
import type { ListObjectsV2CommandInput } from '@aws-sdk/client-s3';

import { BoundedCache } from '../common/bounded-cache';
import { defaultWarn } from '../common/warn';
import { ConflictError, StorageError, StorageTimeoutError, UnsafeStorageError } from '../errors';
import { validateKeyPrefix } from '../keys/ids';
import { assertStorageKey } from './key-check';
import { isConflict, isNotFound, status, virtualHostHint, wasRetried } from './s3-errors';
import type { SdkError } from './s3-errors';
import type {
	DeleteOptions,
	FolderPage,
	GetOptions,
	ListedObject,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredObject,
} from './storage';

export interface S3StorageOptions {
	bucket: string;
	/** Prefix before every key in the bucket ("memory/"). */
	prefix?: string;
	region?: string;
	/** For S3-compatible servers (Ceph RGW, MinIO, R2 …). */
	endpoint?: string;
	forcePathStyle?: boolean;
	credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
	/**
	 * Accept a server that ignores If-Match / If-None-Match. Concurrent turns can then overwrite each
	 * other; a warning is emitted. Off by default: such a server is refused.
	 */
	allowUnsafeConditionalWrites?: boolean;
	onWarning?: (message: string) => void;
	/** Per-request timeout in ms (default 15 s). */
	requestTimeoutMs?: number;
	/** A ready client (tests); the options above except bucket and prefix are then ignored. */
	client?: S3Client;
}

/** What the one-time probe learned about the server. */
export interface ConditionalWriteSupport {
	enforced: boolean;
	/** Whether If-Match must carry the ETag without quotes (Ceph RGW) or with them. */
	quoteIfMatch: boolean;
}

const unquote = (etag: string | undefined) =>
	(etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');

/** One probe per server, bucket and prefix: a verdict on the server, never on the data it holds. */
const probes = new BoundedCache<Promise<ConditionalWriteSupport>>({
	name: 's3 conditional-write probes',
	maxEntries: 256,
});

/**
 * Memory on S3 or an S3-compatible server. Creates use If-None-Match: *, updates use If-Match, and a
 * one-time probe refuses servers that ignore them (unless allowUnsafeConditionalWrites).
 */
export class S3Storage implements MemoryStorage {
	readonly bucket: string;
	readonly prefix: string;
	/** The SDK client (shareable: nodes reuse one per endpoint and credentials). */
	readonly client: S3Client;
	/** The configured endpoint; undefined means AWS. */
	readonly endpoint: string | undefined;
	private readonly options: S3StorageOptions;

	constructor(options: S3StorageOptions) {
		if (!options.bucket) throw new StorageError('S3 storage needs a bucket name');
		this.options = options;
		this.bucket = options.bucket;
		this.prefix = validateKeyPrefix('S3 key prefix', options.prefix);
		this.endpoint = options.endpoint || undefined;
		this.client =
			options.client ??
			new S3Client({
				region: options.region || 'us-east-1',
				endpoint: options.endpoint || undefined,
				forcePathStyle: options.forcePathStyle ?? false,
				credentials: options.credentials,
				requestChecksumCalculation: 'WHEN_REQUIRED',
				responseChecksumValidation: 'WHEN_REQUIRED',
				// throwOnRequestTimeout: without it the SDK only logs a warning, and a frozen server hangs a turn forever.
				requestHandler: {
					requestTimeout: options.requestTimeoutMs ?? 15_000,
					connectionTimeout: 5_000,
					throwOnRequestTimeout: true,
				},
			});
	}

	describe(): string {
		return `s3://${this.bucket}/${this.prefix}`;
	}

	/** Two servers may hold buckets of one name: caches tell them apart by endpoint (or AWS region). */
	identity(): string {
		return `s3 ${this.endpoint ?? `aws:${this.options.region || 'us-east-1'}`} ${this.bucket}/${this.prefix}`;
	}

	private fail(op: string, key: string | undefined, error: unknown): StorageError {
		const e = error as SdkError;
		const what = [e?.name, e?.message].filter(Boolean).join(': ') || String(error);
		const target = key ? `"${key}" in ${this.describe()}` : this.describe();
		if (e?.name === 'TimeoutError')
			return new StorageTimeoutError(`S3 ${op} timed out for ${target}: ${what}`, key, {
				cause: error,
			});
		const hint = virtualHostHint(
			error,
			this.bucket,
			this.options.forcePathStyle ?? false,
			this.endpoint,
		);
		const message = `S3 ${op} failed for ${target}: ${what}`;
		return new StorageError(hint ? `${message.replace(/\.?$/, '.')} ${hint}` : message, key, {
			cause: error,
		});
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		assertStorageKey(key);
		const ifNoneMatch = options.ifNoneMatch ? `"${options.ifNoneMatch}"` : undefined;
		try {
			const out = await this.client.send(
				new GetObjectCommand({
					Bucket: this.bucket,
					Key: this.prefix + key,
					IfNoneMatch: ifNoneMatch,
				}),
			);
			const body = await (
				out.Body as { transformToByteArray(): Promise<Uint8Array> }
			).transformToByteArray();
			return { body, version: unquote(out.ETag) };
		} catch (error) {
			if (ifNoneMatch && status(error) === 304)
				return { notModified: true, version: options.ifNoneMatch as string };
			if (isNotFound(error)) return null;
			throw this.fail('GetObject', key, error);
		}
	}

	async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<{ version: string }> {
		assertStorageKey(key);
		const conditional = options.ifVersion !== undefined;
		const support = conditional ? await this.conditionalWriteSupport() : undefined;
		const condition =
			options.ifVersion === null
				? { IfNoneMatch: '*' }
				: typeof options.ifVersion === 'string'
					? { IfMatch: support?.quoteIfMatch ? `"${options.ifVersion}"` : options.ifVersion }
					: {};
		try {
			const out = await this.client.send(
				new PutObjectCommand({
					Bucket: this.bucket,
					Key: this.prefix + key,
					Body: body,
					ContentType: options.contentType,
					...condition,
				}),
			);
			return { version: unquote(out.ETag) };
		} catch (error) {
			if (conditional && isConflict(error) && wasRetried(error)) {
				const version = await this.landed(key, body);
				if (version !== null) return { version };
			}
			if (conditional && (isConflict(error) || (options.ifVersion && isNotFound(error))))
				throw new ConflictError(`"${key}" changed since it was read`, key, { cause: error });
			throw this.fail('PutObject', key, error);
		}
	}

	/**
	 * After a conditional write the client sent again and the server refused: the first attempt may
	 * have landed (its answer lost), which made the condition fail for the second. Its version if the
	 * object holds these very bytes (ours), else null: then it is a real conflict. Without this, a
	 * caller would read its own write back as another writer's and apply its change twice.
	 */
	private async landed(key: string, body: Uint8Array): Promise<string | null> {
		const now = await this.get(key);
		return now && Buffer.from(now.body).equals(Buffer.from(body)) ? now.version : null;
	}

	async delete(key: string, options: DeleteOptions = {}): Promise<void> {
		assertStorageKey(key);
		if (options.ifVersion !== undefined || options.ifUnmodifiedSince !== undefined) {
			const now = await this.headObject(key);
			if (now && options.ifVersion !== undefined && now.version !== options.ifVersion)
				throw new ConflictError(`"${key}" changed since it was read`, key);
			if (now && options.ifUnmodifiedSince && now.lastModified > options.ifUnmodifiedSince)
				throw new ConflictError(
					`"${key}" was written again since ${options.ifUnmodifiedSince.toISOString()}`,
					key,
				);
		}
		try {
			await this.client.send(
				new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
			);
		} catch (error) {
			if (isNotFound(error)) return;
			throw this.fail('DeleteObject', key, error);
		}
	}

	/** Current version (ETag) of a key, or null; cheap freshness check before a delete. */
	async head(key: string): Promise<string | null> {
		return (await this.headObject(key))?.version ?? null;
	}

	private async headObject(key: string): Promise<{ version: string; lastModified: Date } | null> {
		assertStorageKey(key);
		try {
			const out = await this.client.send(
				new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + key }),
			);
			return { version: unquote(out.ETag), lastModified: out.LastModified ?? new Date(0) };
		} catch (error) {
			if (isNotFound(error)) return null;
			throw this.fail('HeadObject', key, error);
		}
	}

	/** The pages of a listing under `prefix` (with `/` as delimiter: the folders as common prefixes). */
	private async *pages(prefix: string, more: Omit<ListObjectsV2CommandInput, 'Bucket'> = {}) {
		let token: string | undefined;
		try {
			do {
				const page = await this.client.send(
					new ListObjectsV2Command({
						...more,
						Bucket: this.bucket,
						Prefix: prefix,
						ContinuationToken: token,
					}),
				);
				yield page;
				token = page.IsTruncated ? page.NextContinuationToken : undefined;
			} while (token);
		} catch (error) {
			throw this.fail('ListObjectsV2', undefined, error);
		}
	}

	async list(prefix: string): Promise<ListedObject[]> {
		const out: ListedObject[] = [];
		for await (const page of this.listPages(prefix)) out.push(...page);
		return out;
	}

	/** The listing one ListObjectsV2 page (up to 1,000 keys) at a time. */
	async *listPages(prefix: string): AsyncGenerator<ListedObject[]> {
		for await (const page of this.pages(this.prefix + prefix)) {
			const out: ListedObject[] = [];
			for (const o of page.Contents ?? []) {
				if (!o.Key || o.Key.startsWith(`${this.prefix}.llm-memory-probe/`)) continue;
				out.push({
					key: o.Key.slice(this.prefix.length),
					version: unquote(o.ETag),
					size: o.Size ?? 0,
					lastModified: o.LastModified ?? new Date(0),
				});
			}
			if (out.length > 0) yield out;
		}
	}

	/** The folders directly under `prefix` ("…/" or ""): the listing's common prefixes, page by page. */
	async listFolders(prefix: string, page: FolderPage = {}): Promise<string[]> {
		if (prefix !== '' && !prefix.endsWith('/'))
			throw new StorageError(`Not a folder to list: "${prefix}" does not end in "/"`, prefix);
		const from = this.prefix + prefix;
		const { after, limit } = page;
		// After every key of folder `after` (engine-made names, never above U+10FFFF).
		const StartAfter = after === undefined ? undefined : `${from}${after}/\u{10FFFF}`;
		const MaxKeys = limit && Math.min(1000, limit + 1);
		const out: string[] = [];
		for await (const listed of this.pages(from, { Delimiter: '/', StartAfter, MaxKeys })) {
			for (const p of listed.CommonPrefixes ?? []) {
				const name = p.Prefix?.slice(from.length, -1);
				if (name && `${from}${name}/` !== `${this.prefix}.llm-memory-probe/`) out.push(name);
			}
			if (limit !== undefined && out.length >= limit) return out.slice(0, limit);
		}
		return out;
	}

	/** Reaches the bucket (one small list) and checks conditional writes; for credential tests. */
	async checkAccess(): Promise<ConditionalWriteSupport> {
		try {
			await this.client.send(
				new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.prefix, MaxKeys: 1 }),
			);
		} catch (error) {
			throw this.fail('ListObjectsV2', undefined, error);
		}
		return this.conditionalWriteSupport();
	}

	/** Probes once per server, bucket and prefix (cached for the process); refuses unsafe servers. */
	async conditionalWriteSupport(): Promise<ConditionalWriteSupport> {
		const id = this.identity();
		let probe = probes.get(id);
		if (!probe) {
			probe = this.probe();
			probes.set(id, probe);
			probe.catch(() => probes.delete(id)); // a failed probe (outage) is retried next time
		}
		const support = await probe;
		if (!support.enforced) {
			const message =
				`The S3 server behind ${this.describe()} ignores conditional writes (If-None-Match / If-Match), ` +
				'so concurrent turns could overwrite each other';
			if (!this.options.allowUnsafeConditionalWrites)
				throw new UnsafeStorageError(
					`${message}. Use a server that enforces them (AWS S3, Ceph RGW) or explicitly allow unsafe writes.`,
				);
			(this.options.onWarning ?? defaultWarn)(
				`${message}; continuing because unsafe writes were explicitly allowed.`,
			);
		}
		return support;
	}

	private async probe(): Promise<ConditionalWriteSupport> {
		const Key = `${this.prefix}.llm-memory-probe/${randomUUID()}`;
		const put = (Body: string, extra: object) =>
			this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body, ...extra }));
		/** 'conflict' when the server enforced the condition; 'unsupported' when it refused the header. */
		const attempt = async (
			Body: string,
			extra: object,
		): Promise<'accepted' | 'conflict' | 'unsupported'> => {
			try {
				await put(Body, extra);
				return 'accepted';
			} catch (error) {
				if (isConflict(error)) return 'conflict';
				if (status(error) === 501 || status(error) === 400) return 'unsupported';
				throw error;
			}
		};
		const unsafe = { enforced: false, quoteIfMatch: true };
		try {
			await put('probe-1', {});
			if ((await attempt('probe-2', { IfNoneMatch: '*' })) !== 'conflict') return unsafe;
			if ((await attempt('probe-3', { IfMatch: `"${'0'.repeat(32)}"` })) !== 'conflict')
				return unsafe;
			// Which spelling of the ETag does the server accept for If-Match?
			const now = unquote(
				(await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }))).ETag,
			);
			if ((await attempt('probe-4', { IfMatch: `"${now}"` })) === 'accepted')
				return { enforced: true, quoteIfMatch: true };
			if ((await attempt('probe-5', { IfMatch: now })) === 'accepted')
				return { enforced: true, quoteIfMatch: false };
			return unsafe;
		} catch (error) {
			throw this.fail('conditional-write probe', undefined, error);
		} finally {
			await this.client
				.send(new DeleteObjectCommand({ Bucket: this.bucket, Key }))
				.catch(() => undefined);
		}
	}
}
