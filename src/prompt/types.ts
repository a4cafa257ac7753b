/** A part of a multimodal message, in the OpenAI chat format that LangChain chat models accept. */
export type ImageDetail = 'auto' | 'low' | 'high';

export type ContentPart =
	| { type: 'text'; text: string }
	| { type: 'image_url'; image_url: { url: string; detail?: ImageDetail } };

/** A tool call of an assistant message, as LangChain's AIMessage.tool_calls holds it. */
export interface ToolCall {
	id: string;
	name: string;
	args: Record<string, unknown>;
}

/**
 * A plain role/content message, ready for a chat model's invoke() (LangChain coerces it). Assistant
 * messages of a tool turn carry `tool_calls`; tool results have role "tool" and `tool_call_id`.
 */
export interface PromptMessage {
	role: 'system' | 'user' | 'assistant' | 'tool';
	content: string | ContentPart[];
	tool_calls?: ToolCall[];
	tool_call_id?: string;
	/** The tool's name, on tool messages. */
	name?: string;
}
