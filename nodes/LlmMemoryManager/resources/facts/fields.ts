import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import { Facts } from '../../../../src/facts/facts';
import type { FactView, FactsView } from '../../../../src/facts/facts';
import { factsSubject } from '../../../../src/facts/keys';
import type { Evidence } from '../../../../src/facts/records';
import { sessionIdProperties } from '../../../shared/descriptions';
import { showFor } from '../../../shared/display';
import { nodeError } from '../../../shared/errors';
import { idParameter, requiredIdParameter } from '../../../shared/ids';
import { missingSessionIdHelp } from '../../../shared/parameters';
import { storageFor } from '../../../shared/storage';

export const RESOURCE = 'facts';

/** Every operation: each reads or changes one subject's facts. */
const ALL = [
	'addFact',
	'editFact',
	'factsDiff',
	'factsHistory',
	'getFacts',
	'retireFact',
	'rollbackFacts',
];
/** The operations a person changes the facts with: each is evidence of who and when. */
const CHANGES = ['addFact', 'editFact', 'retireFact', 'rollbackFacts'];

export const fieldProperties: INodeProperties[] = [
	{
		displayName: 'Memory Base ID',
		name: 'factsBaseId',
		type: 'string',
		default: '={{ $workflow.id }}',
		description:
			'Where the facts are kept: the Memory Base ID of the LLM with Memory or LLM Memory Store node that learned them (Long-Term Memory Options → Memory Base ID), or that workflow’s ID when its Long-Term Memory is off. By default this workflow.',
		displayOptions: { show: showFor(RESOURCE, ...ALL) },
	},
	{
		displayName: 'User ID',
		name: 'factsUserId',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.userId }}',
		description:
			'Whose facts: the user, as the nodes’ User ID named them. Empty: the facts of the conversation in Session ID (a conversation without a User ID keeps facts of its own).',
		displayOptions: { show: showFor(RESOURCE, ...ALL) },
	},
	...sessionIdProperties(showFor(RESOURCE, ...ALL)),
	{
		displayName: 'Edited By',
		name: 'editedBy',
		type: 'string',
		required: true,
		default: '={{ "workflow " + $workflow.name }}',
		placeholder: 'e.g. ada@example.com',
		description:
			'Who makes the change (a name or an e-mail), kept with it as its evidence with the time. By default this workflow’s name, so History shows where a change came from.',
		displayOptions: { show: showFor(RESOURCE, ...CHANGES) },
	},
];

/** A required text field of some operations. */
export function textProperty(
	name: string,
	displayName: string,
	description: string,
	placeholder: string,
	...operations: string[]
): INodeProperties {
	return {
		displayName,
		name,
		type: 'string',
		required: true,
		default: '',
		placeholder,
		description,
		displayOptions: { show: showFor(RESOURCE, ...operations) },
	};
}

/** A string parameter as given (the engine checks it and names it when it is empty). */
export function textOf(ctx: IExecuteFunctions, i: number, name: string): string {
	const value: unknown = ctx.getNodeParameter(name, i, '');
	return typeof value === 'string' ? value : String(value ?? '');
}

export interface OpenedFacts {
	/** Whose facts, for the output: the Memory Base ID and the user (or the conversation). */
	where: IDataObject;
	facts: Facts;
}

/** The item's facts: the user's (User ID), else the conversation's (Session ID); IDs checked. */
export async function openFacts(ctx: IExecuteFunctions, i: number): Promise<OpenedFacts> {
	const space = requiredIdParameter(ctx, 'factsBaseId', i, 'Memory Base ID', {
		message: 'No Memory Base ID',
		help: 'Give the Memory Base ID the facts were learned under (the workflow’s ID by default).',
	});
	const userId = idParameter(ctx, 'factsUserId', i, 'User ID');
	const conversationId =
		userId === undefined ? idParameter(ctx, 'conversationId', i, 'Session ID') : undefined;
	if (userId === undefined && conversationId === undefined)
		throw nodeError(
			ctx,
			'Facts need a User ID or a Session ID',
			i,
			`Give the User ID whose facts to use, or leave it empty for a conversation’s own facts. ${missingSessionIdHelp(ctx, i)}`,
		);
	const facts = new Facts({
		storage: await storageFor(ctx, i),
		space,
		subject: factsSubject(userId, conversationId as string),
	});
	const where = userId !== undefined ? { userId } : { conversationId: conversationId as string };
	return { where: { memoryBaseId: space, ...where }, facts };
}

function evidenceJson(e: Evidence): IDataObject {
	if (e.kind === 'person') return { kind: e.kind, by: e.by, at: e.at, note: e.note ?? null };
	return {
		kind: e.kind,
		quote: e.quote,
		messageId: e.message_id,
		role: e.role,
		conversationId: e.conversation_id,
		workflowId: e.workflow_id ?? null,
		...(e.node_id !== undefined ? { nodeId: e.node_id } : {}),
		saidAt: e.said_at,
		learnedAt: e.learned_at,
	};
}

/** A fact as an output item's entry: camelCase, its evidence, and why it ended if it did. */
export function factJson(f: FactView): IDataObject {
	return {
		id: f.id,
		text: f.text,
		status: f.status,
		validFrom: f.valid_from,
		evidence: evidenceJson(f.evidence),
		...(f.superseded ? { supersededAt: f.superseded.at, supersededBy: f.superseded.by } : {}),
		...(f.retired
			? {
					retiredAt: f.retired.at,
					retiredReason: f.retired.reason,
					retiredEvidence: evidenceJson(f.retired.evidence),
				}
			: {}),
	};
}

/** The facts as read: their version, when it was saved, and each fact. */
export function viewJson(view: FactsView): IDataObject {
	return {
		version: view.version,
		savedAt: view.savedAt,
		count: view.facts.length,
		facts: view.facts.map(factJson),
	};
}
