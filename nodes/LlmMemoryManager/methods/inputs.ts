/** The operation that reads another chat memory through the Chat Memory input. */
export const IMPORT_FROM_CHAT_MEMORY = 'importFromChatMemory';
/** The operation that deletes a user's vectors through the optional Vector Store input. */
export const FORGET_USER = 'forgetUser';

/**
 * The Manager's inputs, an expression n8n evaluates against the node's parameters: Main always; the
 * Chat Memory input (any memory sub-node: n8n's Postgres, Redis or MongoDB Chat Memory, Simple Memory, …)
 * with Import From Chat Memory, which reads it; and with Forget User the optional Vector Store input,
 * the store of Memory Bases that keep their vectors in one (n8n's Postgres PGVector Store, …). Written as
 * text because n8n evaluates the expression, not this module. (As an AI Agent tool the node has no
 * inputs at all: n8n drops them.)
 */
export const MANAGER_INPUTS = `={{
	((parameters) => {
		const inputs = [{ type: 'main', displayName: '' }];
		if (parameters && parameters.operation === '${IMPORT_FROM_CHAT_MEMORY}')
			inputs.push({ type: 'ai_memory', displayName: 'Chat Memory', required: true, maxConnections: 1 });
		if (parameters && parameters.operation === '${FORGET_USER}')
			inputs.push({ type: 'ai_vectorStore', displayName: 'Vector Store', required: false, maxConnections: 1 });
		return inputs;
	})($parameter)
}}`;
