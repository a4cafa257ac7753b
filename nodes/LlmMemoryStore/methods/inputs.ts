/**
 * The store's inputs, an expression n8n evaluates against the node's parameters: the optional Embedding
 * input always, and the Summary Model input once When History Exceeds the Budget is Summarize Older
 * Turns (which needs it). Written as text because n8n evaluates the expression, not this module.
 */
export const STORE_INPUTS = `={{
	((parameters) => {
		const inputs = [{ type: 'ai_embedding', displayName: 'Embedding', required: false, maxConnections: 1 }];
		if (parameters && parameters.historyOverflow === 'summarize')
			inputs.push({ type: 'ai_languageModel', displayName: 'Summary Model', required: true, maxConnections: 1 });
		return inputs;
	})($parameter)
}}`;
