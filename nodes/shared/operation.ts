import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
	INodePropertyOptions,
} from 'n8n-workflow';

import type { Show } from './display';
import { runItems } from './run-items';

/** What every operation has: its entry in the Operation list and its fields. */
interface OperationEntry {
	/** `value` is the operation's parameter value; `action` is also the node's subtitle. */
	option: INodePropertyOptions & { action: string };
	/** Its fields, each shown for its operation only. */
	properties: INodeProperties[];
}

/**
 * An operation that runs for one input item at a time; runItems pairs its output items and handles
 * failures. `Env` is what the node fetches once for all items (the Memory Base's sub-nodes).
 */
export interface ItemOperation<Env = void> extends OperationEntry {
	execute(ctx: IExecuteFunctions, itemIndex: number, env: Env): Promise<INodeExecutionData[]>;
}

/**
 * An operation that needs the items together (Capture groups them into strides). It pairs its output
 * items itself and fails items with failedItem, as runItems does.
 */
export interface BatchOperation<Env = void> extends OperationEntry {
	executeAll(ctx: IExecuteFunctions, env: Env): Promise<INodeExecutionData[]>;
}

/** One operation of a node. */
export type Operation<Env = void> = ItemOperation<Env> | BatchOperation<Env>;

/** Runs an operation over every input item: item by item, or all together when it needs that. */
export async function runOperation<Env>(
	ctx: IExecuteFunctions,
	operation: Operation<Env>,
	env: Env,
): Promise<INodeExecutionData[]> {
	if ('executeAll' in operation) return await operation.executeAll(ctx, env);
	return await runItems(ctx, async (i) => await operation.execute(ctx, i, env));
}

/** The Operation selector of a list of operations (of one resource, where `show` says so). */
export function operationProperty(
	operations: readonly OperationEntry[],
	defaultValue: string,
	show?: Show,
): INodeProperties {
	return {
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		...(show ? { displayOptions: { show } } : {}),
		options: operations.map((o) => o.option),
		default: defaultValue,
	};
}

/** A subtitle expression: the action of the operation that `key` (an expression) names. */
export function actionSubtitle(actions: Record<string, string>, key: string): string {
	return `={{ ${JSON.stringify(actions)}[${key}] }}`;
}
