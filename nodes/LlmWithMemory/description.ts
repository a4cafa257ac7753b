import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_MAX_TOKEN_LIMIT } from '../../src/history/truncate';
import { DEFAULT_MAX_TOKENS_PER_FILE } from '../../src/prompt/file-kinds';
import { MAIN_BRANCH } from '../../src/snapshots/types';
import {
	PROMPT_DEFINED_BELOW,
	PROMPT_FROM_CHAT_TRIGGER,
	WITH_MEMORY,
	WITHOUT_MEMORY,
} from '../shared/display';
import {
	sessionIdProperties,
	gzipOption,
	jsonSchemaOption,
	MEMORY_MODE_OPTIONS,
	memoryModeNotices,
	optionsCollection,
	storageProperties,
} from '../shared/descriptions';
import { factsProperties } from '../shared/facts/properties';
import { longTermProperties } from '../shared/long-term/properties';
import { expireAfterDaysOption, keepLastVersionsOption } from '../shared/retention';
import { historyOverflowField, summaryOptions } from '../shared/summary';
import type { ScopeMode } from '../shared/memory-scope';

export type MemoryMode = 'none' | ScopeMode;

const promptProperties: INodeProperties[] = [
	{
		displayName: 'Source for Prompt (User Message)',
		name: 'promptType',
		type: 'options',
		options: [
			{
				name: 'Connected Chat Trigger Node',
				value: 'auto',
				description:
					"Looks for an input field called 'chatInput' that is coming from a directly connected Chat Trigger",
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
		disabledOptions: { show: PROMPT_FROM_CHAT_TRIGGER },
		displayOptions: { show: PROMPT_FROM_CHAT_TRIGGER },
	},
	{
		displayName: 'Prompt (User Message)',
		name: 'text',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. Hello, how can you help me?',
		typeOptions: { rows: 2 },
		displayOptions: { show: PROMPT_DEFINED_BELOW },
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
			...MEMORY_MODE_OPTIONS,
			{
				name: 'None',
				value: 'none',
				description: 'No history: every call stands alone',
			},
		],
		default: 'conversation',
	},
	...memoryModeNotices(
		{},
		'Without a session ID (behind a Manual Trigger, say) the call runs without memory and says so in the output pane, unless Options → Require Session ID is on.',
	),
	{
		displayName: 'None: every call stands alone; nothing is read from or saved to memory.',
		name: 'noneModeNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: WITHOUT_MEMORY },
	},
	...sessionIdProperties(WITH_MEMORY),
];

const WITH_DATA = { ...WITH_MEMORY, versionedData: [true] };

/** Versioned Data: the conversation's JSON working data, shown to the model, changed by JSON Patch. */
const versionedDataProperties: INodeProperties[] = [
	{
		displayName: 'Versioned Data',
		name: 'versionedData',
		type: 'boolean',
		default: false,
		description:
			'Whether to give the model the conversation’s JSON working data and its recent changes, and let it change the data with a JSON Patch. Each change is saved as a new version (see LLM Memory Manager → Versioned Data for history, diff and rollback).',
		displayOptions: { show: WITH_MEMORY },
	},
	{
		displayName: 'Initial Data',
		name: 'initialData',
		type: 'json',
		default: '',
		placeholder: 'e.g. {"inci": "WATER", "category": "OTHERS"}',
		description:
			'The data to start from when the conversation has no version yet: saved as version 1 ("Initial data") before the first answer. Empty: start without data (the model may create it).',
		displayOptions: { show: WITH_DATA },
	},
	{
		displayName: 'Versioned Data Options',
		name: 'versionedDataOptions',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		displayOptions: { show: WITH_DATA },
		options: [
			{
				displayName: 'Branch',
				name: 'branch',
				type: 'string',
				default: MAIN_BRANCH,
				description:
					'The line of versions to read and change. Every conversation has "main"; create others with LLM Memory Manager → Versioned Data → Create Branch.',
			},
			{
				displayName: 'Change Method',
				name: 'changeMethod',
				type: 'options',
				options: [
					{
						name: 'Tool Call When Supported',
						value: 'auto',
						description:
							'Offer the model an update_data tool (JSON Patch and summary) when the connected model supports tools; otherwise ask for a JSON reply',
					},
					{
						name: 'JSON Reply',
						value: 'json',
						description:
							'Always ask the model to reply with JSON: {"answer", "patch", "summary"}. For models or providers without tool calling.',
					},
				],
				default: 'auto',
			},
			{
				displayName: 'History Entries In Prompt',
				name: 'historyEntries',
				type: 'number',
				default: 5,
				typeOptions: { minValue: 0 },
				description:
					'How many recent versions the model sees (summary and what changed), so it can answer "what did I change?"',
			},
			jsonSchemaOption,
			keepLastVersionsOption,
		],
	},
];

const filesOption: INodeProperties = {
	displayName: 'Files (Binary Properties)',
	name: 'binaryPropertyNames',
	type: 'string',
	default: 'data*',
	placeholder: 'e.g. data0, data1 or data*',
	description:
		'Binary properties to send with the message (and keep in memory), comma-separated; * matches any suffix. Chat Trigger uploads arrive as data0, data1, …. Not set: the item’s files the model can read (images, text files, PDFs; audio when sent as file parts).',
};

const maxTokensPerFileOption: INodeProperties = {
	displayName: 'Max Tokens Per File',
	name: 'maxTokensPerFile',
	type: 'number',
	default: DEFAULT_MAX_TOKENS_PER_FILE,
	typeOptions: { minValue: 1 },
	description:
		'Most tokens of one text file’s or PDF’s text the model gets; longer text is cut and says so. It counts against Max History Tokens in later turns.',
};

const pdfAndAudioOption: INodeProperties = {
	displayName: 'PDF and Audio',
	name: 'pdfAndAudio',
	type: 'options',
	options: [
		{
			name: 'Send as Text',
			value: 'text',
			description: 'A PDF’s extracted text; audio as a note. Works with every model.',
		},
		{
			name: 'Send as File Part',
			value: 'file',
			description:
				'The PDF itself, and WAV or MP3 audio, as file parts, for models that read them (PDFs: e.g. GPT-4o, Claude, Gemini; audio: e.g. GPT-4o audio, Gemini)',
		},
	],
	default: 'text',
	description: 'How PDFs and audio files reach the model, now and when replayed from memory',
};

const memoryOptions = optionsCollection(
	[
		gzipOption,
		expireAfterDaysOption(
			'this conversation’s memory (its chat history, versioned data and long-term captures)',
		),
		filesOption,
		{
			displayName: 'Require Session ID',
			name: 'requireSessionId',
			type: 'boolean',
			default: false,
			description:
				'Whether a call without a session ID stops with an error. Off: in Conversation mode it runs without memory and says so in the output pane (Node mode always needs one).',
		},
		{
			displayName: 'Max History Tokens',
			name: 'maxHistoryTokens',
			type: 'number',
			default: DEFAULT_MAX_TOKEN_LIMIT,
			typeOptions: { minValue: 0 },
			description: 'Token budget for the history. The oldest whole turns are dropped first.',
		},
		maxTokensPerFileOption,
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
		pdfAndAudioOption,
		{
			displayName: 'Start New Thread',
			name: 'startNewThread',
			type: 'boolean',
			default: false,
			description:
				'Whether this turn starts a thread of its own at the root, with no history, e.g. to regenerate the very first answer. Parent Message ID is then ignored.',
		},
		...summaryOptions('historyOverflow'),
		historyOverflowField('The node’s own model writes the summary.'),
		{
			displayName: 'Window (Turns)',
			name: 'window',
			type: 'number',
			default: 10,
			typeOptions: { minValue: 1 },
			description:
				'Most past turns to send, on top of the token budget. Not set: the Max History Tokens budget alone limits the history (500 turns at most). 10 when added, as in the LLM Memory Store.',
		},
	],
	WITH_MEMORY,
);

const noMemoryOptions = optionsCollection(
	[filesOption, maxTokensPerFileOption, pdfAndAudioOption],
	WITHOUT_MEMORY,
);

export const properties: INodeProperties[] = [
	...promptProperties,
	...memoryProperties,
	...versionedDataProperties,
	...longTermProperties(WITH_MEMORY, false),
	...factsProperties(WITH_MEMORY, 'The node’s own model reads the turns.'),
	...storageProperties(WITH_MEMORY),
	memoryOptions,
	noMemoryOptions,
];
