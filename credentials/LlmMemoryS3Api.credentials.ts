import type { ICredentialType, Icon, INodeProperties } from 'n8n-workflow';

/** Where LLM with Memory keeps its documents on S3 or an S3-compatible server. Tested by the node. */
export class LlmMemoryS3Api implements ICredentialType {
	name = 'llmMemoryS3Api';

	displayName = 'LLM Memory S3 Storage';

	icon: Icon = { light: 'file:llmMemoryS3.svg', dark: 'file:llmMemoryS3.dark.svg' };

	documentationUrl =
		'https://github.com/n8n-nodes-llm-memory/n8n-nodes-llm-memory/blob/main/docs/storage.md';

	properties: INodeProperties[] = [
		{
			displayName: 'Endpoint',
			name: 'endpoint',
			type: 'string',
			default: '',
			placeholder: 'e.g. https://s3.eu-central-1.amazonaws.com or http://127.0.0.1:7480',
			description:
				'Leave empty for AWS S3. Set it for S3-compatible servers (Ceph RGW, MinIO, R2 …).',
		},
		{
			displayName: 'Region',
			name: 'region',
			type: 'string',
			default: 'us-east-1',
		},
		{
			displayName: 'Bucket',
			name: 'bucket',
			type: 'string',
			required: true,
			default: '',
		},
		{
			displayName: 'Access Key ID',
			name: 'accessKeyId',
			type: 'string',
			required: true,
			default: '',
		},
		{
			displayName: 'Secret Access Key',
			name: 'secretAccessKey',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
		},
		{
			displayName: 'Force Path Style',
			name: 'forcePathStyle',
			type: 'boolean',
			default: false,
			description:
				'Whether to address the bucket as endpoint/bucket instead of bucket.endpoint (needed by most S3-compatible servers)',
		},
		{
			displayName: 'Key Prefix',
			name: 'keyPrefix',
			type: 'string',
			default: '',
			placeholder: 'e.g. n8n-memory/',
			description: 'Folder inside the bucket for all memory documents',
		},
		{
			displayName: 'Allow Servers Without Conditional Writes',
			name: 'allowUnsafeConditionalWrites',
			type: 'boolean',
			default: false,
			description:
				'Whether to accept a server that ignores If-Match / If-None-Match. Concurrent turns can then overwrite each other. Leave off unless you accept that risk.',
		},
	];
}
