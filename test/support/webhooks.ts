// Calling an n8n workflow's webhook from a test, as a client would.

/** A webhook's answer: its status, and its body as JSON (or as text when it is not JSON). */
export interface WebhookReply {
	status: number;
	json: any;
}

/** POSTs a JSON body to `{baseUrl}/webhook/{pathName}` (60 s at most). */
export async function postWebhook(
	baseUrl: string,
	pathName: string,
	body: Record<string, any>,
): Promise<WebhookReply> {
	const res = await fetch(`${baseUrl}/webhook/${pathName}`, {
		method: 'POST',
		headers: { 'Content-Type': 'application/json' },
		body: JSON.stringify(body),
		signal: AbortSignal.timeout(60_000),
	});
	const text = await res.text();
	let json: any;
	try {
		json = JSON.parse(text);
	} catch {
		json = text;
	}
	return { status: res.status, json };
}
