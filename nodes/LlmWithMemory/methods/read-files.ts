import type { IExecuteFunctions } from 'n8n-workflow';

import { readFiles } from '../../../src/prompt/file-text';
import { encodingForModel, TiktokenCounter } from '../../../src/tokens/tokens';
import type { ItemInput } from './input';
import { warn } from './memory';
import { modelNameOf } from './model';
import type { ChatModel } from './model';

/**
 * Step 1c: reads the item's text files and PDFs for the model, once: their text (cut to Max Tokens Per
 * File, counted with the tokenizer memory uses for this model) goes into this turn's prompt and is
 * stored with the file for later turns. A file that cannot be read is a warning; the model gets a note.
 */
export async function readItemFiles(
	ctx: IExecuteFunctions,
	input: ItemInput,
	model: ChatModel,
): Promise<ItemInput> {
	if (input.files.length === 0) return input;
	const counter = new TiktokenCounter(encodingForModel(modelNameOf(model)));
	const files = await readFiles(input.files, counter, {
		maxTokensPerFile: input.options.maxTokensPerFile,
	});
	for (const f of files)
		if (f.transferMethod !== 'remote_url' && f.read?.error)
			warn(ctx, `${f.name}: ${f.read.error}. The model got a note instead of its text.`);
	return { ...input, files };
}
