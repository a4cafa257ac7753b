import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { readConversationMemories } from '../../../../src/admin/conversation-memories';
import { readMessages, readSummaries } from '../../../../src/admin/conversation-memory';
import type {
	MemoryAddress,
	MessagePage,
	ReadMessagesOptions,
} from '../../../../src/admin/conversation-memory';
import type { MemoryStorage } from '../../../../src/store/storage';
import { optionsCollection } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { idParameter } from '../../../shared/ids';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { offsetOption, pageOf, pageProperties } from '../parameters';
import { emptySummary } from './emptyResult';
import { RESOURCE, targetOf } from './fields';
import type { MemoryTarget, OneMemory } from './fields';
import { nodeNamesOf } from './memoryNode';
import { memoryJson, messageJson, pageJson, summaryJson } from './messageItems';

const show = showFor(RESOURCE, 'getMessages');

interface Options {
	groupMessages?: boolean;
	includeSummaries?: boolean;
	newestFirst?: boolean;
}

/** What an item asks to read: a page (per memory), its order, a thread, grouped or not. */
interface Request extends ReadMessagesOptions {
	offset: number;
	grouped: boolean;
	summaries: boolean;
}

/** What reading gave: the output items, and how many messages they hold. */
interface Read {
	items: IDataObject[];
	found: number;
}

/** Limit: with All of This Conversation, the page is taken from each memory. */
const pageFields = pageProperties(show, 'messages').map((p) =>
	p.name === 'limit'
		? {
				...p,
				description:
					'Max number of messages to return. With All of This Conversation, from each memory (Offset counts within each memory too).',
			}
		: p,
);

function requestOf(ctx: IExecuteFunctions, i: number): Request {
	const options = ctx.getNodeParameter('options', i, {}) as Options;
	return {
		...pageOf(ctx, i),
		newestFirst: options.newestFirst === true,
		threadOf: idParameter(ctx, 'options.threadMessageId', i, 'Thread Up To Message ID'),
		grouped: options.groupMessages === true,
		summaries: options.includeSummaries === true,
	};
}

/** A page with what its items say about where it comes from: grouped, and per message. */
interface LabelledPage {
	page: MessagePage;
	grouped: IDataObject;
	each: IDataObject;
	/** With Include Summaries: the memory's summaries of older turns, newest first. */
	summaries?: IDataObject[];
}

/**
 * Each page's messages, one item each (its summaries first, as items with role "summary"), or one
 * item per page holding its messages and summaries.
 */
function itemsOf(pages: LabelledPage[], request: Request): Read {
	const found = pages.reduce((n, p) => n + p.page.messages.length, 0);
	const summaries = (p: LabelledPage) => p.summaries ?? [];
	const items = request.grouped
		? pages.map((p) => ({
				...p.grouped,
				...pageJson(p.page, request.offset),
				...(p.summaries ? { summaries: p.summaries } : {}),
			}))
		: pages.flatMap((p) => [
				...summaries(p).map((s) => ({ ...p.each, ...s })),
				...p.page.messages.map((m) => ({ ...p.each, ...messageJson(m) })),
			]);
	return { items, found };
}

/** The memory's summaries of older turns as output, when asked for. */
async function summariesOf(
	storage: MemoryStorage,
	address: MemoryAddress,
	request: Request,
): Promise<{ summaries?: IDataObject[] }> {
	if (!request.summaries) return {};
	return { summaries: (await readSummaries(storage, address)).summaries.map(summaryJson) };
}

/** One memory document: its messages name the conversation and node (null: the shared memory). */
async function readOne(storage: MemoryStorage, target: OneMemory, request: Request): Promise<Read> {
	const page = await readMessages(storage, target.address, request);
	const { workflowId, conversationId } = target;
	const nodeId = target.address.nodeId ?? null;
	const grouped = { workflowId, conversationId, memoryMode: target.mode, nodeId };
	const summaries = await summariesOf(storage, target.address, request);
	return itemsOf([{ page, grouped, each: { conversationId, nodeId }, ...summaries }], request);
}

/** Every memory of the conversation: each message (or each memory's page) names its memory and node. */
async function readAll(
	storage: MemoryStorage,
	target: MemoryTarget,
	request: Request,
	names: Map<string, string>,
): Promise<Read> {
	const { workflowId, conversationId } = target;
	const { memories } = await readConversationMemories(storage, workflowId, conversationId, request);
	const pages = await Promise.all(
		memories.map(async (page) => {
			const memory = memoryJson(page, names);
			const grouped = { workflowId, conversationId, memoryMode: 'all', ...memory };
			const address = { appId: workflowId, conversationId, nodeId: page.nodeId };
			const summaries = await summariesOf(storage, address, request);
			return { page, grouped, each: { conversationId, ...memory }, ...summaries };
		}),
	);
	return itemsOf(pages, request);
}

/**
 * No messages: the node's first version outputs what it always did (nothing, or the grouped item) with
 * a hint; later versions output one item saying whether the conversation exists and what it holds.
 */
async function withoutMessages(
	ctx: IExecuteFunctions,
	storage: MemoryStorage,
	target: MemoryTarget,
	request: Request,
	read: Read,
	names: Map<string, string>,
): Promise<IDataObject[]> {
	const summary = await emptySummary(ctx, storage, target, names, request.offset);
	if (ctx.getNode().typeVersion < 1.1) return read.items;
	if (request.grouped && target.mode !== 'all') return [{ ...read.items[0], ...summary }];
	const nodeId = target.mode === 'node' ? { nodeId: target.address.nodeId ?? null } : {};
	return [
		{
			workflowId: target.workflowId,
			conversationId: target.conversationId,
			memoryMode: target.mode,
			...nodeId,
			...summary,
			messages: 0,
		},
	];
}

export const getMessages: ItemOperation = {
	option: {
		name: 'Get Messages',
		value: 'getMessages',
		description:
			'Read the stored messages of a conversation: all of its memories, its shared memory, or one node’s memory',
		action: 'Get messages of a memory',
	},
	properties: [
		...pageFields,
		optionsCollection(
			[
				{
					displayName: 'Group Messages',
					name: 'groupMessages',
					type: 'boolean',
					default: false,
					description:
						'Whether to return one item holding the page’s messages (with total and nextOffset for paging; with All of This Conversation, one item per memory) instead of one item per message. When no message is found, the output is one item saying whether the conversation exists and which memories it has (version 1 of this node outputs nothing then, with a hint in the output pane).',
				},
				{
					displayName: 'Include Summaries',
					name: 'includeSummaries',
					type: 'boolean',
					default: false,
					description:
						'Whether to add each memory’s summaries of older turns (kept with When History Exceeds the Budget = Summarize Older Turns), newest first: under summaries in a grouped item, or as items with role "summary" before the memory’s messages',
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
						'Only the thread that ends at this message (a turn’s Message ID, as LLM with Memory outputs it), from its first message on; with All of This Conversation, from the memories that hold it. Empty: every stored message in the order stored, all branches included.',
				},
			],
			show,
		),
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const target = targetOf(ctx, i);
		const request = requestOf(ctx, i);
		const storage = await storageFor(ctx, i);
		const names = nodeNamesOf(ctx, target.workflowId);
		const read =
			target.mode === 'all'
				? await readAll(storage, target, request, names)
				: await readOne(storage, target, request);
		const items =
			read.found > 0
				? read.items
				: await withoutMessages(ctx, storage, target, request, read, names);
		return items.map((json) => ({ json }));
	},
};
