import type { INodeProperties } from 'n8n-workflow';

import { conversationMemory } from './conversationMemory';
import type { Operation, Resource } from './types';
import { versionedData } from './versionedData';

/** Every resource the node offers, in the order of the Resource list. */
export const RESOURCES: Resource[] = [conversationMemory, versionedData];

/** The operation an item asks for, or undefined for an unknown pair. */
export function findOperation(resource: unknown, operation: unknown): Operation | undefined {
	return RESOURCES.find((r) => r.option.value === resource)?.operations.find(
		(o) => o.option.value === operation,
	);
}

/** Resource selector, then per resource its Operation selector and fields. Options collections last. */
export function resourceProperties(): { fields: INodeProperties[]; options: INodeProperties[] } {
	const all: INodeProperties[] = [];
	for (const r of RESOURCES) {
		all.push({
			displayName: 'Operation',
			name: 'operation',
			type: 'options',
			noDataExpression: true,
			displayOptions: { show: { resource: [r.option.value] } },
			options: r.operations.map((o) => o.option),
			default: r.defaultOperation,
		});
		all.push(...r.properties, ...r.operations.flatMap((o) => o.properties));
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
	return `={{ ${JSON.stringify(actions)}[$parameter["resource"] + ":" + $parameter["operation"]] }}`;
}
