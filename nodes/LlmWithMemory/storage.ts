import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import * as path from 'node:path';

import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { LocalDiskStorage, S3Storage } from '../../src';
import type { MemoryStorage } from '../../src';

/** n8n's user folder, as n8n itself resolves it. */
function n8nFolder(): string {
	return path.join(process.env.N8N_USER_FOLDER || homedir(), '.n8n');
}

/** The default, or a folder the workflow names (relative paths are taken from the n8n folder). */
export function localFolder(configured: string): string {
	if (!configured.trim()) return path.join(n8nFolder(), 'llm-memory');
	return path.resolve(n8nFolder(), configured.trim());
}

const cache = new Map<string, MemoryStorage>();

/** One storage (and S3 client, and conditional-write probe) per configuration per process. */
function cached(config: object, make: () => MemoryStorage): MemoryStorage {
	const id = createHash('sha256').update(JSON.stringify(config)).digest('hex');
	let s = cache.get(id);
	if (!s) {
		s = make();
		cache.set(id, s);
	}
	return s;
}

export function localDiskStorage(folder: string): MemoryStorage {
	const root = localFolder(folder);
	return cached({ disk: root }, () => new LocalDiskStorage({ root }));
}

export function s3Storage(c: ICredentialDataDecryptedObject, onWarning?: (m: string) => void): S3Storage {
	const options = {
		bucket: String(c.bucket ?? ''),
		prefix: String(c.keyPrefix ?? ''),
		region: String(c.region || 'us-east-1'),
		endpoint: c.endpoint ? String(c.endpoint) : undefined,
		forcePathStyle: c.forcePathStyle === true,
		credentials: { accessKeyId: String(c.accessKeyId ?? ''), secretAccessKey: String(c.secretAccessKey ?? '') },
		allowUnsafeConditionalWrites: c.allowUnsafeConditionalWrites === true,
	};
	return cached({ s3: options }, () => new S3Storage({ ...options, onWarning })) as S3Storage;
}
