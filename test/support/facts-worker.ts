// Child process for the facts concurrency test: learns facts of one shared user, each learn in a
// conversation of its own, with the deterministic stand-in extractor.
//   facts-worker.ts <config-json>
// config: { backend: 'disk'|'s3', root?, endpoint?, bucket?, tag, learns, startAt }
// Prints { learned: [{ added, attempts, error? }], conflicts } (conflicts: conditional writes that lost a race).
import { Facts } from '../../src/internal';
import { standInExtractor } from './fact-extractor';
import { conflictCountingStorage, waitUntil } from './rgw';
import type { WorkerBackend } from './rgw';

interface Config extends WorkerBackend {
	tag: string;
	learns: number;
	/** Wall-clock time (ms) to start at, so that every writer learns at the same time. */
	startAt: number;
}

const config = JSON.parse(process.argv[2]) as Config;
const { storage, conflicts } = conflictCountingStorage(config);

(async () => {
	const facts = new Facts({
		storage,
		space: 'base',
		subject: { userId: 'shared' },
		maxAttempts: 200,
	});
	const { extract } = standInExtractor();
	await waitUntil(config.startAt);
	const learned = [];
	for (let j = 0; j < config.learns; j++) {
		const at = new Date().toISOString();
		const r = await facts.learn({
			extract,
			source: { workflowId: 'wf', conversationId: `${config.tag}-${j}` },
			messages: [
				{
					messageId: `${config.tag}-${j}:user`,
					role: 'user',
					text: `I have item ${config.tag} ${j}.`,
					at,
				},
				{ messageId: `${config.tag}-${j}`, role: 'assistant', text: 'Noted.', at },
			],
			force: true,
		});
		learned.push({ added: r.added.map((f) => f.text), attempts: r.attempts, error: r.error });
	}
	process.stdout.write(JSON.stringify({ learned, conflicts: conflicts() }));
})().catch((e: unknown) => {
	process.stderr.write(`${(e as Error).stack}\n`);
	process.exit(1);
});
