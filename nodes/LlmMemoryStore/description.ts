import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_MAX_TOOL_OUTPUT_CHARS } from '../../src/history/tool-results';
import type { ToolResultsMode } from '../../src/history/tool-results';
import { DEFAULT_MAX_TOKEN_LIMIT } from '../../src/history/truncate';
import {
	gzipOption,
	MEMORY_MODE_OPTIONS,
	memoryModeNotices,
	optionsCollection,
	sessionIdProperties,
	storageProperties,
} from '../shared/descriptions';
import { KEEPING_TOOL_RESULTS } from '../shared/display';
import { factsProperties } from '../shared/facts/properties';
import { longTermProperties } from '../shared/long-term/properties';
import { expireAfterDaysOption } from '../shared/retention';
import { historyOverflowField, summaryOptions } from '../shared/summary';

const toolResultsChoices: Array<{ name: string; value: ToolResultsMode; description: string }> = [
	{
		name: 'Keep',
		value: 'keep',
		description: 'Store each tool result, cut at Max Characters per Tool Result',
	},
	{
		name: 'Keep a Short Note',
		value: 'note',
		description:
			'Store the tool call, and in place of its result a one-line note of the result’s size and the tool’s name',
	},
	{
		name: 'Leave Out Tool Turns',
		value: 'leaveOut',
		description: 'Store only the user message and the final answer: no tool calls, no tool results',
	},
];

/** Tool Results in Memory, and the cap of a kept result. */
const toolResultsProperties: INodeProperties[] = [
	{
		displayName: 'Tool Results in Memory',
		name: 'toolResults',
		type: 'options',
		noDataExpression: true,
		options: toolResultsChoices,
		default: 'keep',
		description:
			'What is stored of the agent’s tool calls and tool results, decided when a turn is stored. Turns stored before a change stay as they were stored.',
	},
	{
		displayName: 'Max Characters per Tool Result',
		name: 'maxToolResultChars',
		type: 'number',
		default: DEFAULT_MAX_TOOL_OUTPUT_CHARS,
		typeOptions: { minValue: 0 },
		displayOptions: { show: KEEPING_TOOL_RESULTS },
		description:
			'A longer tool result is stored cut at this many characters, with a note of how many were left out',
	},
];

export const properties: INodeProperties[] = [
	{
		displayName:
			'Connect this memory to an AI Agent, and to the Chat Trigger (Load Previous Session = From Memory) to show earlier messages when the chat reopens. Respond to Chat and Chat Memory Manager can use it too.',
		name: 'connectionNotice',
		type: 'notice',
		default: '',
		// n8n's editor hides notices of this class once the node's output is connected, as it does for
		// its own memory nodes: the notice guides an unconnected store and never warns a connected one.
		typeOptions: { containerClass: 'ndv-connection-hint-notice' },
	},
	...sessionIdProperties({}),
	{
		displayName: 'Memory Mode',
		name: 'memoryMode',
		type: 'options',
		noDataExpression: true,
		options: MEMORY_MODE_OPTIONS.map((o) =>
			o.value === 'conversation'
				? {
						...o,
						description:
							'One history per session, shared with every LLM with Memory node and every memory store of this workflow in Conversation mode',
					}
				: {
						...o,
						description:
							'This memory’s own history per session: two agents with two stores never see each other’s turns',
					},
		),
		default: 'conversation',
	},
	...memoryModeNotices(
		{},
		'Without a session ID the agent stops with an error, as with n8n’s own memory nodes.',
	),
	{
		displayName: 'Context Window Length',
		name: 'contextWindowLength',
		type: 'number',
		default: 10,
		typeOptions: { minValue: 1 },
		hint: 'How many past turns the model receives as context',
		description:
			'A turn is a message and its answer, tool calls and tool results included; turns are never split. The window keeps an agent’s prompts short, as n8n’s own memory windows do; LLM with Memory has no turn window unless one is set, and its token budget limits the history.',
	},
	{
		displayName: 'Max History Tokens',
		name: 'maxHistoryTokens',
		type: 'number',
		default: DEFAULT_MAX_TOKEN_LIMIT,
		typeOptions: { minValue: 0 },
		description:
			'Token budget for the history, on top of the context window. The oldest whole turns are dropped first.',
	},
	historyOverflowField('Connect a chat model to the Summary Model input: it writes the summary.'),
	...toolResultsProperties,
	...longTermProperties({}, true),
	...factsProperties({}, 'Connect a chat model to the Facts Model input: it reads the turns.'),
	...storageProperties({}),
	optionsCollection([
		gzipOption,
		expireAfterDaysOption('this session’s memory (its chat history and long-term captures)'),
		...summaryOptions('/historyOverflow'),
	]),
];
