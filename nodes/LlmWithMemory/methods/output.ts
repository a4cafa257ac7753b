import type { IDataObject } from 'n8n-workflow';

import type { AddedTurn } from '../../../src/history/memory-types';
import { factsAbout } from '../../shared/facts/facts';
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
	// The output counts messages; the store's pane counts turns.
	const { turns, facts, ...report } = opened.turn.report();
	void turns;
	return {
		...result,
		messageId: added.messageId,
		parentMessageId: added.parentMessageId,
		memory: {
			mode: input.mode,
			key: opened.memory.key,
			...report,
			...(facts && opened.facts ? { facts: { ...factsAbout(opened.facts), ...facts } } : {}),
		} as IDataObject,
	};
}
