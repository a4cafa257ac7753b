/**
 * The node's inputs, an expression n8n evaluates against its parameters: the main input and the Model
 * always, and the optional Embedding input with Long-Term Memory (recall is by words without it, and
 * fuses word and semantic rankings with it). Written as text because n8n evaluates the expression.
 */
export const LLM_INPUTS = `={{
	((parameters) => {
		const inputs = ['main', { type: 'ai_languageModel', displayName: 'Model', required: true, maxConnections: 1 }];
		if (parameters && parameters.longTermMemory === true)
			inputs.push({ type: 'ai_embedding', displayName: 'Embedding', required: false, maxConnections: 1 });
		return inputs;
	})($parameter)
}}`;
