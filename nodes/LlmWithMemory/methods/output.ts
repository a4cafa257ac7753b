import type { IDataObject } from 'n8n-workflow';

import type { AddedTurn } from '../../../src';
import { summaryOutput } from '../../shared/summary';
import type { OpenedMemory } from './memory';
import type { ItemInput } from './input';

/** Why a call in a memory mode ran without memory: the output says it, and so does the pane's hint. */
export function noMemoryReason(input: ItemInput): string {
	return `No session ID was found, so this call ran without memory. ${input.missingIdHelp ?? ''}`.trim();
}

/** Step 5: the output item (the answer under `output`, which the chat widget shows). */
export function formatOutput(
	input: ItemInput,
	answer: string,
	opened?: OpenedMemory,
	added?: AddedTurn,
): IDataObject {
	const result: IDataObject = {
		output: answer,
		text: answer,
		conversationId: input.conversationId ?? null,
	};
	if (!opened || !added) {
		const memory =
			input.mode === 'none'
				? { mode: input.mode }
				: {
						mode: input.mode,
						enabled: false,
						reason: noMemoryReason(input),
					};
		return { ...result, messageId: null, parentMessageId: null, memory };
	}
	const { history, memory, longTerm } = opened;
	return {
		...result,
		messageId: added.messageId,
		parentMessageId: added.parentMessageId,
		memory: {
			mode: input.mode,
			key: memory.key,
			historyMessages: history.messages.length,
			historyTokens: history.tokens,
			droppedTurns: history.droppedTurns,
			...(history.skippedFiles.length ? { skippedFiles: history.skippedFiles } : {}),
			...(history.summary ? { summary: summaryOutput(history.summary) } : {}),
			...(longTerm ? { longTermMemory: longTerm.summary(opened.recalled, opened.captured) } : {}),
		},
	};
}
