// The scripted model of the in-process facts tests: it answers a fact extraction with the demo model's
// deterministic answer (demo/facts.ts: "I live in Lyon" → add "Lives in Lyon", quoted), every other
// call with the scripted echo. A plan makes the next extractions fail (a thrown error) or answer
// something that is not the JSON asked for.
import { factsAnswer, isFactsRequest } from '../../demo/facts';
import type { ChatMessage } from '../../demo/messages';
import { FACTS_START } from '../../src/internal';
import { echoReply, scriptedModelLog } from './scripted-model';
import type { NormalizedMessage, ScriptedModelCall } from './scripted-model';

export type FactsPlan = Array<'throw' | 'malformed'>;

/** Scripts model node `name`: extractions as the demo model answers them (or as `plan` says first). */
export function scriptFactsModel(name: string, plan: FactsPlan = []): void {
	scriptedModelLog.setHandler(name, (messages: NormalizedMessage[]) => {
		if (!isFactsRequest(messages as ChatMessage[])) return echoReply(messages);
		const next = plan.shift();
		if (next === 'throw') throw new Error('facts model unavailable');
		if (next === 'malformed') return 'Sure! The user seems to live somewhere nice.';
		return factsAnswer(messages as ChatMessage[]);
	});
}

export const isFactsCall = (c: ScriptedModelCall) => isFactsRequest(c.messages as ChatMessage[]);
/** The calls of model node `name` that were fact extractions, and those that were not. */
export const factsCalls = (name: string) => scriptedModelLog.forNode(name).filter(isFactsCall);
export const chatCalls = (name: string) =>
	scriptedModelLog.forNode(name).filter((c) => !isFactsCall(c));

/** The facts section a call's messages carried ('' when none). */
export function factsSectionOf(c: ScriptedModelCall): string {
	const text = c.messages.map((m) => m.content).join('\n');
	const at = text.indexOf(FACTS_START);
	return at < 0 ? '' : text.slice(at, text.indexOf('[End of what you know', at));
}
