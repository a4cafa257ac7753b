import type {
	ICredentialsDecrypted,
	ICredentialTestFunctions,
	INodeCredentialTestResult,
} from 'n8n-workflow';

import { s3Storage } from './storage';

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
