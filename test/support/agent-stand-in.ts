/**
 * `testImageAgent`: a root node that uses a connected memory and model the way n8n's AI Agent does
 * (loadMemoryVariables → chat_history before the model call, the turn saved after it), but hands memory
 * the whole user message, images included. n8n's own AI Agent (2.8.4 and 2.40.7) passes a chat's binary
 * images to the model in a message of their own and saves only the turn's text; this stand-in plays a
 * caller that does pass them, so the LLM Memory Store's handling of images runs in a real execution.
 *
 * Per item: `chatInput` is the text; every image binary of the item becomes an image_url part (a data
 * URL, as the agent builds them). `save` picks how the turn is saved: `addMessages` (LangChain messages
 * through memory.chatHistory, as the agent does after a tool turn) or `saveContext`. With
 * `toolResultChars` above 0 (and `addMessages`), the turn is saved as a tool turn, as n8n's AI Agent 3
 * saves one: the user's message, an AI message calling `http_request`, that tool's result of this many
 * characters (a JSON table, `toolResult`) and the answer.
 */
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import {
	NodeConnectionTypes,
	type IExecuteFunctions,
	type INodeExecutionData,
	type INodeType,
	type INodeTypeDescription,
} from 'n8n-workflow';

export const TEST_IMAGE_AGENT_TYPE = 'n8n-nodes-engine-test.testImageAgent';

/** A tool result of `chars` characters: a JSON table dump, as an HTTP or database tool returns one. */
export function toolResult(chars: number, seed = 0): string {
	let out = '[';
	for (let i = 0; out.length < chars; i++)
		out += `{"id":${seed * 100_000 + i},"name":"row ${i}","price":${(i * 7) % 100}},`;
	return `${out.slice(0, chars - 1)}]`;
}

/** The messages n8n's AI Agent 3 hands chatHistory.addMessages after a turn that called one tool. */
function toolTurn(human: HumanMessage, output: string, id: string, chars: number): unknown[] {
	const args = { url: `https://example.test/${id}` };
	return [
		human,
		new AIMessage({
			content: `Calling http_request with input: ${JSON.stringify(args)}`,
			tool_calls: [{ id, name: 'http_request', args, type: 'tool_call' }],
		}),
		new ToolMessage({ content: toolResult(chars), tool_call_id: id, name: 'http_request' }),
		new AIMessage(output),
	];
}

interface Memory {
	loadMemoryVariables(values: object): Promise<{ chat_history: unknown[] }>;
	saveContext(input: object, output: object): Promise<void>;
	chatHistory: { addMessages(messages: unknown[]): Promise<void> };
}

interface Model {
	invoke(messages: unknown[]): Promise<{ content: unknown }>;
}

export class TestImageAgent implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Test Image Agent',
		name: 'testImageAgent',
		group: ['transform'],
		version: 1,
		description: 'Uses a memory and a model like the AI Agent, handing images to memory',
		defaults: { name: 'Test Image Agent' },
		inputs: [
			NodeConnectionTypes.Main,
			{ type: NodeConnectionTypes.AiLanguageModel, required: true, maxConnections: 1 },
			{ type: NodeConnectionTypes.AiMemory, required: true, maxConnections: 1 },
		],
		outputs: [NodeConnectionTypes.Main],
		properties: [
			{
				displayName: 'Save',
				name: 'save',
				type: 'options',
				default: 'addMessages',
				options: [
					{ name: 'Add Messages', value: 'addMessages' },
					{ name: 'Save Context', value: 'saveContext' },
				],
			},
			{
				displayName: 'Tool Result Characters',
				name: 'toolResultChars',
				type: 'number',
				default: 0,
			},
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const memory = (await this.getInputConnectionData(NodeConnectionTypes.AiMemory, 0)) as Memory;
		const model = (await this.getInputConnectionData(
			NodeConnectionTypes.AiLanguageModel,
			0,
		)) as Model;
		const out: INodeExecutionData[] = [];
		for (const [i, item] of this.getInputData().entries()) {
			const parts: object[] = [{ type: 'text', text: String(item.json.chatInput ?? '') }];
			for (const [name, data] of Object.entries(item.binary ?? {}))
				if (data.mimeType.startsWith('image/')) {
					const bytes = await this.helpers.getBinaryDataBuffer(i, name);
					const url = `data:${data.mimeType};base64,${bytes.toString('base64')}`;
					parts.push({ type: 'image_url', image_url: { url } });
				}
			const { chat_history } = await memory.loadMemoryVariables({});
			const human = new HumanMessage({ content: parts as never });
			const reply = await model.invoke([...chat_history, human]);
			const output = typeof reply.content === 'string' ? reply.content : '';
			const chars = this.getNodeParameter('toolResultChars', i, 0) as number;
			if (this.getNodeParameter('save', i) === 'saveContext')
				await memory.saveContext({ input: parts }, { output });
			else if (chars > 0)
				await memory.chatHistory.addMessages(
					toolTurn(human, output, `call_${this.getExecutionId()}_${i}`, chars),
				);
			else await memory.chatHistory.addMessages([human, new AIMessage(output)]);
			out.push({ json: { output }, pairedItem: { item: i } });
		}
		return [out];
	}
}
