import type { INodeProperties } from 'n8n-workflow';

import { actionSubtitle, operationProperty } from '../../shared/operation';
import { capture } from './capture';
import { deleteBase } from './deleteBase';
import { forgetConversation } from './forgetConversation';
import { baseIdProperty, conversationProperties, optionsProperty } from './fields';
import { listBases, listMessages, updateSettings } from './listings';
import { regenerate } from './regenerate';
import { search } from './search';
import { status } from './status';
import { syncNow } from './syncNow';
import type { MemoryBaseOperation } from './types';

/** Every operation, in the order of the Operation list. */
export const OPERATIONS: MemoryBaseOperation[] = [
	capture,
	deleteBase,
	forgetConversation,
	listMessages,
	listBases,
	regenerate,
	search,
	status,
	syncNow,
	updateSettings,
];

export function findOperation(value: unknown): MemoryBaseOperation | undefined {
	return OPERATIONS.find((o) => o.option.value === value);
}

/** Operation, Memory Base ID, conversation, the operations' fields; storage and options follow (description.ts). */
export const operationProperties: INodeProperties[] = [
	operationProperty(OPERATIONS, 'capture'),
	baseIdProperty,
	...OPERATIONS.flatMap((o) => o.properties.filter((p) => p.name === 'sessionScope')),
	...conversationProperties,
	...OPERATIONS.flatMap((o) => o.properties.filter((p) => p.name !== 'sessionScope')),
];

export { optionsProperty };

/** The node's subtitle: the chosen operation's action. */
export function subtitleExpression(): string {
	const actions = Object.fromEntries(
		OPERATIONS.map((o) => [String(o.option.value), o.option.action]),
	);
	return actionSubtitle(actions, '$parameter["operation"]');
}
