import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { MemoryBase } from '../../../src/knowledge/memory-base';
import type { CaptureMessageInput } from '../../../src/knowledge/types';
import { chatTriggerField } from '../../shared/chat-trigger';
import { idParameter } from '../../shared/ids';
import { showForOperations } from '../../shared/display';
import { nodeError } from '../../shared/errors';
import { numberParameter } from '../../shared/parameters';
import { expireAfterDaysOf } from '../../shared/retention';
import { failedItem } from '../../shared/run-items';
import { baseIdOf, memoryBaseFor, sessionOf } from '../methods/base';
import type { Connections } from '../methods/base';
import type { MemoryBaseOperation } from './types';

const show = showForOperations('capture');

/** The field's value as text: strings as they are, other JSON as JSON; undefined when the item lacks it. */
function fieldText(json: IDataObject, field: string): string | undefined {
	let value: unknown = json[field];
	if (value === undefined && field.includes('.'))
		value = field.split('.').reduce<unknown>((v, k) => (v as IDataObject | undefined)?.[k], json);
	if (value === undefined || value === null) return undefined;
	return typeof value === 'string' ? value : JSON.stringify(value);
}

interface Stride {
	base: MemoryBase;
	sessionId: string;
	userId?: string;
	items: number[];
	messages: CaptureMessageInput[];
	threshold: number;
	autoCapture: boolean;
	expireAfterDays?: number;
}

/**
 * The user's message an item answers: its own field (the Chat Trigger's chatInput by default), else the
 * workflow's Chat Trigger's message (an AI Agent's output item does not carry it).
 */
function userMessageOf(ctx: IExecuteFunctions, i: number, json: IDataObject): string | undefined {
	const field = String(ctx.getNodeParameter('userMessageField', i, 'chatInput'));
	const own = fieldText(json, field);
	if (own !== undefined) return own;
	const value = chatTriggerField(ctx, i, 'chatInput');
	return typeof value === 'string' && value !== '' ? value : undefined;
}

/** What item i adds to its stride: the user's message (when captured too) and the output. */
function itemMessages(ctx: IExecuteFunctions, i: number, json: IDataObject): CaptureMessageInput[] {
	const field = String(ctx.getNodeParameter('outputField', i, 'output'));
	const text = fieldText(json, field);
	if (text === undefined)
		throw nodeError(
			ctx,
			`The item has no field "${field}" to capture`,
			i,
			'Set "Field to Capture" to the field that holds the output (the AI Agent’s answer is "output").',
		);
	const both = ctx.getNodeParameter('captureMessages', i, 'both') === 'both';
	const user = both ? userMessageOf(ctx, i, json) : undefined;
	return [
		...(user !== undefined ? [{ text: user, role: 'user' }] : []),
		{ text, role: 'assistant' },
	];
}

/** Adds item i to its stride (one per storage, base and conversation), which it opens when it is the first. */
async function joinStride(
	ctx: IExecuteFunctions,
	i: number,
	json: IDataObject,
	connections: Connections,
	strides: Map<string, Stride>,
): Promise<void> {
	const messages = itemMessages(ctx, i, json);
	const sessionId = sessionOf(ctx, i, true) as string;
	const userId = idParameter(ctx, 'userId', i, 'User ID');
	const autoCapture = ctx.getNodeParameter('autoCapture', i, true) === true;
	const threshold = numberParameter(ctx, 'threshold', i, 'Threshold', 1, 10);
	const base = await memoryBaseFor(ctx, i, connections);
	const key = JSON.stringify([
		base.storage.describe(),
		baseIdOf(ctx, i),
		sessionId,
		userId ?? null,
	]);
	const stride = strides.get(key) ?? {
		base,
		sessionId,
		userId,
		items: [],
		messages: [],
		threshold,
		autoCapture,
		expireAfterDays: expireAfterDaysOf(ctx, i),
	};
	stride.items.push(i);
	stride.messages.push(...messages);
	strides.set(key, stride);
}

