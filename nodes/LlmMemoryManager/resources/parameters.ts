import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { Show } from '../../shared/display';
import { requiredIdParameter } from '../../shared/ids';

/** Workflow ID: memory is kept per workflow (the engine's app ID); this workflow unless told otherwise. */
export function workflowIdProperty(show: Show): INodeProperties {
	return {
		displayName: 'Workflow ID',
		name: 'workflowId',
		type: 'string',
		default: '={{ $workflow.id }}',
		description:
			'Memory is kept per workflow: the ID of the workflow whose memory to manage. By default this workflow; give another workflow’s ID to manage its memory.',
		displayOptions: { show },
	};
}

export function workflowIdOf(ctx: IExecuteFunctions, i: number): string {
	return requiredIdParameter(ctx, 'workflowId', i, 'Workflow ID', {
		message: 'No workflow ID',
		help: 'Save the workflow first (memory is kept per workflow ID), or set "Workflow ID" to the ID of the workflow whose memory to manage.',
	});
}

/** Memory Base IDs whose captures of the conversation a whole-conversation operation includes. */
export function memoryBaseIdsProperty(
	show: Show,
	description = 'Memory Bases whose captures of this conversation go with it, separated by commas. Empty: the Memory Base of the chosen workflow (Base ID = workflow ID, the default of the Memory Base nodes).',
): INodeProperties {
	return {
		displayName: 'Memory Base IDs',
		name: 'memoryBaseIds',
		type: 'string',
		default: '',
		placeholder: 'e.g. support-kb, {{ $workflow.id }}',
		description,
		displayOptions: { show },
	};
}

/** The Memory Base IDs an item names; undefined for the default (the workflow's own base). */
export function memoryBaseIdsOf(ctx: IExecuteFunctions, i: number): string[] | undefined {
	const value = ctx.getNodeParameter('memoryBaseIds', i, '');
	if (typeof value !== 'string' || value.trim() === '') return undefined;
	return value
		.split(',')
		.map((v) => v.trim())
		.filter((v) => v !== '');
}

export { offsetOption, pageOf, pageProperties } from '../../shared/paging';
