// Facts' keys: one folder per subject (a user, or a conversation without a User ID) within a facts
// space (the Memory Base ID: workflows sharing a base share a user's facts). Each folder holds the
// subject's facts document as versions (snapshots/layout.ts): write-once versions, a branch head moved
// by compare-and-swap, and the next-number hint.
import { validateId, validateKeyPrefix } from '../keys/ids';
import { layoutUnder, parseVersionObject } from '../snapshots/layout';
import type { VersionLayout, VersionObjectKey } from '../snapshots/layout';

export const FACTS_ROOT = 'facts';

/** Whose facts: a user (by User ID), or one conversation when no User ID is set. */
export type FactsSubject = { userId: string } | { conversationId: string };

/** The subject of a turn's facts: the user when a User ID is set, otherwise the conversation. */
export function factsSubject(userId: string | undefined, conversationId: string): FactsSubject {
	return userId !== undefined ? { userId } : { conversationId };
}

/** The folder names of the two kinds of subject: a user ID and a conversation ID never meet in one key. */
const USERS = 'users';
const CONVERSATIONS = 'conversations';

/** A subject checked: its kind and its ID (validateId), as keys and reports name it. */
export interface SubjectRef {
	kind: 'user' | 'conversation';
	id: string;
}

/** The subject, checked (an ID that cannot be a key segment is an InvalidIdError naming the field). */
export function subjectRef(subject: FactsSubject): SubjectRef {
	if ('userId' in subject && subject.userId !== undefined)
		return { kind: 'user', id: validateId('user_id', subject.userId) };
	const conversationId = (subject as { conversationId?: unknown }).conversationId;
	return { kind: 'conversation', id: validateId('conversation_id', conversationId) };
}

/** `{prefix}facts/`: every space. */
export function factsRoot(keyPrefix?: string): string {
	return `${validateKeyPrefix('key prefix', keyPrefix)}${FACTS_ROOT}/`;
}

/** `{prefix}facts/{space}/`: every subject of one space. */
export function factsSpacePrefix(space: string, keyPrefix?: string): string {
	return `${factsRoot(keyPrefix)}${validateId('facts_space', space)}/`;
}

/** `{prefix}facts/{space}/users/{user_id}/` or `…/conversations/{conversation_id}/`. */
export function factsPrefix(space: string, subject: SubjectRef, keyPrefix?: string): string {
	const folder = subject.kind === 'user' ? USERS : CONVERSATIONS;
	const field = subject.kind === 'user' ? 'user_id' : 'conversation_id';
	return `${factsSpacePrefix(space, keyPrefix)}${folder}/${validateId(field, subject.id)}/`;
}

/** Where a subject's facts document keeps its versions. */
export function factsLayout(space: string, subject: SubjectRef, keyPrefix?: string): VersionLayout {
	return layoutUnder(
		factsPrefix(space, subject, keyPrefix),
		`${space}/${subject.kind}:${subject.id}`,
	);
}

/** What a facts key names: its space and subject, and the version object (undefined: another object). */
export interface FactsKey {
	space: string;
	subject: SubjectRef;
	/** The subject's folder. */
	prefix: string;
	object?: VersionObjectKey;
}

/** What a key under `{prefix}facts/` names; undefined for keys outside a subject's folder. */
export function parseFactsKey(key: string, keyPrefix?: string): FactsKey | undefined {
	const root = factsRoot(keyPrefix);
	if (!key.startsWith(root)) return undefined;
	const [space, folder, id, ...rest] = key.slice(root.length).split('/');
	const kind = folder === USERS ? 'user' : folder === CONVERSATIONS ? 'conversation' : undefined;
	if (!kind || !space || !id || rest.length === 0) return undefined;
	const prefix = `${root}${space}/${folder}/${id}/`;
	return { space, subject: { kind, id }, prefix, object: parseVersionObject(rest.join('/')) };
}
