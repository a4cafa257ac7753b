import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import type { ItemOperation } from '../../shared/operation';

/** One resource of the node (n8n's resource/operation pattern). A new resource is one more of these. */
export interface Resource {
	option: INodePropertyOptions;
	defaultOperation: string;
	/** Fields several of its operations share, each with its own display condition. */
	properties: INodeProperties[];
	/** Each item picks its own resource and operation, so every operation runs per item. */
	operations: ItemOperation[];
}
