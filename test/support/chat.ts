/**
 * Talk to an n8n Chat Trigger exactly like the hosted chat widget (@n8n/chat) does:
 * POST {base}/webhook/{webhookId}/chat with JSON {"action":"sendMessage","sessionId","chatInput"}, or,
 * with files (the trigger's "Allow File Uploads"), multipart/form-data with those fields and one
 * `files` part per file, which the trigger hands on as binary data0, data1, …
 * With responseMode "lastNode" the reply is the last node's first item; the widget shows
 * `output ?? text ?? message`. A node error gives 500 {"message":"Error in workflow"}.
 */
import * as http from 'node:http';

export interface ChatReply {
	status: number;
	/** Parsed JSON body, or undefined when the body is not JSON. */
	json: any;
	/** Raw body text. */
	body: string;
	/** What the widget would display: output ?? text ?? message. */
	shown: string | undefined;
	/** Round-trip time in milliseconds. */
	ms: number;
}

export interface ChatTurn {
	sessionId: string;
	chatInput?: string;
	action?: 'sendMessage' | 'loadPreviousSession';
	metadata?: Record<string, unknown>;
	/** Files to upload with the message, as the widget attaches them. */
	files?: Array<{ name: string; type: string; data: Uint8Array }>;
}

/** The request body and its type: JSON, or the widget's multipart form with the files. */
async function chatBody(
	payload: Record<string, unknown>,
	turn: ChatTurn,
): Promise<{ body: Buffer; type: string }> {
	if (!turn.files?.length)
		return { body: Buffer.from(JSON.stringify(payload)), type: 'application/json' };
	const form = new FormData();
	for (const [key, value] of Object.entries(payload))
		form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
	for (const f of turn.files) form.append('files', new Blob([f.data], { type: f.type }), f.name);
	// Response encodes the form as fetch would, boundary included in its content type.
	const encoded = new Response(form);
	return {
		body: Buffer.from(await encoded.arrayBuffer()),
		type: encoded.headers.get('content-type') as string,
	};
}

/**
 * POST on a connection of its own. fetch reuses idle keep-alive sockets, and n8n's server closes
 * them after 5 s: a turn sent at that moment fails with "other side closed" though nothing is wrong,
 * and resending a chat turn could store it twice. A fresh connection per turn has no such race.
 */
function postFresh(
	url: string,
	request: { body: Buffer; type: string },
	timeoutMs: number,
): Promise<{ status: number; body: string }> {
	const { body, type } = request;
	return new Promise((resolve, reject) => {
		const req = http.request(
			url,
			{
				method: 'POST',
				agent: false,
				headers: { 'Content-Type': type, 'Content-Length': body.byteLength },
				timeout: timeoutMs,
			},
			(res) => {
				const chunks: Buffer[] = [];
				res.on('data', (c: Buffer) => chunks.push(c));
				res.on('end', () =>
					resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
				);
				res.on('error', reject);
			},
		);
		req.on('timeout', () => req.destroy(new Error(`chat request timed out after ${timeoutMs} ms`)));
		req.on('error', reject);
		req.end(body);
	});
}

/** `http://127.0.0.1:5690` + webhookId -> the public chat URL. */
export function chatUrl(baseUrl: string, webhookId: string): string {
	return `${baseUrl.replace(/\/+$/, '')}/webhook/${webhookId}/chat`;
}

export async function sendChat(
	url: string,
	turn: ChatTurn,
	timeoutMs = 60_000,
): Promise<ChatReply> {
	const payload: Record<string, unknown> = {
		action: turn.action ?? 'sendMessage',
		sessionId: turn.sessionId,
	};
	if (turn.chatInput !== undefined) payload.chatInput = turn.chatInput;
	if (turn.metadata !== undefined) payload.metadata = turn.metadata;
	const started = performance.now();
	const res = await postFresh(url, await chatBody(payload, turn), timeoutMs);
	const body = res.body;
	const ms = performance.now() - started;
	let json: any;
	try {
		json = JSON.parse(body);
	} catch {
		json = undefined;
	}
	const shown = json?.output ?? json?.text ?? json?.message;
	return {
		status: res.status,
		json,
		body,
		shown: typeof shown === 'string' ? shown : undefined,
		ms,
	};
}