/** Captures one stride; what its items get under `memoryBase`. A failed sync is a warning, not a failure. */
async function captureStride(
	ctx: IExecuteFunctions,
	s: Stride,
	runId: string,
): Promise<IDataObject> {
	const r = await s.base.capture(
		{
			sessionId: s.sessionId,
			userId: s.userId,
			runId,
			messages: s.messages,
			expireAfterDays: s.expireAfterDays,
		},
		{ threshold: s.threshold, autoCapture: s.autoCapture },
	);
	if (r.syncError) ctx.logger.warn(`Memory Base: ${r.syncError.message}`);
	return {
		baseId: s.base.baseId,
		sessionId: r.sessionId,
		...(s.userId !== undefined ? { userId: s.userId } : {}),
		captured: r.captured,
		pending: r.pending,
		...(r.pendingNote ? { pendingNote: r.pendingNote } : {}),
		processed: r.processed,
		threshold: r.threshold,
		autoCapture: r.autoCapture,
		ingested: r.sync?.messages ?? 0,
		syncError: r.syncError?.message ?? null,
	};
}

export const capture: MemoryBaseOperation = {
	option: {
		name: 'Capture',
		value: 'capture',
		description:
			'Capture this run’s messages (the user’s and the answer) as one stride of the conversation: searchable by words at once; past the threshold, with an embedding model, embedded too',
		action: 'Capture this run’s messages',
	},
	needsEmbedder: false,
	properties: [
		{
			displayName: 'Capture',
			name: 'captureMessages',
			type: 'options',
			options: [
				{
					name: 'User Message and Answer',
					value: 'both',
					description:
						'The user’s message too: what users say about themselves ("my name is…") is often what to remember',
				},
				{
					name: 'Answer Only',
					value: 'output',
					description: 'Only the output field below, as Langflow’s memory base captures outputs',
				},
			],
			default: 'both',
			displayOptions: { show },
		},
		{
			displayName: 'Field with the User Message',
			name: 'userMessageField',
			type: 'string',
			default: 'chatInput',
			description:
				'The input items’ field holding the user’s message (the Chat Trigger’s is "chatInput"). When the item lacks it (an AI Agent’s output), the Chat Trigger’s message is used.',
			displayOptions: { show: { ...show, captureMessages: ['both'] } },
		},
		{
			displayName: 'Field to Capture',
			name: 'outputField',
			type: 'string',
			default: 'output',
			description:
				'The input items’ field holding the output to remember (the AI Agent’s and LLM with Memory’s answer is "output"). Dots reach into objects.',
			displayOptions: { show },
		},
		{
			displayName: 'Auto Capture',
			name: 'autoCapture',
			type: 'boolean',
			default: true,
			description:
				'Whether to ingest a conversation’s pending outputs into the knowledge base once there are at least Threshold of them. Off: only Sync Now ingests.',
			displayOptions: { show },
		},
		{
			displayName: 'Threshold',
			name: 'threshold',
			type: 'number',
			default: 10,
			typeOptions: { minValue: 1 },
			description:
				'Pending outputs of one conversation at which a capture ingests them. A change applies from the next capture on.',
			displayOptions: { show: { ...show, autoCapture: [true] } },
		},
	],

	/** Items of one conversation (and base) in one execution are one stride. Every item passes through. */
	async executeAll(
		ctx: IExecuteFunctions,
		connections: Connections,
	): Promise<INodeExecutionData[]> {
		const items = ctx.getInputData();
		const runId = String(ctx.getExecutionId() ?? '') || `run-${Date.now()}`;
		const out: INodeExecutionData[] = items.map((item, i) => ({
			json: item.json,
			...(item.binary ? { binary: item.binary } : {}),
			pairedItem: { item: i },
		}));
		// A failed item keeps its fields, as every item passes through.
		const fail = (i: number, error: unknown) => (out[i] = failedItem(ctx, error, i, items[i].json));
		const strides = new Map<string, Stride>();
		for (let i = 0; i < items.length; i++) {
			try {
				await joinStride(ctx, i, items[i].json, connections, strides);
			} catch (error) {
				fail(i, error);
			}
		}
		for (const s of strides.values()) {
			try {
				const summary = await captureStride(ctx, s, runId);
				for (const i of s.items)
					out[i] = { ...out[i], json: { ...items[i].json, memoryBase: summary } };
			} catch (error) {
				for (const i of s.items) fail(i, error);
			}
		}
		return out;
	},
};
