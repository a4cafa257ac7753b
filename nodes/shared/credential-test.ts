import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { parseEncryptionKey } from '../../src/store/encrypted';
import { encryptionKeys, s3Storage } from './storage';

/** The LLM Memory S3 Storage credential's Test button: reach the bucket and check conditional writes. */
export async function llmMemoryS3ApiTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	try {
		const storage = s3Storage(credential.data ?? {});
		const support = await storage.checkAccess();
		const quoting = support.quoteIfMatch ? 'quoted' : 'unquoted';
		return {
			status: 'OK',
			message: `Reached ${storage.describe()}; conditional writes are enforced (${quoting} ETags)`,
		};
	} catch (error) {
		return { status: 'Error', message: (error as Error).message };
	}
}

/** The LLM Memory Encryption Key credential's Test button: each key's length and encoding. */
export async function llmMemoryEncryptionKeyApiTest(
	this: ICredentialTestFunctions,
	credential: ICredentialsDecrypted,
): Promise<INodeCredentialTestResult> {
	try {
		const { current, older } = encryptionKeys(credential.data ?? {});
		const also = older.length
			? ` (and ${older.length} older key${older.length > 1 ? 's' : ''} for reading)`
			: '';
		return { status: 'OK', message: `A valid 256-bit key, ID ${current.id}${also}` };
	} catch (error) {
		return { status: 'Error', message: (error as Error).message };
	}
}

/** Every storage credential's test, for each node's methods.credentialTest. */
export const storageCredentialTests = { llmMemoryS3ApiTest, llmMemoryEncryptionKeyApiTest };

export { parseEncryptionKey };
