import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';

import type { Connections } from '../methods/base';

/** One operation of the Memory Base node: its entry in the Operation list, its fields, what it does. */
export interface MemoryBaseOperation {
	/** `value` is the operation's parameter value; `action` is also the node's subtitle. */
	option: INodePropertyOptions & { action: string };
	properties: INodeProperties[];
	/** Whether it needs the embedding model ('capture': only when Auto Capture may sync). */
	needsEmbedder: boolean | 'capture';
	/** Runs for every input item; output items carry pairedItem; continueOnFail is handled inside. */
	execute(ctx: IExecuteFunctions, connections: Connections): Promise<INodeExecutionData[]>;
}

export const show = (...operations: string[]) => ({ operation: operations });
