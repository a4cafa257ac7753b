// The owner account of a fresh n8n, for tests that use its REST API or log in to its editor.

/** An owner for test instances (n8n asks for one before its editor or REST API can be used). */
export const TEST_OWNER = {
	email: 'ui-test@example.com',
	firstName: 'UI',
	lastName: 'Test',
	password: 'UiTestPassw0rd',
};

/**
 * Sets up the owner of a fresh n8n and returns the session cookie n8n answers with (for its REST API).
 * The server may still be finishing its start-up when /healthz first answers: retried briefly.
 */
export async function setUpOwner(baseUrl: string, owner = TEST_OWNER): Promise<string> {
	let last = '';
	for (let attempt = 0; attempt < 20; attempt++) {
		const res = await fetch(`${baseUrl}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(owner),
		}).catch((e: Error) => e);
		if (!(res instanceof Error) && res.ok)
			return res.headers
				.getSetCookie()
				.map((c) => c.split(';')[0])
				.join('; ');
		last = res instanceof Error ? res.message : `${res.status} ${await res.text()}`;
		await new Promise((r) => setTimeout(r, 500));
	}
	throw new Error(`POST /rest/owner/setup failed: ${last}`);
}
