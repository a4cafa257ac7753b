import {
	NodeConnectionTypes,
	NodeOperationError,
	type ICredentialsDecrypted,
	type ICredentialTestFunctions,
	type IDataObject,
	type IExecuteFunctions,
	type INodeCredentialTestResult,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

import {
	inputFileParts,
	InvalidIdError,
	NodeTokenBufferMemory,
	TokenBufferMemory,
	validateId,
} from '../../src';
import type { ContentPart, History, MemoryStorage, PromptMessage } from '../../src';
import { itemFiles } from './binary-files';
import { isChatModel, modelNameOf, replyText } from './chat-model';
import type { ChatModel } from './chat-model';
import { properties } from './description';
import type { MemoryMode } from './description';
import { localDiskStorage, s3Storage } from './storage';

interface Options {
	maxHistoryTokens?: number;
	window?: number;
	parentMessageId?: string;
	messageId?: string;
	binaryPropertyNames?: string;
	gzip?: boolean;
}

type Memory = TokenBufferMemory | NodeTokenBufferMemory;

const MISSING_ID_HELP =
	'Connect a Chat Trigger (it sends a sessionId), or set "Conversation ID" to "Define Below" and give an expression such as {{ $json.userId }}.';

function conversationIdOf(value: unknown): string | undefined {
	if (value === undefined || value === null) return undefined;
	const id = String(value);
	return id === '' ? undefined : id;
}

// No usableAsTool: n8n's generated tool variant has no inputs, so it could never reach its required Model.
// eslint-disable-next-line @n8n/community-nodes/node-usable-as-tool
export class LlmWithMemory implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'LLM with Memory',
		name: 'llmWithMemory',
		icon: { light: 'file:llmWithMemory.svg', dark: 'file:llmWithMemory.dark.svg' },
		group: ['transform'],
		version: 1,
		subtitle: '={{ { none: "No memory", conversation: "Conversation memory", node: "Node memory" }[$parameter["memoryMode"]] }}',
		description: 'Calls a chat model with conversation- or node-scoped memory kept on local disk or S3',
		defaults: { name: 'LLM with Memory' },
		inputs: [
			NodeConnectionTypes.Main,
			{ type: NodeConnectionTypes.AiLanguageModel, displayName: 'Model', required: true, maxConnections: 1 },
		],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'llmMemoryS3Api',
				required: true,
				testedBy: 'llmMemoryS3ApiTest',
				displayOptions: { show: { storage: ['s3'], memoryMode: ['conversation', 'node'] } },
			},
		],
		properties,
	};

	methods = {
		credentialTest: {
			async llmMemoryS3ApiTest(
				this: ICredentialTestFunctions,
				credential: ICredentialsDecrypted,
			): Promise<INodeCredentialTestResult> {
				try {
					const storage = s3Storage(credential.data ?? {});
					const support = await storage.checkAccess();
					const quoting = support.quoteIfMatch ? 'quoted' : 'unquoted';
					return { status: 'OK', message: `Reached ${storage.describe()}; conditional writes are enforced (${quoting} ETags)` };
				} catch (error) {
					return { status: 'Error', message: (error as Error).message };
				}
			},
		},
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const connected = await this.getInputConnectionData(NodeConnectionTypes.AiLanguageModel, 0);
		const model = Array.isArray(connected) ? connected[0] : connected;
		if (!isChatModel(model)) throw nodeError(this, 'Please connect a chat model to the Model input');
		const out: INodeExecutionData[] = [];

		for (let i = 0; i < items.length; i++) {
			try {
				out.push({ json: await runItem(this, i, model), pairedItem: { item: i } });
			} catch (error) {
				const failure = error instanceof NodeOperationError ? error : asNodeError(this, error, i);
				if (!this.continueOnFail()) throw failure;
				const partial = (error as { partialResult?: IDataObject }).partialResult ?? {};
				out.push({ json: { ...partial, error: failure.message }, pairedItem: { item: i } });
			}
		}
		return [out];
	}
}

/**
 * A NodeOperationError that keeps our message. (n8n replaces messages that mention an errno code,
 * like EISDIR or ECONNREFUSED, with generic text, which would hide what failed and where.)
 */
function nodeError(ctx: IExecuteFunctions, message: string, itemIndex?: number, description?: string): NodeOperationError {
	const error = new NodeOperationError(ctx.getNode(), message, { itemIndex, description });
	error.message = message;
	return error;
}

function asNodeError(ctx: IExecuteFunctions, error: unknown, itemIndex: number): NodeOperationError {
	const description = error instanceof InvalidIdError ? 'IDs must not contain / \\ .. or control characters, be empty or exceed 200 bytes.' : undefined;
	return nodeError(ctx, (error as Error)?.message ?? String(error), itemIndex, description);
}

