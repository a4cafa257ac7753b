import { homedir } from 'node:os';
import * as path from 'node:path';

import { S3Client } from '@aws-sdk/client-s3';
import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	ISupplyDataFunctions,
} from 'n8n-workflow';

import { BoundedCache } from '../../src/common/bounded-cache';
import { EncryptedStorage, parseEncryptionKey } from '../../src/store/encrypted';
import { LocalDiskStorage } from '../../src/store/local-disk';
import { S3Storage } from '../../src/store/s3';
import type { EncryptionKey } from '../../src/store/encrypted';
import type { MemoryStorage } from '../../src/store/storage';

/** n8n's user folder, as n8n itself resolves it. */
function n8nFolder(): string {
	return path.join(process.env.N8N_USER_FOLDER || homedir(), '.n8n');
}

/** The default, or a folder the workflow names (relative paths are taken from the n8n folder). */
export function localFolder(configured: string): string {
	if (!configured.trim()) return path.join(n8nFolder(), 'llm-memory');
	return path.resolve(n8nFolder(), configured.trim());
}

// Disk storages keep an in-process write queue per file, so one per folder; S3 clients hold sockets.
// Neither holds a warning handler: that comes from the caller each time (a credential test must not
// decide where a workflow's warnings go).
const disks = new BoundedCache<LocalDiskStorage>({ name: 'disk storages', maxEntries: 64 });
const s3Clients = new BoundedCache<S3Client>({
	name: 'S3 clients',
	maxEntries: 16,
	onEvict: (c) => c.destroy(),
});

export function localDiskStorage(folder: string): LocalDiskStorage {
	const root = localFolder(folder);
	return disks.getOrSet(root, () => new LocalDiskStorage({ root }));
}

export function s3Storage(
	c: ICredentialDataDecryptedObject,
	onWarning?: (m: string) => void,
): S3Storage {
	const options = {
		bucket: String(c.bucket ?? ''),
		prefix: String(c.keyPrefix ?? ''),
		region: String(c.region || 'us-east-1'),
		endpoint: c.endpoint ? String(c.endpoint) : undefined,
		forcePathStyle: c.forcePathStyle === true,
		credentials: {
			accessKeyId: String(c.accessKeyId ?? ''),
			secretAccessKey: String(c.secretAccessKey ?? ''),
		},
		allowUnsafeConditionalWrites: c.allowUnsafeConditionalWrites === true,
	};
	// The client depends on where and who; the key is only used in memory, never logged.
	const clientId = JSON.stringify([
		options.endpoint,
		options.region,
		options.forcePathStyle,
		options.credentials,
	]);
	const client = s3Clients.getOrSet(clientId, () => new S3Storage(options).client);
	return new S3Storage({ ...options, client, onWarning });
}

/** The keys of an LLM Memory Encryption Key credential; a malformed one is an error naming its field. */
export function encryptionKeys(c: ICredentialDataDecryptedObject): {
	current: EncryptionKey;
	older: EncryptionKey[];
} {
	const older = String(c.olderKeys ?? '')
		.split(/[\s,]+/)
		.filter(Boolean)
		.map((k, i) => parseEncryptionKey(k, `older key ${i + 1}`));
	return { current: parseEncryptionKey(String(c.key ?? ''), 'key'), older };
}

/** The storage an item's settings name (Local Disk by default). */
export async function storageFor(
	ctx: IExecuteFunctions | ISupplyDataFunctions,
	itemIndex: number,
): Promise<MemoryStorage> {
	let inner: MemoryStorage;
	if (ctx.getNodeParameter('storage', itemIndex, 'localDisk') === 's3') {
		const credentials = await ctx.getCredentials('llmMemoryS3Api', itemIndex);
		inner = s3Storage(credentials, (m) => ctx.logger.warn(m));
	} else inner = localDiskStorage(ctx.getNodeParameter('localFolder', itemIndex, '') as string);
	// Without Encryption the wrapper writes plainly, and an encrypted object is an error naming its key.
	if (ctx.getNodeParameter('encryption', itemIndex, 'none') !== 'key')
		return new EncryptedStorage(inner, {});
	const keys = encryptionKeys(await ctx.getCredentials('llmMemoryEncryptionKeyApi', itemIndex));
	return new EncryptedStorage(inner, keys);
}
