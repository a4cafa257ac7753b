/**
 * The store's inputs, an expression n8n evaluates against the node's parameters: the optional Embedding
 * input with Long-Term Memory (the only part that uses it), the Summary Model input, required, once
 * When History Exceeds the Budget is Summarize Older Turns, and the Facts Model input, required, with
 * Remember Facts. The two model inputs are told apart by their order (Summary Model first). Written as
 * text because n8n evaluates the expression, not this module.
 */
export const STORE_INPUTS = `={{
	((parameters) => {
		const inputs = [];
		if (parameters && parameters.longTermMemory === true)
			inputs.push({ type: 'ai_embedding', displayName: 'Embedding', required: false, maxConnections: 1 });
		if (parameters && parameters.historyOverflow === 'summarize')
			inputs.push({ type: 'ai_languageModel', displayName: 'Summary Model', required: true, maxConnections: 1 });
		if (parameters && parameters.rememberFacts === true)
			inputs.push({ type: 'ai_languageModel', displayName: 'Facts Model', required: true, maxConnections: 1 });
		return inputs;
	})($parameter)
}}`;

/** The index of the Facts Model among the store's chat model inputs (after the Summary Model, if shown). */
export function factsModelInput(summarizing: boolean): number {
	return summarizing ? 1 : 0;
}
