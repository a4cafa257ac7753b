/** A part of a multimodal message, in the OpenAI chat format that LangChain chat models accept. */
export type ImageDetail = 'auto' | 'low' | 'high';

export type ContentPart =
	| { type: 'text'; text: string }
	| { type: 'image_url'; image_url: { url: string; detail?: ImageDetail } };

/** A plain role/content message, ready for a chat model's invoke(). */
export interface PromptMessage {
	role: 'system' | 'user' | 'assistant';
	content: string | ContentPart[];
}
