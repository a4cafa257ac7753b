import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { VersionedData } from '../../../../src/admin/versioned-data';
import { MAIN_BRANCH } from '../../../../src/snapshots/types';
import type { VersionRecord } from '../../../../src/snapshots/records';
import type { HistoryEntry } from '../../../../src/snapshots/types';
import { sessionIdProperties } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { idParameter } from '../../../shared/ids';
import { conversationIdOf } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';
import { workflowIdOf, workflowIdProperty } from '../parameters';

export const RESOURCE = 'versionedData';

/** Every operation: each reads or writes one workflow's versioned data. */
const ALL = [
	'createBranch',
	'diff',
	'export',
	'getCurrent',
	'getVersion',
	'history',
	'import',
	'listBranches',
	'rollback',
	'saveVersion',
];
/** Operations on one conversation (Import takes the conversation from the export). */
const ONE_CONVERSATION = ALL.filter((o) => o !== 'import');
/** Operations on one branch. */
const ON_BRANCH = ['getCurrent', 'history', 'rollback', 'saveVersion'];

export const fieldProperties: INodeProperties[] = [
	workflowIdProperty(showFor(RESOURCE, ...ALL)),
	...sessionIdProperties(showFor(RESOURCE, ...ONE_CONVERSATION)),
	{
		displayName: 'Branch',
		name: 'branch',
		type: 'string',
		default: MAIN_BRANCH,
		placeholder: 'e.g. main',
		description:
			'The line of versions to use. Every conversation has "main"; other branches are made with Create Branch. Empty means main.',
		displayOptions: { show: showFor(RESOURCE, ...ON_BRANCH) },
	},
];

/** The item's branch (empty: main); the engine checks the name. */
export function branchOf(ctx: IExecuteFunctions, i: number, name = 'branch'): string {
	return idParameter(ctx, name, i, 'Branch') ?? MAIN_BRANCH;
}

export interface Opened {
	workflowId: string;
	conversationId: string;
	versions: VersionedData;
}

/** The item's conversation's versioned data (IDs checked), optionally with a JSON Schema for saves. */
export async function openVersionedData(
	ctx: IExecuteFunctions,
	i: number,
	schema?: unknown,
): Promise<Opened> {
	const workflowId = workflowIdOf(ctx, i);
	const conversationId = conversationIdOf(ctx, i);
	const versions = new VersionedData({
		storage: await storageFor(ctx, i),
		appId: workflowId,
		conversationId,
		schema,
	});
	return { workflowId, conversationId, versions };
}

/** A stored version as an output item: camelCase, the data last. */
export function recordJson(r: VersionRecord): IDataObject {
	return {
		version: r.version,
		parent: r.parent,
		summary: r.summary,
		createdAt: r.created_at,
		messageId: r.message_id ?? null,
		data: structuredClone(r.data) as IDataObject,
	};
}

/** A history entry as an output item. */
export function entryJson(e: HistoryEntry): IDataObject {
	return {
		version: e.version,
		parent: e.parent,
		summary: e.summary,
		createdAt: e.created_at,
		messageId: e.message_id ?? null,
		size: e.size,
	};
}
