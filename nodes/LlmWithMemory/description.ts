import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_MAX_TOKEN_LIMIT } from '../../src';

export type MemoryMode = 'none' | 'conversation' | 'node';

const promptProperties: INodeProperties[] = [
	{
		displayName: 'Source for Prompt (User Message)',
		name: 'promptType',
		type: 'options',
		options: [
			{
				name: 'Connected Chat Trigger Node',
				value: 'auto',
				description: "Looks for an input field called 'chatInput' that is coming from a directly connected Chat Trigger",
			},
			{
				name: 'Define Below',
				value: 'define',
				description: 'Use an expression to reference data in previous nodes or enter static text',
			},
		],
		default: 'auto',
	},
	{
		displayName: 'Prompt (User Message)',
		name: 'text',
		type: 'string',
		required: true,
		default: '={{ $json.chatInput }}',
		typeOptions: { rows: 2 },
		disabledOptions: { show: { promptType: ['auto'] } },
		displayOptions: { show: { promptType: ['auto'] } },
	},
	{
		displayName: 'Prompt (User Message)',
		name: 'text',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Hello, how can you help me?',
		typeOptions: { rows: 2 },
		displayOptions: { show: { promptType: ['define'] } },
	},
	{
		displayName: 'System Message',
		name: 'systemMessage',
		type: 'string',
		default: '',
		placeholder: 'e.g. You are a helpful assistant',
		description: 'Instructions sent before the history on every call',
		typeOptions: { rows: 3 },
	},
];

const memoryProperties: INodeProperties[] = [
	{
		displayName: 'Memory Mode',
		name: 'memoryMode',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Conversation',
				value: 'conversation',
				description:
					'One history per conversation, shared by every node of this workflow that uses it. Each node appends its own turn.',
			},
			{
				name: 'Node',
				value: 'node',
				description: 'This node keeps its own history per conversation; other nodes never see it. Needs a conversation ID.',
			},
			{
				name: 'None',
				value: 'none',
				description: 'No history: every call stands alone',
			},
		],
		default: 'conversation',
	},
	{
		displayName: 'Conversation ID',
		name: 'conversationIdType',
		type: 'options',
		options: [
			{
				name: 'Connected Chat Trigger Node',
				value: 'fromInput',
				description: "Looks for an input field called 'sessionId' that is coming from a directly connected Chat Trigger",
			},
			{
				name: 'Define Below',
				value: 'customKey',
				description: 'Use an expression to reference data in previous nodes or enter static text',
			},
		],
		default: 'fromInput',
		displayOptions: { show: { memoryMode: ['conversation', 'node'] } },
	},
	{
		displayName: 'Conversation ID From Previous Node',
		name: 'conversationId',
		type: 'string',
		default: '={{ $json.sessionId }}',
		disabledOptions: { show: { conversationIdType: ['fromInput'] } },
		displayOptions: { show: { memoryMode: ['conversation', 'node'], conversationIdType: ['fromInput'] } },
	},
	{
		displayName: 'Conversation ID',
		name: 'conversationId',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.userId }}',
		description: 'The ID that groups turns into one conversation',
		displayOptions: { show: { memoryMode: ['conversation', 'node'], conversationIdType: ['customKey'] } },
	},
];

/** Only in queue mode, where each worker has its own disk. */
const queueModeNotice: INodeProperties[] =
	process.env.EXECUTIONS_MODE === 'queue'
		? [
				{
					displayName:
						'n8n runs in queue mode: Local Disk memory is not shared across workers, so turns of one conversation can land on different disks. Use S3 storage.',
					name: 'queueModeNotice',
					type: 'notice',
					default: '',
					displayOptions: { show: { storage: ['localDisk'], memoryMode: ['conversation', 'node'] } },
				},
			]
		: [];

const storageProperties: INodeProperties[] = [
	{
		displayName: 'Storage',
		name: 'storage',
		type: 'options',
		noDataExpression: true,
		options: [
			{
				name: 'Local Disk',
				value: 'localDisk',
				description: 'JSON files in a folder of the n8n user folder. Fine for a single n8n instance.',
			},
			{
				name: 'S3',
				value: 's3',
				description: 'AWS S3 or any S3-compatible server that supports conditional writes',
			},
		],
		default: 'localDisk',
		displayOptions: { show: { memoryMode: ['conversation', 'node'] } },
	},
	...queueModeNotice,
	{
		displayName: 'Folder',
		name: 'localFolder',
		type: 'string',
		default: '',
		placeholder: 'e.g. /data/llm-memory',
		description: 'Where memory files live. Empty means "llm-memory" in the n8n user folder (~/.n8n/llm-memory).',
		displayOptions: { show: { memoryMode: ['conversation', 'node'], storage: ['localDisk'] } },
	},
];

const filesOption: INodeProperties = {
	displayName: 'Files (Binary Properties)',
	name: 'binaryPropertyNames',
	type: 'string',
	default: 'data*',
	placeholder: 'e.g. data0, data1 or data*',
	description:
		'Binary properties to send with the message (and keep in memory), comma-separated; * matches any suffix. Chat Trigger uploads arrive as data0, data1, …. Not set: the item’s images.',
};

const optionsCollection: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [
		{
			displayName: 'Compress Stored Memory',
			name: 'gzip',
			type: 'boolean',
			default: false,
			description: 'Whether to gzip memory documents (reading accepts both forms)',
		},
		filesOption,
		{
			displayName: 'Max History Tokens',
			name: 'maxHistoryTokens',
			type: 'number',
			default: DEFAULT_MAX_TOKEN_LIMIT,
			typeOptions: { minValue: 0 },
			description: 'Token budget for the history. The oldest whole turns are dropped first.',
		},
		{
			displayName: 'Message ID',
			name: 'messageId',
			type: 'string',
			default: '',
			description: 'ID for this turn. Empty means a random UUID. Must be new in this memory.',
		},
		{
			displayName: 'Parent Message ID',
			name: 'parentMessageId',
			type: 'string',
			default: '',
			description:
				'Continue from this earlier turn (its Message ID) instead of the newest one, e.g. to regenerate an answer. History then follows that turn’s thread.',
		},
		{
			displayName: 'Window (Turns)',
			name: 'window',
			type: 'number',
			default: 10,
			typeOptions: { minValue: 1 },
			description: 'Most past turns to send, on top of the token budget',
		},
	],
	displayOptions: { show: { memoryMode: ['conversation', 'node'] } },
};

const noMemoryOptions: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [filesOption],
	displayOptions: { show: { memoryMode: ['none'] } },
};

export const properties: INodeProperties[] = [
	...promptProperties,
	...memoryProperties,
	...storageProperties,
	optionsCollection,
	noMemoryOptions,
];
