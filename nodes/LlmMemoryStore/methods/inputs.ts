/**
 * The store's inputs, an expression n8n evaluates against the node's parameters: the optional Embedding
 * input with Long-Term Memory (the only part that uses it), and the Summary Model input, required, once
 * When History Exceeds the Budget is Summarize Older Turns. Written as text because n8n evaluates the
 * expression, not this module.
 */
export const STORE_INPUTS = `={{
	((parameters) => {
		const inputs = [];
		if (parameters && parameters.longTermMemory === true)
			inputs.push({ type: 'ai_embedding', displayName: 'Embedding', required: false, maxConnections: 1 });
		if (parameters && parameters.historyOverflow === 'summarize')
			inputs.push({ type: 'ai_languageModel', displayName: 'Summary Model', required: true, maxConnections: 1 });
		return inputs;
	})($parameter)
}}`;
