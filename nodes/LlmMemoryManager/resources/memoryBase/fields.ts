import type { INodeProperties } from 'n8n-workflow';

import { showFor } from '../../../shared/display';

export const RESOURCE = 'memoryBase';

/** The Memory Base an operation works on (by default this workflow's, as the Memory Base nodes). */
export const fieldProperties: INodeProperties[] = [
	{
		displayName: 'Memory Base ID',
		name: 'memoryBaseId',
		type: 'string',
		required: true,
		default: '={{ $workflow.id }}',
		description:
			'The Memory Base to work on: its Memory Base ID on the Memory Base nodes (by default the workflow ID of the workflow that captures into it). By default this workflow.',
		displayOptions: { show: showFor(RESOURCE, 'upgrade') },
	},
];
