// What the facts tests share: a facts store on a temporary disk, chat messages as learning reads them,
// and extractors that answer as scripted.
import { Facts, LocalDiskStorage } from '../../../src/internal';
import type {
	FactsOptions,
	MemoryStorage,
	PromptMessage,
	ReadMessage,
} from '../../../src/internal';
import { tempDir } from '../../support/storages';

export const SOURCE = { workflowId: 'wf', conversationId: 'c1' };

export function factsOn(
	storage: MemoryStorage = new LocalDiskStorage({ root: tempDir('facts') }),
	extra: Partial<FactsOptions> = {},
): Facts {
	return new Facts({ storage, space: 'base', subject: { userId: 'alice' }, ...extra });
}

let clock = Date.parse('2026-03-01T10:00:00Z');

/** A turn as learning reads it: the user's message and the answer, stamped a minute apart. */
export function turn(id: string, user: string, answer = 'Noted.'): ReadMessage[] {
	clock += 60_000;
	const at = new Date(clock).toISOString();
	return [
		{ messageId: `${id}:user`, role: 'user', text: user, at, tokens: Math.ceil(user.length / 4) },
		{ messageId: id, role: 'assistant', text: answer, at, tokens: Math.ceil(answer.length / 4) },
	];
}

/** An extractor answering `answers` in turn (a function gets the request), counting its calls. */
export function scripted(...answers: Array<string | ((r: PromptMessage[]) => string)>) {
	const calls: PromptMessage[][] = [];
	const extract = async (request: PromptMessage[]) => {
		calls.push(request);
		const a = answers[Math.min(calls.length - 1, answers.length - 1)];
		return typeof a === 'function' ? a(request) : a;
	};
	return { extract, calls };
}

export const ops = (...operations: object[]) => JSON.stringify({ operations });
