import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { nodeError } from '../../shared/errors';
import { actionSubtitle, operationProperty } from '../../shared/operation';
import type { ItemOperation } from '../../shared/operation';
import { conversationMemory } from './conversationMemory';
import { facts } from './facts';
import { memoryBase } from './memoryBase';
import type { Resource } from './types';
import { versionedData } from './versionedData';

/** Every resource the node offers, in the order of the Resource list. */
export const RESOURCES: Resource[] = [conversationMemory, versionedData, facts, memoryBase];

/** The operation an item asks for; an unknown resource and operation pair is an error. */
export function operationOf(ctx: IExecuteFunctions, i: number): ItemOperation {
	const resource = ctx.getNodeParameter('resource', i);
	const operation = ctx.getNodeParameter('operation', i);
	const found = RESOURCES.find((r) => r.option.value === resource)?.operations.find(
		(o) => o.option.value === operation,
	);
	if (!found)
		throw nodeError(
			ctx,
			`The operation "${String(operation)}" is not known for resource "${String(resource)}"`,
			i,
		);
	return found;
}

/** Resource selector, then per resource its Operation selector and fields. Options collections last. */
export function resourceProperties(): { fields: INodeProperties[]; options: INodeProperties[] } {
	const all: INodeProperties[] = [];
	for (const r of RESOURCES) {
		all.push(
			operationProperty(r.operations, r.defaultOperation, { resource: [r.option.value] }),
			...r.properties,
			...r.operations.flatMap((o) => o.properties),
		);
	}
	return {
		fields: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: RESOURCES.map((r) => r.option),
				default: RESOURCES[0].option.value,
			},
			...all.filter((p) => p.type !== 'collection'),
		],
		options: all.filter((p) => p.type === 'collection'),
	};
}

/** The node's subtitle: the chosen operation's action, e.g. "Get messages of a memory". */
export function subtitleExpression(): string {
	const actions = Object.fromEntries(
		RESOURCES.flatMap((r) =>
			r.operations.map((o) => [
				`${String(r.option.value)}:${String(o.option.value)}`,
				o.option.action,
			]),
		),
	);
	return actionSubtitle(actions, '$parameter["resource"] + ":" + $parameter["operation"]');
}
