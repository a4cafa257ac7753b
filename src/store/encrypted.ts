// Encryption at rest: a storage that seals every object it writes with AES-256-GCM and opens what it
// reads, over any other storage. Keys (paths) stay readable, so listing, pruning and compare-and-swap
// work unchanged; bodies are sealed whole, so every kind of object (chat documents, sealed segments,
// files, versions, Memory Base logs, vectors and indexes) is covered by one mechanism.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

import { CorruptDocumentError, EncryptionKeyError, InvalidOptionError } from '../errors';
import { folderNames, keyPages, listedPages, storageIdentity } from './storage';
import type {
	DeleteOptions,
	FolderPage,
	GetOptions,
	ListedObject,
	ListOptions,
	MemoryStorage,
	NotModified,
	PutOptions,
	StoredObject,
} from './storage';

/**
 * Envelope: MAGIC, key-ID length (1 byte), key ID (ASCII), nonce (12 bytes), tag (16 bytes),
 * ciphertext. The authenticated data is MAGIC, the key ID and the object's storage key, so neither the
 * key ID nor the place of an object can be changed without the tag failing.
 */
const MAGIC = Buffer.from('LLMMEMENC1\0');
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** One 256-bit key and the ID objects sealed with it name. */
export interface EncryptionKey {
	id: string;
	key: Buffer;
}

/** The ID of a key: not secret, derived so two different keys never share one (first 64 bits of a hash). */
export function encryptionKeyId(key: Buffer): string {
	return `k${createHash('sha256').update('llm-memory key id\0').update(key).digest('hex').slice(0, 16)}`;
}

/**
 * A key as written in a credential: 64 hex digits or the base64 of 32 bytes. Anything else (wrong
 * length, wrong encoding) is an InvalidOptionError naming `field`, never a weaker key.
 */
export function parseEncryptionKey(text: string, field = 'key'): EncryptionKey {
	const trimmed = text.trim();
	let key: Buffer | undefined;
	if (/^[0-9a-fA-F]{64}$/.test(trimmed)) key = Buffer.from(trimmed, 'hex');
	else if (/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) key = Buffer.from(trimmed, 'base64');
	if (!key || key.length !== 32)
		throw new InvalidOptionError(
			field,
			'must be a 256-bit key: 64 hexadecimal digits, or 44 characters of base64 (e.g. the output of "openssl rand -base64 32")',
		);
	return { id: encryptionKeyId(key), key };
}

/** Whether stored bytes are an envelope (else they are a plain object, readable as they are). */
export function isSealed(body: Uint8Array): boolean {
	return (
		body.byteLength >= MAGIC.length &&
		Buffer.from(body.buffer, body.byteOffset, MAGIC.length).equals(MAGIC)
	);
}

function aad(keyId: string, objectKey: string): Buffer {
	return Buffer.concat([
		MAGIC,
		Buffer.from(keyId, 'ascii'),
		Buffer.from([0]),
		Buffer.from(objectKey, 'utf8'),
	]);
}

export function seal(k: EncryptionKey, objectKey: string, plain: Uint8Array): Buffer {
	const nonce = randomBytes(NONCE_BYTES);
	const cipher = createCipheriv('aes-256-gcm', k.key, nonce);
	cipher.setAAD(aad(k.id, objectKey));
	const body = Buffer.concat([cipher.update(plain), cipher.final()]);
	const id = Buffer.from(k.id, 'ascii');
	return Buffer.concat([MAGIC, Buffer.from([id.length]), id, nonce, cipher.getAuthTag(), body]);
}

/** The key ID an envelope names; a truncated envelope is corrupt. */
export function sealedKeyId(objectKey: string, body: Uint8Array): string {
	const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
	const idLength = b[MAGIC.length];
	const start = MAGIC.length + 1;
	if (idLength === undefined || b.length < start + idLength + NONCE_BYTES + TAG_BYTES)
		throw new CorruptDocumentError(objectKey, 'the encrypted object is cut short');
	return b.subarray(start, start + idLength).toString('ascii');
}

export function open(keys: readonly EncryptionKey[], objectKey: string, body: Uint8Array): Buffer {
	const id = sealedKeyId(objectKey, body);
	const k = keys.find((x) => x.id === id);
	if (!k) throw new EncryptionKeyError(objectKey, id, keys.length > 0);
	const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
	let at = MAGIC.length + 1 + id.length;
	const nonce = b.subarray(at, (at += NONCE_BYTES));
	const tag = b.subarray(at, (at += TAG_BYTES));
	const decipher = createDecipheriv('aes-256-gcm', k.key, nonce);
	decipher.setAAD(aad(id, objectKey));
	decipher.setAuthTag(tag);
	try {
		return Buffer.concat([decipher.update(b.subarray(at)), decipher.final()]);
	} catch {
		// GCM authentication failed: changed bytes, or an object moved from another key.
		throw new CorruptDocumentError(
			objectKey,
			`the encrypted object fails its integrity check under key ${id} (changed, or moved from another place)`,
		);
	}
}

export interface EncryptionOptions {
	/** The key new writes use. Undefined: nothing is encrypted, and sealed objects cannot be read. */
	current?: EncryptionKey;
	/** Older keys, for reading only (after a rotation). */
	older?: readonly EncryptionKey[];
}

/**
 * Storage that seals on write and opens on read. Plain objects stay readable (an upgrade never
 * strands data) and are sealed the next time they are written. Without a current key it writes
 * plainly, and a sealed object is an EncryptionKeyError naming its key ID, never "empty".
 * Its identity carries the key IDs, so in-process caches never share an opened object with a
 * storage that could not open it.
 */
export class EncryptedStorage implements MemoryStorage {
	private readonly keys: EncryptionKey[];

	constructor(
		readonly inner: MemoryStorage,
		private readonly options: EncryptionOptions,
	) {
		this.keys = [...(options.current ? [options.current] : []), ...(options.older ?? [])];
	}

	/** The key new writes use (undefined: none). */
	get currentKeyId(): string | undefined {
		return this.options.current?.id;
	}

	describe(): string {
		const c = this.options.current;
		return c ? `${this.inner.describe()} (encrypted, key ${c.id})` : this.inner.describe();
	}

	identity(): string {
		const ids = this.keys.map((k) => k.id).join(',');
		return `encrypted[${ids}] ${storageIdentity(this.inner)}`;
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		const got = await this.inner.get(key, options);
		if (!got || 'notModified' in got || !isSealed(got.body)) return got;
		return { body: open(this.keys, key, got.body), version: got.version };
	}

	put(key: string, body: Uint8Array, options?: PutOptions): Promise<{ version: string }> {
		const c = this.options.current;
		return this.inner.put(key, c ? seal(c, key, body) : body, options);
	}

	delete(key: string, options?: DeleteOptions): Promise<void> {
		return this.inner.delete(key, options);
	}

	list(prefix: string): Promise<ListedObject[]> {
		return this.inner.list(prefix);
	}

	listPages(prefix: string, options?: ListOptions): AsyncIterable<ListedObject[]> {
		return listedPages(this.inner, prefix, options);
	}

	listKeys(prefix: string): AsyncIterable<string[]> {
		return keyPages(this.inner, prefix);
	}

	listFolders(prefix: string, page?: FolderPage): Promise<string[]> {
		return folderNames(this.inner, prefix, page);
	}

	sweep(prefix: string, olderThanMs: number): Promise<string[]> {
		return this.inner.sweep?.(prefix, olderThanMs) ?? Promise.resolve([]);
	}
}
