export type ImageDetail = 'auto' | 'low' | 'high';

/**
 * A part of a multimodal message: text and images in the OpenAI chat format that LangChain chat models
 * accept; PDFs and audio as LangChain's standard data blocks (base64), the shape n8n's AI Agent sends a
 * PDF in, which each LangChain model converts to its provider's own (OpenAI: `file`, `input_audio`).
 */
export type ContentPart =
	| { type: 'text'; text: string }
	| { type: 'image_url'; image_url: { url: string; detail?: ImageDetail } }
	| {
			type: 'file';
			source_type: 'base64';
			mime_type: string;
			data: string;
			metadata: { filename: string };
	  }
	| { type: 'audio'; source_type: 'base64'; mime_type: string; data: string };

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
