import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

import { ConflictError, LocalDiskStorage, StorageError } from '../../src/internal';
import type {
	GetOptions,
	ListedObject,
	MemoryOptions,
	MemoryStorage,
	NotModified,
	PromptMessage,
	PutOptions,
	StoredObject,
} from '../../src/internal';

export function tempDir(tag = 'llm-memory'): string {
	return mkdtempSync(path.join(tmpdir(), `${tag}-`));
}

export function tempDisk(): LocalDiskStorage {
	return new LocalDiskStorage({ root: tempDir() });
}

type Fault = 'outage' | 'conflict' | 'write-then-conflict';

/** Wraps a real storage: counts calls and injects faults on demand. */
/** `inner` with each get passed through `around`, which reads the object with `read` (when it does). */
export function aroundGets(
	inner: MemoryStorage,
	around: (key: string, read: () => Promise<unknown>) => Promise<unknown>,
): MemoryStorage {
	return new Proxy(inner, {
		get(target, prop, receiver) {
			const value: unknown = Reflect.get(target, prop, receiver);
			if (typeof value !== 'function') return value;
			const fn = value as (...args: unknown[]) => Promise<unknown>;
			if (prop !== 'get') return fn.bind(target);
			return (key: string, ...rest: unknown[]) => around(key, () => fn.call(target, key, ...rest));
		},
	});
}

export class InstrumentedStorage implements MemoryStorage {
	calls = { get: 0, put: 0, delete: 0, list: 0 };
	/** get() calls answered "not modified" (the body was not read). */
	notModified = 0;
	faults: { get: Fault[]; put: Fault[] } = { get: [], put: [] };
	/** Fail get() for keys matching this pattern. */
	failGetFor?: RegExp;

	constructor(readonly inner: MemoryStorage) {}

	describe(): string {
		return `instrumented ${this.inner.describe()}`;
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		this.calls.get++;
		if (this.faults.get.shift() === 'outage' || this.failGetFor?.test(key))
			throw new StorageError(`simulated outage reading "${key}"`, key);
		const got = await this.inner.get(key, options);
		if (got && 'notModified' in got) this.notModified++;
		return got;
	}

	async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		this.calls.put++;
		const fault = this.faults.put.shift();
		if (fault === 'outage') throw new StorageError(`simulated outage writing "${key}"`, key);
		if (fault === 'conflict') throw new ConflictError('simulated conflict', key);
		const out = await this.inner.put(key, body, options);
		if (fault === 'write-then-conflict') throw new ConflictError('simulated lost response', key);
		return out;
	}

	async delete(key: string, options?: { ifVersion?: string }): Promise<void> {
		this.calls.delete++;
		return this.inner.delete(key, options);
	}

	async list(prefix: string): Promise<ListedObject[]> {
		this.calls.list++;
		return this.inner.list(prefix);
	}
}

/** A memory test's usual setup: an instrumented temp disk and memory options on it. */
export function memorySetup(extra: Partial<MemoryOptions> = {}) {
	const disk = tempDisk();
	const storage = new InstrumentedStorage(disk);
	const options: MemoryOptions = { storage, model: 'gpt-4o-mini', ...extra };
	return { disk, storage, options };
}

/** Prompt messages as "role:content" lines ("[parts]" for multimodal content), for assertions. */
export const promptText = (messages: PromptMessage[]) =>
	messages.map((m) => `${m.role}:${typeof m.content === 'string' ? m.content : '[parts]'}`);
