/**
 * POST a chat message to a Chat Trigger in Streaming mode, as the chat widget does, and read the answer
 * the way @n8n/chat reads it: newline-delimited JSON chunks `{ type: 'begin'|'item'|'end'|'error',
 * content?, metadata: { nodeId, nodeName, runIndex, itemIndex, timestamp } }`, each with the time it
 * arrived.
 */
export interface StreamChunk {
	type: string;
	content?: string;
	metadata?: {
		nodeId?: string;
		nodeName?: string;
		runIndex?: number;
		itemIndex?: number;
		timestamp?: number;
	};
	/** Milliseconds after the request was sent. */
	at: number;
}

export interface StreamReply {
	status: number;
	contentType: string | null;
	chunks: StreamChunk[];
	/** Lines that were not JSON (the widget would show them as text). */
	otherLines: string[];
	/** The item texts joined: what the widget's bubble shows. */
	text: string;
	ms: number;
}

export async function sendChatStream(
	url: string,
	turn: { sessionId: string; chatInput: string },
	timeoutMs = 60_000,
): Promise<StreamReply> {
	const started = performance.now();
	const res = await fetch(url, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify({
			action: 'sendMessage',
			sessionId: turn.sessionId,
			chatInput: turn.chatInput,
		}),
		signal: AbortSignal.timeout(timeoutMs),
	});
	const chunks: StreamChunk[] = [];
	const otherLines: string[] = [];
	const take = (line: string) => {
		if (!line.trim()) return;
		try {
			chunks.push({
				...(JSON.parse(line) as Omit<StreamChunk, 'at'>),
				at: performance.now() - started,
			});
		} catch {
			otherLines.push(line);
		}
	};
	let buffered = '';
	const decoder = new TextDecoder();
	for await (const part of res.body ?? []) {
		buffered += decoder.decode(part as Uint8Array, { stream: true });
		const lines = buffered.split('\n');
		buffered = lines.pop() ?? '';
		lines.forEach(take);
	}
	take(buffered + decoder.decode());
	const text = chunks
		.filter((c) => c.type === 'item')
		.map((c) => c.content ?? '')
		.join('');
	return {
		status: res.status,
		contentType: res.headers.get('content-type'),
		chunks,
		otherLines,
		text,
		ms: performance.now() - started,
	};
}
