// Shared by the sealed-log tests: a storage that records every write, and small sealing limits.
import { StorageError } from '../../../src/internal';
import type {
	GetOptions,
	ListedObject,
	LogOptions,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredObject,
	StoredMessage,
} from '../../../src/internal';
import { InstrumentedStorage, tempDisk } from '../../support/storages';

/** Limits small enough that a few turns seal and cascade. */
export const SMALL: Partial<LogOptions> = {
	tailMessages: 6,
	keepMessages: 4,
	minMessages: 2,
	fanOut: 2,
};

export interface PutRecord {
	key: string;
	bytes: number;
	ifVersion: string | null | undefined;
	body: Uint8Array;
}

/** Records every put (in order) and every get key; can fail a put after it was carried out. */
export class RecordingStorage implements MemoryStorage {
	puts: PutRecord[] = [];
	gets: string[] = [];
	/** Throw a StorageError after the next N successful puts of keys matching this (a lost response). */
	loseResponse?: { pattern: RegExp; times: number };

	constructor(readonly inner: MemoryStorage) {}

	describe(): string {
		return `recording ${this.inner.describe()}`;
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		this.gets.push(key);
		return this.inner.get(key, options);
	}

	async put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		const out = await this.inner.put(key, body, options);
		this.puts.push({ key, bytes: body.byteLength, ifVersion: options?.ifVersion, body });
		if (this.loseResponse && this.loseResponse.times > 0 && this.loseResponse.pattern.test(key)) {
			this.loseResponse.times--;
			throw new StorageError(`simulated lost response writing "${key}"`, key);
		}
		return out;
	}

	delete(key: string, options?: { ifVersion?: string }): Promise<void> {
		return this.inner.delete(key, options);
	}

	list(prefix: string): Promise<ListedObject[]> {
		return this.inner.list(prefix);
	}

	sweep(prefix: string, olderThanMs: number): Promise<string[]> {
		return this.inner.sweep?.(prefix, olderThanMs) ?? Promise.resolve([]);
	}
}

export function setup() {
	const disk = tempDisk();
	const recording = new RecordingStorage(disk);
	const storage = new InstrumentedStorage(recording);
	return { disk, recording, storage };
}

export const KEY = 'conversation_memory/wf/conv.json';

/** The stored head (raw JSON). */
export async function rawHead(storage: MemoryStorage, key = KEY): Promise<Record<string, any>> {
	const got = await storage.get(key);
	if (!got) throw new Error(`no head at ${key}`);
	return JSON.parse(Buffer.from(got.body).toString('utf8'));
}

export const idsOf = (messages: readonly StoredMessage[]) => messages.map((m) => m.message_id);
