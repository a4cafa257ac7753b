// The S3 credential's Test button, and S3 errors at run time, when the bucket's virtual-host name
// (<bucket>.<host>, used while Force Path Style is off) does not resolve: the message says to turn on
// Force Path Style. `.invalid` never resolves (RFC 2606), so no server is needed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import type { ICredentialDataDecryptedObject, ICredentialTestFunctions } from 'n8n-workflow';

import { llmMemoryS3ApiTest } from '../../../nodes/shared/credential-test';
import { s3Storage } from '../../../nodes/shared/storage';

const ENDPOINT = 'http://no-such-host.invalid:9000';
const credential = (forcePathStyle: boolean): ICredentialDataDecryptedObject => ({
	endpoint: ENDPOINT,
	region: 'us-east-1',
	bucket: 'memory',
	accessKeyId: 'key',
	secretAccessKey: 'secret',
	forcePathStyle,
});

const test = (data: ICredentialDataDecryptedObject) =>
	llmMemoryS3ApiTest.call({} as ICredentialTestFunctions, {
		id: 'c1',
		name: 'S3',
		type: 'llmMemoryS3Api',
		data,
	});

const HINT =
	/The bucket's virtual-host name memory\.no-such-host\.invalid does not resolve: .* Turn on Force Path Style to send them to http:\/\/no-such-host\.invalid:9000\/memory instead/;

describe('S3 credential test: a virtual-host name that does not resolve', () => {
	it(
		'Force Path Style off: the test fails, suggesting to turn it on',
		{ timeout: 30_000 },
		async () => {
			const result = await test(credential(false));
			assert.equal(result.status, 'Error');
			assert.match(result.message, /ENOTFOUND memory\.no-such-host\.invalid\. /);
			assert.match(result.message, HINT);
		},
	);

	it(
		'Force Path Style on: the host itself does not resolve, and no such hint',
		{ timeout: 30_000 },
		async () => {
			const result = await test(credential(true));
			assert.equal(result.status, 'Error');
			assert.match(result.message, /ENOTFOUND no-such-host\.invalid$/);
			assert.doesNotMatch(result.message, /Force Path Style/);
		},
	);

	it('any S3 error at run time carries the hint too', { timeout: 30_000 }, async () => {
		const storage = s3Storage(credential(false));
		await assert.rejects(storage.get('conversation_memory/w/s.json'), (error: Error) => {
			assert.match(error.message, /^S3 GetObject failed for "conversation_memory\/w\/s\.json"/);
			assert.match(error.message, HINT);
			return true;
		});
	});
});
