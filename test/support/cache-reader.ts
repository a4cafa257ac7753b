// A long-lived reader in another process, for the cache tests: it keeps its own caches between
// commands, so a test can warm them, change storage from the test process, and ask again.
//   cache-reader.ts <backend-json>     one JSON command per stdin line, one JSON answer per stdout line
// Commands: { op: 'current' | 'version' | 'history' | 'export' | 'rollback', conversationId, n? }
//           { op: 'history-messages', conversationId }   chat memory of the conversation (contents)
//           { op: 'search', baseId, query, sessionId? }   Memory Base search (texts; test embedder)
// Answers: { ok: value } or { error: name, message }.
import { createInterface } from 'node:readline';

import {
	ConversationMemory,
	exportConversation,
	MemoryBase,
	VersionedData,
} from '../../src/internal';
import { TestEmbedder } from './embeddings';
import { workerStorage } from './rgw';
import type { WorkerBackend } from './rgw';

const storage = workerStorage(JSON.parse(process.argv[2]) as WorkerBackend);

interface Command {
	op: string;
	conversationId?: string;
	n?: number;
	baseId?: string;
	query?: string;
	sessionId?: string;
}

async function answer(c: Command): Promise<unknown> {
	const vd = () =>
		new VersionedData({ storage, appId: 'wf', conversationId: c.conversationId as string });
	switch (c.op) {
		case 'current':
			return (await vd().getCurrent())?.data ?? null;
		case 'version':
			return (await vd().getVersion(c.n as number)).data;
		case 'history':
			return (await vd().history()).entries.map((e) => `${e.version}:${e.summary}`);
		case 'export':
			return (
				await exportConversation(storage, 'wf', c.conversationId as string)
			).versionedData.versions.map((v) => v.data);
		case 'rollback':
			return (await vd().rollback(c.n as number)).data;
		case 'history-messages': {
			const memory = new ConversationMemory('wf', c.conversationId as string, {
				storage,
				tokenCounter: { encoding: 'utf8-bytes', count: (t: string) => Buffer.byteLength(t) },
			});
			const h = await memory.getHistoryPromptMessages({});
			return h.messages.map((m) => m.content);
		}
		case 'search': {
			const base = new MemoryBase({
				storage,
				baseId: c.baseId as string,
				embedder: new TestEmbedder(),
			});
			// Without a conversation, every user's memories: said explicitly, as the engine requires.
			const scope = c.sessionId ? { sessionId: c.sessionId } : { allUsers: true };
			const hits = await base.search(c.query as string, { k: 20, ...scope });
			return hits.map((h) => h.text);
		}
		default:
			throw new Error(`unknown op ${c.op}`);
	}
}

const lines = createInterface({ input: process.stdin });
let chain = Promise.resolve();
lines.on('line', (line) => {
	chain = chain.then(async () => {
		try {
			process.stdout.write(
				`${JSON.stringify({ ok: await answer(JSON.parse(line) as Command) })}\n`,
			);
		} catch (error) {
			const e = error as Error;
			process.stdout.write(`${JSON.stringify({ error: e.name, message: e.message })}\n`);
		}
	});
});