function storageFor(ctx: IExecuteFunctions, itemIndex: number): Promise<MemoryStorage> | MemoryStorage {
	if (ctx.getNodeParameter('storage', itemIndex, 'localDisk') === 's3')
		return ctx.getCredentials('llmMemoryS3Api', itemIndex).then((c) => s3Storage(c, (m) => ctx.logger.warn(m)));
	return localDiskStorage(ctx.getNodeParameter('localFolder', itemIndex, '') as string);
}

async function openMemory(
	ctx: IExecuteFunctions,
	itemIndex: number,
	mode: 'conversation' | 'node',
	conversationId: string,
	options: Options,
	model: ChatModel,
): Promise<Memory> {
	const workflowId = ctx.getWorkflow().id;
	if (!workflowId)
		throw nodeError(ctx, 'Save the workflow first: memory is kept per workflow ID', itemIndex);
	const memoryOptions = {
		storage: await storageFor(ctx, itemIndex),
		model: modelNameOf(model),
		gzip: options.gzip === true,
		onWarning: (m: string) => ctx.logger.warn(m),
	};
	return mode === 'node'
		? new NodeTokenBufferMemory(workflowId, conversationId, ctx.getNode().id, memoryOptions)
		: new TokenBufferMemory(workflowId, conversationId, memoryOptions);
}

/** One item: resolve the conversation, read history, call the model, append the turn. */
async function runItem(ctx: IExecuteFunctions, i: number, model: ChatModel): Promise<IDataObject> {
	const mode = ctx.getNodeParameter('memoryMode', i, 'conversation') as MemoryMode;
	const prompt = ctx.getNodeParameter('text', i, '') as string;
	if (typeof prompt !== 'string' || prompt.trim() === '')
		throw nodeError(ctx, 'No prompt specified', i, "Expected a 'chatInput' field from a Chat Trigger, or set the prompt source to \"Define Below\".");
	const system = ctx.getNodeParameter('systemMessage', i, '') as string;
	const options = ctx.getNodeParameter('options', i, {}) as Options;
	const files = await itemFiles(ctx, i, options.binaryPropertyNames);
	const conversationId = mode === 'none' ? undefined : conversationIdOf(ctx.getNodeParameter('conversationId', i, ''));

	if (mode === 'node' && !conversationId)
		throw nodeError(ctx, 'Node memory needs a conversation ID, but none was found', i, MISSING_ID_HELP);

	let memory: Memory | undefined;
	let history: History | undefined;
	if (mode !== 'none' && conversationId) {
		memory = await openMemory(ctx, i, mode, conversationId, options, model);
		if (options.messageId) {
			const id = validateId('message_id', options.messageId);
			if ((await memory.messages()).some((m) => m.message_id === id))
				throw nodeError(ctx, `Message ID "${id}" is already stored in this memory`, i);
		}
		history = await memory.getHistoryPromptMessages({
			parentMessageId: options.parentMessageId || undefined,
			maxTokenLimit: options.maxHistoryTokens,
			messageLimit: options.window,
		});
	}

	const userContent: PromptMessage['content'] = files.length
		? [...inputFileParts(files), ...(prompt ? [{ type: 'text', text: prompt } as ContentPart] : [])]
		: prompt;
	const messages: PromptMessage[] = [
		...(system ? [{ role: 'system' as const, content: system }] : []),
		...(history?.messages ?? []),
		{ role: 'user', content: userContent },
	];

	let answer: string;
	try {
		answer = replyText(await model.invoke(messages, { signal: ctx.getExecutionCancelSignal() }));
	} catch (error) {
		throw nodeError(ctx, `The model call failed: ${(error as Error).message}`, i, 'Nothing was added to memory.');
	}

	const result: IDataObject = { output: answer, text: answer, conversationId: conversationId ?? null };
	if (!memory || !history) {
		result.messageId = null;
		result.parentMessageId = null;
		result.memory =
			mode === 'none'
				? { mode }
				: { mode, enabled: false, reason: `No conversation ID was found, so this call ran without memory. ${MISSING_ID_HELP}` };
		return result;
	}

	const added = await memory.addMessages({
		messageId: options.messageId || undefined,
		parentMessageId: options.parentMessageId || undefined,
		userContent: prompt,
		userFiles: files,
		assistantContent: answer,
	});
	Object.assign(result, {
		messageId: added.messageId,
		parentMessageId: added.parentMessageId,
		memory: {
			mode,
			key: memory.key,
			historyMessages: history.messages.length,
			historyTokens: history.tokens,
			droppedTurns: history.droppedTurns,
			...(history.skippedFiles.length ? { skippedFiles: history.skippedFiles } : {}),
		},
	});
	try {
		await memory.flush();
	} catch (error) {
		const message = `The answer was generated but could not be saved to memory: ${(error as Error).message}`;
		throw Object.assign(nodeError(ctx, message, i), { partialResult: result });
	}
	return result;
}
