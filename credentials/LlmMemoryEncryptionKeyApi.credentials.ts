import type { ICredentialType, Icon, INodeProperties } from 'n8n-workflow';

/**
 * The key memory is encrypted with (Storage → Encryption). n8n keeps credentials encrypted and scoped
 * to their project, so a workflow without this credential cannot read the memory, whatever IDs it
 * knows. Tested by the nodes (the key's length and encoding).
 */
export class LlmMemoryEncryptionKeyApi implements ICredentialType {
	name = 'llmMemoryEncryptionKeyApi';

	displayName = 'LLM Memory Encryption Key';

	icon: Icon = { light: 'file:llmMemoryKey.svg', dark: 'file:llmMemoryKey.dark.svg' };

	documentationUrl =
		'https://github.com/n8n-nodes-llm-memory/n8n-nodes-llm-memory/blob/main/docs/encryption.md';

	properties: INodeProperties[] = [
		// The key is the secret itself: n8n must mask it.
		// eslint-disable-next-line @n8n/community-nodes/credential-unnecessary-password
		{
			displayName: 'Key',
			name: 'key',
			type: 'string',
			typeOptions: { password: true },
			required: true,
			default: '',
			placeholder: 'e.g. the output of: openssl rand -base64 32',
			description:
				'A 256-bit key: 44 characters of base64, or 64 hexadecimal digits. New writes are encrypted with it.',
		},
		// eslint-disable-next-line @n8n/community-nodes/credential-unnecessary-password
		{
			displayName: 'Older Keys (Read Only)',
			name: 'olderKeys',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			description:
				'Keys used before a rotation, comma-separated: memory encrypted with them stays readable, and is encrypted with the current key when next written (or by the LLM Memory Manager’s Re-encrypt).',
		},
	];
}
