import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { listMemoryBases } from '../../../src/knowledge/listing';
import { showForOperations } from '../../shared/display';
import { pageOf, pageProperties } from '../../shared/paging';
import { numberParameter } from '../../shared/parameters';
import { storageFor } from '../../shared/storage';
import { existingBaseFor, onItemBase, scopeOf } from '../methods/base';
import type { Connections } from '../methods/base';
import { sessionScopeProperty } from './fields';
import type { MemoryBaseOperation } from './types';

export const listBases: MemoryBaseOperation = {
	option: {
		name: 'List Memory Bases',
		value: 'listBases',
		description: 'The memory bases on this storage, by ID (one output item each)',
		action: 'List memory bases',
	},
	needsEmbedder: false,
	properties: [],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const ids = await listMemoryBases(await storageFor(ctx, i));
		return ids.map((baseId) => ({ json: { baseId } }));
	},
};

export const listMessages: MemoryBaseOperation = {
	option: {
		name: 'List Captured Messages',
		value: 'listMessages',
		description:
			'What the memory base captured, oldest first, a page at a time: of one conversation, of one user across their conversations, or of all conversations',
		action: 'List captured messages',
	},
	needsEmbedder: false,
	properties: [
		sessionScopeProperty('session', ['listMessages'], true),
		...pageProperties(showForOperations('listMessages'), 'messages'),
	],

	async execute(
		ctx: IExecuteFunctions,
		i: number,
		connections: Connections,
	): Promise<INodeExecutionData[]> {
		const scope = scopeOf(ctx, i);
		const base = await existingBaseFor(ctx, i, connections);
		const offset = pageOf(ctx, i);
		const page = await base.listMessages({
			...scope,
			offset: offset.offset,
			limit: offset.limit ?? 10_000,
		});
		const summary: IDataObject = { total: page.total, nextOffset: page.nextOffset };
		return page.messages.map((m) => ({ json: { ...m, ...summary } as unknown as IDataObject }));
	},
};

export const updateSettings: MemoryBaseOperation = {
	option: {
		name: 'Update Settings',
		value: 'updateSettings',
		description:
			'Change the memory base’s threshold and auto capture (or create the base with them) without capturing anything',
		action: 'Update memory base settings',
	},
	needsEmbedder: false,
	properties: [
		{
			displayName: 'Auto Capture',
			name: 'autoCapture',
			type: 'boolean',
			default: true,
			description:
				'Whether a capture embeds a conversation’s pending messages once there are at least Threshold of them (with an embedding model connected)',
			displayOptions: { show: showForOperations('updateSettings') },
		},
		{
			displayName: 'Threshold',
			name: 'threshold',
			type: 'number',
			default: 10,
			typeOptions: { minValue: 1 },
			description: 'Pending messages of one conversation at which a capture embeds them',
			displayOptions: { show: showForOperations('updateSettings') },
		},
	],

	execute: onItemBase(async (base, ctx, i) => {
		const config = await base.configure({
			autoCapture: ctx.getNodeParameter('autoCapture', i, true) === true,
			threshold: numberParameter(ctx, 'threshold', i, 'Threshold', 1, 10),
		});
		return { ...config } as unknown as IDataObject;
	}),
};
