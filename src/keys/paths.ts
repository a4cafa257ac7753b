// The key shapes the per-workflow memories share: a root folder, the app (workflow), the conversation.
import { validateId, validateKeyPrefix } from './ids';

/** A root's folder of one app: `{prefix}{root}/{app_id}/`. */
export function appFolder(root: string, appId: string, prefix?: string): string {
	return `${validateKeyPrefix('key prefix', prefix)}${root}/${validateId('app_id', appId)}/`;
}

/**
 * A conversation's path under a root, without an ending: `{prefix}{root}/{app_id}/{conversation_id}`
 * (its folder with "/", its document with ".json").
 */
export function conversationPath(
	root: string,
	appId: string,
	conversationId: string,
	prefix?: string,
): string {
	return (
		validateKeyPrefix('key prefix', prefix) +
		`${root}/${validateId('app_id', appId)}/${validateId('conversation_id', conversationId)}`
	);
}
