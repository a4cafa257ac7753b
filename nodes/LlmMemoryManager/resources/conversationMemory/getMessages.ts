import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readMessages } from '../../../../src';
import type { PositionedMessage } from '../../../../src';
import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { idParameter } from '../../../shared/ids';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { offsetOption, pageOf, pageProperties } from '../parameters';
import { addressOf, RESOURCE } from './fields';

const show = showFor(RESOURCE, 'getMessages');

interface Options {
	groupMessages?: boolean;
	newestFirst?: boolean;
}

/** A stored message as an output item: camelCase, file copies described (their bytes stay in storage). */
function messageJson({ position, message: m }: PositionedMessage): IDataObject {
	return {
		position,
		messageId: m.message_id,
		parentMessageId: m.parent_message_id,
		role: m.role,
		content: m.content,
		files: m.files.map((f) => ({
			name: f.name,
			mimeType: f.mime_type,
			type: f.type,
			size: f.size,
			...(f.url !== undefined ? { url: f.url } : {}),
		})),
		...(m.tool_calls ? { toolCalls: m.tool_calls as unknown as IDataObject[] } : {}),
		...(m.tool_call_id !== undefined ? { toolCallId: m.tool_call_id } : {}),
		...(m.role === 'tool' && m.name !== undefined ? { toolName: m.name } : {}),
		...(m.data_version ? { dataVersion: { ...m.data_version } } : {}),
		tokenCount: m.token_count,
		createdAt: m.created_at,
	};
}

export const getMessages: ItemOperation = {
	option: {
		name: 'Get Messages',
		value: 'getMessages',
		description: 'Read the stored messages of a conversation’s memory, or of one node’s memory',
		action: 'Get messages of a memory',
	},
	properties: [
		...pageProperties(show, 'messages'),
		optionsCollection(
			[
				{
					displayName: 'Group Messages',
					name: 'groupMessages',
					type: 'boolean',
					default: false,
					description:
						'Whether to return one item holding the page’s messages (with total and nextOffset for paging) instead of one item per message. One item per message outputs nothing when the memory is empty (turn on Always Output Data in the node’s settings to continue anyway).',
				},
				{
					displayName: 'Newest First',
					name: 'newestFirst',
					type: 'boolean',
					default: false,
					description:
						'Whether to start from the newest message (Offset then counts from the newest), e.g. for the last 20 messages. Otherwise the oldest comes first.',
				},
				offsetOption,
				{
					displayName: 'Thread Up To Message ID',
					name: 'threadMessageId',
					type: 'string',
					default: '',
					placeholder: 'e.g. {{ $json.messageId }}',
					description:
						'Only the thread that ends at this message (a turn’s Message ID, as LLM with Memory outputs it), from its first message on. Empty: every stored message in the order stored, all branches included.',
				},
			],
			show,
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const { mode, ...address } = addressOf(ctx, i);
		const page = pageOf(ctx, i);
		const options = ctx.getNodeParameter('options', i, {}) as Options;
		const threadOf = idParameter(ctx, 'options.threadMessageId', i, 'Thread Up To Message ID');
		const result = await readMessages(await storageFor(ctx, i), address, {
			...page,
			newestFirst: options.newestFirst === true,
			threadOf,
		});
		const source = {
			workflowId: address.appId,
			conversationId: address.conversationId,
			memoryMode: mode,
			nodeId: address.nodeId ?? null,
		};
		if (options.groupMessages === true)
			return [
				{
					json: {
						...source,
						key: result.key,
						exists: result.exists,
						total: result.total,
						offset: page.offset,
						nextOffset: result.nextOffset,
						messages: result.messages.map(messageJson),
					},
				},
			];
		return result.messages.map((m) => ({
			json: {
				conversationId: source.conversationId,
				nodeId: source.nodeId,
				...messageJson(m),
			},
		}));
	},
};
