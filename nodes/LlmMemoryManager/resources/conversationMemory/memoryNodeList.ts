import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { listNodesWithMemory } from '../../../../src/history/objects';
import type { MemoryStorage } from '../../../../src/store/storage';
import { nodeError } from '../../../shared/errors';
import { localDiskStorage, s3Storage } from '../../../shared/storage';

/** The storage the settings panel names (its Storage, Folder and credential, as an item would use). */
async function panelStorage(ctx: ILoadOptionsFunctions): Promise<MemoryStorage> {
	if (ctx.getCurrentNodeParameter('storage') === 's3')
		return s3Storage(await ctx.getCredentials('llmMemoryS3Api'), (m) => ctx.logger.warn(m));
	const folder = ctx.getCurrentNodeParameter('localFolder');
	return localDiskStorage(typeof folder === 'string' ? folder : '');
}

/**
 * Node → From List: the nodes with Node-mode memory stored for the Workflow ID. The editor resolves
 * the panel's expressions before it asks (so `{{ $workflow.id }}` arrives as this workflow's ID), but
 * n8n tells a node nothing about the workflow's other nodes here, so entries show node IDs (with the
 * number of conversations), the most recently written first. Nodes whose memory was never written (or was cleared) are not listed.
 */
export async function memoryNodes(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const id = this.getCurrentNodeParameter('workflowId');
	const workflowId = typeof id === 'number' ? String(id) : id;
	if (typeof workflowId !== 'string' || workflowId === '' || workflowId.startsWith('='))
		throw nodeError(
			this,
			'No workflow ID to list nodes for',
			undefined,
			'Save the workflow first (memory is kept per workflow ID), or set Workflow ID.',
		);
	const nodes = await listNodesWithMemory(await panelStorage(this), workflowId);
	const wanted = filter?.trim().toLowerCase() ?? '';
	return {
		results: nodes
			.filter((n) => n.nodeId.toLowerCase().includes(wanted))
			.map((n) => ({
				name: `${n.nodeId} (${n.conversations} conversation${n.conversations === 1 ? '' : 's'})`,
				value: n.nodeId,
			})),
	};
}
