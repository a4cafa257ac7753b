import type { INodeProperties } from 'n8n-workflow';

import { ID_DEFINED_BELOW, ID_FROM_CHAT_TRIGGER, ON_LOCAL_DISK } from './display';
import type { Show } from './display';

/** Memory Mode: the two scopes (a node may add its own "none"). */
export const MEMORY_MODE_OPTIONS = [
	{
		name: 'Conversation',
		value: 'conversation',
		description:
			'One history per session, shared by every node of this workflow that uses it. Each node appends its own turn.',
	},
	{
		name: 'Node',
		value: 'node',
		description:
			'This node keeps its own history per session; other nodes never see it. Needs a session ID.',
	},
];

/** What each memory mode does, shown under Memory Mode as n8n's memory panels explain scoping. */
export function memoryModeNotices(show: Show, noSessionId: string): INodeProperties[] {
	const notice = (mode: string, text: string): INodeProperties => ({
		displayName: text,
		name: `${mode}ModeNotice`,
		type: 'notice',
		default: '',
		displayOptions: { show: { ...show, memoryMode: [mode] } },
	});
	return [
		notice(
			'conversation',
			`Conversation: one history per session ID, shared by every node of this workflow in Conversation mode; each node adds its own turn. ${noSessionId}`,
		),
		notice(
			'node',
			'Node: this node keeps a history of its own per session ID, which no other node sees. Without a session ID it stops with an error.',
		),
	];
}

/** Session ID: from the Chat Trigger's sessionId, or defined below (n8n's own session-ID idiom). */
export function sessionIdProperties(show: Show): INodeProperties[] {
	return [
		{
			displayName: 'Session ID',
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
			displayName: 'Session ID From Previous Node',
			name: 'conversationId',
			type: 'string',
			default: '={{ $json.sessionId }}',
			disabledOptions: { show: ID_FROM_CHAT_TRIGGER },
			displayOptions: { show: { ...show, ...ID_FROM_CHAT_TRIGGER } },
		},
		{
			displayName: 'Session ID',
			name: 'conversationId',
			type: 'string',
			default: '',
			placeholder: 'e.g. {{ $json.userId }}',
			description:
				'The ID that groups turns into one session (a string or a number): a user ID from a webhook, a ticket number, …',
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
		{
			displayName: 'Encryption',
			name: 'encryption',
			type: 'options',
			noDataExpression: true,
			// Options, not a boolean: n8n 2.8's editor fails to lay out the panel when a credential's
			// display condition names a boolean parameter.
			options: [
				{
					name: 'None',
					value: 'none',
					description: 'Memory is written as plain JSON; encrypted memory cannot be read',
				},
				{
					name: 'Encrypt with a Key',
					value: 'key',
					description:
						'AES-256-GCM with the key of an LLM Memory Encryption Key credential; reading encrypted memory needs it too. Names and sizes of stored objects stay visible; memory written without encryption stays readable.',
				},
			],
			default: 'none',
			description: 'Whether to encrypt what this node writes',
			displayOptions: { show },
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
