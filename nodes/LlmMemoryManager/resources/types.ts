import type {
	IDisplayOptions,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';

/** One operation of a resource: its entry in the Operation list, its fields and what it does per item. */
export interface Operation {
	/** `value` is the operation's parameter value; `action` is also the node's subtitle. */
	option: INodePropertyOptions & { action: string };
	/** Its fields, each shown for its resource and operation only (see showFor). */
	properties: INodeProperties[];
	/** Runs for one input item; the caller adds pairedItem and handles continueOnFail. */
	execute(ctx: IExecuteFunctions, itemIndex: number): Promise<INodeExecutionData[]>;
}

/** One resource of the node (n8n's resource/operation pattern). A new resource is one more of these. */
export interface Resource {
	option: INodePropertyOptions;
	defaultOperation: string;
	/** Fields several of its operations share, each with its own display condition. */
	properties: INodeProperties[];
	operations: Operation[];
}

export type Show = IDisplayOptions['show'];

/** The display condition of fields that belong to some operations of one resource. */
export function showFor(resource: string, ...operations: string[]): Show {
	return { resource: [resource], operation: operations };
}
