// Child process for concurrency and crash tests: appends turns to one memory key.
//   append-worker.ts <config-json>
// config: { backend: 'disk'|'s3', root?, endpoint?, bucket?, turns, tag, bigBytes?, forever? }
import { TokenBufferMemory } from '../../src/internal';
import { workerStorage } from './rgw';

interface Config {
	backend: 'disk' | 's3';
	root?: string;
	endpoint?: string;
	bucket?: string;
	turns: number;
	tag: string;
	/** Size of each answer, to make flushes slow enough to be interrupted. */
	bigBytes?: number;
	/** Keep appending one turn at a time until killed. */
	forever?: boolean;
}

const config = JSON.parse(process.argv[2]) as Config;
const storage = workerStorage(config);
const options = { storage, model: 'gpt-4o-mini', maxFlushAttempts: 40 };
const answer = (i: number) =>
	config.bigBytes
		? `${config.tag}-${i} `.padEnd(config.bigBytes, 'x')
		: `answer ${config.tag}-${i}`;

async function one(i: number) {
	const m = new TokenBufferMemory('wf', 'race', options);
	await m.getHistoryPromptMessages();
	const t = await m.addMessages({
		messageId: `${config.tag}-${i}`,
		userContent: `question ${config.tag}-${i}`,
		assistantContent: answer(i),
	});
	if (config.forever) process.stdout.write(`flushing ${i}\n`);
	const r = await m.flush();
	return { id: t.messageId, attempts: r.attempts };
}

(async () => {
	if (config.forever) {
		for (let i = 0; ; i++) {
			await one(i);
			process.stdout.write(`flushed ${i}\n`);
		}
	}
	const results = await Promise.all(Array.from({ length: config.turns }, (_, i) => one(i)));
	process.stdout.write(JSON.stringify(results));
})().catch((e: unknown) => {
	process.stderr.write(`${(e as Error).stack}\n`);
	process.exit(1);
});
