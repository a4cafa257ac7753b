/**
 * n8n's REST API as a signed-in user, and a second user (a member) on a fresh n8n without SMTP: the
 * owner invites by email, n8n answers with the invite link (no mail is sent), and the link's IDs (or its
 * token, where n8n signs its links) accept the invitation. Each user of n8n 2.x has a personal project.
 *
 *   const owner = await RestSession.owner(n8n.baseUrl);
 *   const member = await owner.addMember(TEST_MEMBER);
 *   const project = await member.call('GET', '/rest/projects/personal');
 */
import { setUpOwner, TEST_OWNER } from './n8n-owner';

type Json = Record<string, any>;

/** A member for test instances (global role `global:member`, no admin rights). */
export const TEST_MEMBER = {
	email: 'member-test@example.com',
	firstName: 'Member',
	lastName: 'Test',
	password: 'MemberTestPassw0rd',
};

export interface RestReply {
	status: number;
	/** Parsed JSON body, or undefined when the body is not JSON. */
	json: any;
	text: string;
}

/** The `name=value` pairs of a response's Set-Cookie headers, as a Cookie header. */
function cookieOf(res: Response): string {
	return res.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.join('; ');
}

async function replyOf(res: Response): Promise<RestReply> {
	const text = await res.text();
	let json: any;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: res.status, json, text };
}

export class RestSession {
	constructor(
		readonly baseUrl: string,
		readonly cookie: string,
		/** The e-mail the session signed in with, for messages. */
		readonly email: string,
	) {}

	/** The owner of a fresh n8n, set up now. */
	static async owner(baseUrl: string): Promise<RestSession> {
		return new RestSession(baseUrl, await setUpOwner(baseUrl), TEST_OWNER.email);
	}

	/** Signs in with e-mail and password (n8n 2.x names the field `emailOrLdapLoginId`). */
	static async login(baseUrl: string, email: string, password: string): Promise<RestSession> {
		const res = await fetch(`${baseUrl}/rest/login`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ emailOrLdapLoginId: email, password }),
		});
		const reply = await replyOf(res);
		if (!res.ok) throw new Error(`POST /rest/login as ${email}: ${reply.status} ${reply.text}`);
		return new RestSession(baseUrl, cookieOf(res), email);
	}

	/** Any request; the reply whatever its status. */
	async request(method: string, path: string, body?: unknown): Promise<RestReply> {
		const res = await fetch(`${this.baseUrl}${path}`, {
			method,
			headers: { cookie: this.cookie, 'content-type': 'application/json' },
			...(body === undefined ? {} : { body: JSON.stringify(body) }),
		});
		return await replyOf(res);
	}

	/** A request that must succeed; its `data` (n8n wraps most answers in it), else the whole body. */
	async call(method: string, path: string, body?: unknown): Promise<any> {
		const reply = await this.request(method, path, body);
		if (reply.status < 200 || reply.status >= 300)
			throw new Error(`${method} ${path} as ${this.email}: ${reply.status} ${reply.text}`);
		return reply.json && 'data' in reply.json ? reply.json.data : reply.json;
	}

	/**
	 * Invites a member as this (owner) session and accepts the invitation as they would from the link;
	 * returns the member's session.
	 */
	async addMember(member = TEST_MEMBER): Promise<RestSession> {
		const [invited] = (await this.call('POST', '/rest/invitations', [
			{ email: member.email, role: 'global:member' },
		])) as Json[];
		const link = invited?.user?.inviteAcceptUrl;
		if (typeof link !== 'string')
			throw new Error(`n8n gave no invite link for ${member.email}: ${JSON.stringify(invited)}`);
		const params = new URL(link).searchParams;
		const profile = {
			firstName: member.firstName,
			lastName: member.lastName,
			password: member.password,
		};
		const token = params.get('token');
		const [path, body] = token
			? ['/rest/invitations/accept', { token, ...profile }]
			: [
					`/rest/invitations/${params.get('inviteeId')}/accept`,
					{ inviterId: params.get('inviterId'), ...profile },
				];
		const res = await fetch(`${this.baseUrl}${path}`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(body),
		});
		if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
		return await RestSession.login(this.baseUrl, member.email, member.password);
	}
}
