// Child process for the sealed-log storage tests: appends turns to one conversation with small sealing
// limits, so its flushes seal segments and cascade indexes while other processes do the same.
//   sealing-worker.ts <config-json>
// config: { backend: 'disk'|'s3', root?, endpoint?, bucket?, conversationId, tag, log,
//           turns? (omitted: one turn after another until killed), parallel? (turns in flight at once) }
// Even turns use the caller's ID `<tag>-<i>` (checked against all stored messages); odd turns let the
// engine draw a UUID. stdout: `flushing <i>`, `flushed <i> <id> <attempts>` per turn, then `done`.
import { TokenBufferMemory } from '../../src/internal';
import type { LogOptions } from '../../src/internal';
import { byteTokenCounter, workerStorage } from './rgw';

interface Config {
	backend: 'disk' | 's3';
	root?: string;
	endpoint?: string;
	bucket?: string;
	conversationId: string;
	tag: string;
	log: Partial<LogOptions>;
	turns?: number;
	parallel?: number;
}

const config = JSON.parse(process.argv[2]) as Config;
const storage = workerStorage(config);
const tokenCounter = byteTokenCounter;
const options = { storage, tokenCounter, log: config.log, maxFlushAttempts: 60, retryBaseMs: 2 };
const say = (line: string) => process.stdout.write(`${line}\n`);

async function turn(i: number): Promise<void> {
	const m = new TokenBufferMemory('wf', config.conversationId, options);
	await m.getHistoryPromptMessages({ maxTokenLimit: 200 });
	const messageId = i % 2 === 0 ? `${config.tag}-${i}` : undefined;
	const added = await m.addMessages({
		messageId,
		userContent: `question ${config.tag}-${i}`,
		assistantContent: `answer ${config.tag}-${i}`,
	});
	say(`flushing ${i}`);
	const r = await m.flush();
	say(`flushed ${i} ${added.messageId} ${r.attempts}`);
}

// Without a pause, a writer whose turns hit its own cached head appends every few milliseconds and
// starves the other: its rival's read-change-write window always spans one of its writes. A real turn
// includes a model call; 10-30 ms is still far more often than any chat, and keeps both writers going.
const pause = () => new Promise((r) => setTimeout(r, 10 + Math.random() * 20));

(async () => {
	if (config.turns === undefined)
		for (let i = 0; ; i++) {
			await turn(i);
			await pause();
		}
	const parallel = config.parallel ?? 1;
	for (let i = 0; i < config.turns; i += parallel)
		await Promise.all(
			Array.from({ length: Math.min(parallel, config.turns - i) }, (_, k) => turn(i + k)),
		);
	say('done');
})().catch((e: unknown) => {
	process.stderr.write(`${(e as Error).stack}\n`);
	process.exit(1);
});
