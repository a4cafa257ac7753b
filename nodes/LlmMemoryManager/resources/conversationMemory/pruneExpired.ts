import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { pruneExpired as sweep } from '../../../../src/admin/retention';
import { showFor } from '../../../shared/display';
import type { ItemOperation } from '../../../shared/operation';
import { storageFor } from '../../../shared/storage';
import { memoryBaseIdsOf, memoryBaseIdsProperty } from '../parameters';
import { RESOURCE } from './fields';
import { pruneScopeProperties, pruneWorkflowOf } from './prune';

const show = showFor(RESOURCE, 'pruneExpired');

export const pruneExpired: ItemOperation = {
	option: {
		name: 'Prune Expired',
		value: 'pruneExpired',
		description:
			'Delete every memory past the Expire After stored with it: chat memory with its copied files, versioned data, and Memory Base captures with their index entries. Reports what it deleted.',
		action: 'Prune expired memory',
	},
	properties: [
		...pruneScopeProperties(show),
		memoryBaseIdsProperty(
			show,
			'Memory Bases whose expired captures to delete, separated by commas. Empty: with One Workflow, that workflow’s Memory Base (Base ID = workflow ID, the default of the Memory Base nodes); with All Workflows, every Memory Base of this storage.',
		),
		{
			displayName: 'Dry Run',
			name: 'dryRun',
			type: 'boolean',
			default: false,
			description: 'Whether to only report what is expired, deleting nothing',
			displayOptions: { show },
		},
	],

	async execute(ctx: IExecuteFunctions, i: number): Promise<INodeExecutionData[]> {
		const workflowId = pruneWorkflowOf(ctx, i);
		const dryRun = ctx.getNodeParameter('dryRun', i, false) === true;
		const r = await sweep(await storageFor(ctx, i), {
			appId: workflowId,
			memoryBaseIds: memoryBaseIdsOf(ctx, i),
			dryRun,
		});
		// One line in n8n's own log per sweep: counts only (session IDs may be personal data).
		ctx.logger.info(
			`LLM Memory Manager: Prune Expired${dryRun ? ' (dry run)' : ''} found ${r.chatMemory.count} chat memories, ${r.versionedData.count} versioned data and ${r.captures.count} capture logs expired; ${r.deletedCount} objects deleted, ${r.skippedCount} kept`,
		);
		return [
			{
				json: {
					workflowId: workflowId ?? null,
					dryRun,
					chatMemory: r.chatMemory.count,
					versionedData: r.versionedData.count,
					captures: r.captures.count,
					capturedMessages: r.captures.messages,
					files: r.files,
					expired: {
						chatMemory: r.chatMemory.ids,
						versionedData: r.versionedData.ids,
						captures: r.captures.ids,
					},
					deletedCount: r.deletedCount,
					deleted: r.deleted,
					skippedCount: r.skippedCount,
					skipped: r.skipped,
				},
			},
		];
	},
};
