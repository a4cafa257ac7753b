/**
 * Talk to an n8n Chat Trigger exactly like the hosted chat widget (@n8n/chat) does:
 * POST {base}/webhook/{webhookId}/chat with JSON {"action":"sendMessage","sessionId","chatInput"}, or,
 * with files (the trigger's "Allow File Uploads"), multipart/form-data with those fields and one
 * `files` part per file, which the trigger hands on as binary data0, data1, …
 * With responseMode "lastNode" the reply is the last node's first item; the widget shows
 * `output ?? text ?? message`. A node error gives 500 {"message":"Error in workflow"}.
 */

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

/** The request body: JSON, or the widget's form with the files. */
function chatBody(payload: Record<string, unknown>, turn: ChatTurn): RequestInit {
	if (!turn.files?.length)
		return { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) };
	const form = new FormData();
	for (const [key, value] of Object.entries(payload))
		form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
	for (const f of turn.files) form.append('files', new Blob([f.data], { type: f.type }), f.name);
	return { body: form }; // fetch sets the multipart boundary
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
	const res = await fetch(url, {
		method: 'POST',
		...chatBody(payload, turn),
		signal: AbortSignal.timeout(timeoutMs),
	});
	const body = await res.text();
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
