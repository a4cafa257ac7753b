import type { INodeProperties } from 'n8n-workflow';

import { ID_DEFINED_BELOW, ID_FROM_CHAT_TRIGGER, ON_LOCAL_DISK } from './display';
import type { Show } from './display';

/** Memory Mode: the two scopes (a node may add its own "none"). */
export const MEMORY_MODE_OPTIONS = [
	{
		name: 'Conversation',
		value: 'conversation',
		description:
			'One history per conversation, shared by every node of this workflow that uses it. Each node appends its own turn.',
	},
	{
		name: 'Node',
		value: 'node',
		description:
			'This node keeps its own history per conversation; other nodes never see it. Needs a conversation ID.',
	},
];

/** Conversation ID: from the Chat Trigger's sessionId, or defined below (n8n's own session-ID idiom). */
export function conversationIdProperties(show: Show): INodeProperties[] {
	return [
		{
			displayName: 'Conversation ID',
			name: 'conversationIdType',
			type: 'options',
			options: [
				{
					name: 'Connected Chat Trigger Node',
					value: 'fromInput',
					description:
						"Looks for an input field called 'sessionId' that is coming from a directly connected Chat Trigger",
				},
				{
					name: 'Define Below',
					value: 'customKey',
					description: 'Use an expression to reference data in previous nodes or enter static text',
				},
			],
			default: 'fromInput',
			displayOptions: { show },
		},
		{
			displayName: 'Conversation ID From Previous Node',
			name: 'conversationId',
			type: 'string',
			default: '={{ $json.sessionId }}',
			disabledOptions: { show: ID_FROM_CHAT_TRIGGER },
			displayOptions: { show: { ...show, ...ID_FROM_CHAT_TRIGGER } },
		},
		{
			displayName: 'Conversation ID',
			name: 'conversationId',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.userId }}',
			description: 'The ID that groups turns into one conversation (a string or a number)',
			displayOptions: { show: { ...show, ...ID_DEFINED_BELOW } },
		},
	];
}

/**
 * Storage: local disk or S3. Built when the node's description is, so the queue-mode notice follows
 * EXECUTIONS_MODE of the process that loads the node.
 */
export function storageProperties(show: Show): INodeProperties[] {
	const queueModeNotice: INodeProperties[] =
		process.env.EXECUTIONS_MODE === 'queue'
			? [
					{
						displayName:
							"n8n runs in queue mode: consecutive turns of one conversation run on different workers, and each worker's default folder is its own. Use S3 storage, or set Folder to one folder that the main process and every worker share on this machine (writers take a lock).",
						name: 'queueModeNotice',
						type: 'notice',
						default: '',
						displayOptions: { show: { ...ON_LOCAL_DISK, ...show } },
					},
				]
			: [];
	return [
		{
			displayName: 'Storage',
			name: 'storage',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'Local Disk',
					value: 'localDisk',
					description:
						'JSON files in a folder of the n8n user folder. Fine for a single n8n instance.',
				},
				{
					name: 'S3',
					value: 's3',
					description: 'AWS S3 or any S3-compatible server that supports conditional writes',
				},
			],
			default: 'localDisk',
			displayOptions: { show },
		},
		...queueModeNotice,
		{
			displayName: 'Folder',
			name: 'localFolder',
			type: 'string',
			default: '',
			placeholder: 'e.g. /data/llm-memory',
			description:
				'Where memory files live. Empty means "llm-memory" in the n8n user folder (~/.n8n/llm-memory).',
			displayOptions: { show: { ...show, ...ON_LOCAL_DISK } },
		},
	];
}

/** Options → Compress Stored Memory, the same in every node that stores memory. */
export const gzipOption: INodeProperties = {
	displayName: 'Compress Stored Memory',
	name: 'gzip',
	type: 'boolean',
	default: false,
	description: 'Whether to gzip memory documents (reading accepts both forms)',
};

/** Versioned data's JSON Schema, the same in LLM with Memory and the LLM Memory Manager. */
export const jsonSchemaOption: INodeProperties = {
	displayName: 'JSON Schema',
	name: 'jsonSchema',
	type: 'json',
	default: '',
	placeholder: 'e.g. {"type": "object", "required": ["inci"]}',
	description:
		'A JSON Schema (draft-07, 2019-09 or 2020-12) every saved version must satisfy. Data that breaks it is not saved: the error names each field.',
};

/** Options: n8n's collection of rarely used settings (shown always, or where `show` says). */
export function optionsCollection(options: INodeProperties[], show?: Show): INodeProperties {
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		...(show ? { displayOptions: { show } } : {}),
		options,
	};
}
