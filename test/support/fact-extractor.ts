// A deterministic stand-in for the chat model a fact extraction calls (tests and bench/facts.ts),
// called in-process: the demo model's own answer to an extraction request (demo/facts.ts), which
// finds first-person statements in the user's messages ("I live in Lisbon", "I have a dog named
// Biscuit", "I moved to Porto", "I sold my car") and answers with the JSON operations a model would,
// each quoting the words it came from. No model is involved: the figures it gives are the engine's.
import { factsAnswer, readFactsRequest } from '../../demo/facts';
import type { ChatMessage } from '../../demo/messages';
import type { PromptMessage } from '../../src/internal';

/** The facts known and the new messages of an extraction request. */
export function readRequest(request: PromptMessage[]) {
	return readFactsRequest(request as unknown as ChatMessage[]);
}

/** What the stand-in answers a request with (a JSON string, as a model would). */
export function standInAnswer(request: PromptMessage[]): string {
	return factsAnswer(request as unknown as ChatMessage[]);
}

/** An extractor that answers with the stand-in and counts its calls and request sizes. */
export function standInExtractor() {
	const calls: PromptMessage[][] = [];
	const extract = async (request: PromptMessage[]) => {
		calls.push(request);
		return standInAnswer(request);
	};
	return { extract, calls };
}
