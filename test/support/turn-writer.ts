// Child process for the fault-injection tests: appends turns to one conversation memory and reports,
// one line each, what it is doing, so the parent knows which turns were acknowledged before it was killed.
//   turn-writer.ts <config-json>
// config: { backend: 'disk'|'s3', root?, endpoint?, bucket?, conversationId, tag,
//           turns?      (omitted: one turn after another until killed),
//           parallel?   (with turns: start them all at once, as concurrent executions of one n8n would),
//           bigBytes?   (size of each answer), pauseMs? (random pause up to this between turns) }
// stdout lines:
//   ready                       modules loaded, about to write
//   flushing <id>               flush() called
//   flushed <id> <attempts>     flush() resolved: the turn is acknowledged
//   failed <id> <error>         flush() (or the read before it) rejected
//   done                        every turn settled (not printed in the endless mode)
import { TokenBufferMemory } from '../../src/internal';
import type { TurnWriterConfig } from './faults';
import { byteTokenCounter, workerStorage } from './rgw';

const config = JSON.parse(process.argv[2]) as TurnWriterConfig;
const storage = workerStorage(config);
const tokenCounter = byteTokenCounter;
const options = { storage, tokenCounter, maxFlushAttempts: 40 };
const say = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One turn as an n8n execution does it: a fresh memory object, read history, append, flush. */
async function turn(i: number): Promise<void> {
	const id = `${config.tag}-${i}`;
	const answer = config.bigBytes ? `answer ${id} `.padEnd(config.bigBytes, 'x') : `answer ${id}`;
	try {
		const m = new TokenBufferMemory('wf', config.conversationId, options);
		await m.getHistoryPromptMessages();
		await m.addMessages({ messageId: id, userContent: `question ${id}`, assistantContent: answer });
		say(`flushing ${id}`);
		const r = await m.flush();
		say(`flushed ${id} ${r.attempts}`);
	} catch (e) {
		say(`failed ${id} ${(e as Error).name}: ${(e as Error).message.replace(/\n/g, ' ')}`);
	}
}

(async () => {
	say('ready');
	if (config.turns === undefined) {
		for (let i = 0; ; i++) {
			await turn(i);
			if (config.pauseMs) await sleep(Math.random() * config.pauseMs);
		}
	}
	if (config.parallel) await Promise.all(Array.from({ length: config.turns }, (_, i) => turn(i)));
	else for (let i = 0; i < config.turns; i++) await turn(i);
	say('done');
})().catch((e: unknown) => {
	process.stderr.write(`${(e as Error).stack}\n`);
	process.exit(1);
});
