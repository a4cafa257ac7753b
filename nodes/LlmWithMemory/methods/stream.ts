import type { ChunkType, IExecuteFunctions } from 'n8n-workflow';

/**
 * One item's answer streamed to a Chat Trigger in Streaming mode, as n8n's AI Agent streams:
 * `begin`, one `item` per piece of text, then `end`, or `error` with the message. The chat widget keys a
 * bubble by node and run, so every item gets a complete begin … end/error sequence, even when it fails
 * before the model is called. sendChunk is typed void but is async in n8n: it is awaited to keep order.
 */
export class ChatStream {
	private begun = false;
	private closed = false;

	private constructor(
		private readonly ctx: IExecuteFunctions,
		private readonly itemIndex: number,
	) {}

	/** A stream when this execution streams to a chat (n8n's isStreaming()), else undefined. */
	static open(ctx: IExecuteFunctions, itemIndex: number): ChatStream | undefined {
		const streaming = typeof ctx.isStreaming === 'function' && ctx.isStreaming();
		return streaming ? new ChatStream(ctx, itemIndex) : undefined;
	}

	private async send(type: ChunkType, content?: string): Promise<void> {
		await (this.ctx.sendChunk(type, this.itemIndex, content) as unknown as
			Promise<void> | undefined);
	}

	async begin(): Promise<void> {
		if (this.begun) return;
		this.begun = true;
		await this.send('begin');
	}

	async item(text: string): Promise<void> {
		await this.begin();
		await this.send('item', text);
	}

	async end(): Promise<void> {
		if (this.closed) return;
		await this.begin();
		this.closed = true;
		await this.send('end');
	}

	async fail(message: string): Promise<void> {
		if (this.closed) return;
		await this.begin();
		this.closed = true;
		await this.send('error', message);
	}
}
