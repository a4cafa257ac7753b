// Child process for the versioned-data concurrency test: saves versions on one branch.
//   version-writer.ts <config-json>
// config: { backend: 'disk'|'s3', root?, endpoint?, bucket?, conversationId, saves, tag, startAt }
// Prints { saves: [{ summary, version, parent }], conflicts } (conflicts: conditional writes that lost a race).
import { VersionedData } from '../../src/internal';
import { conflictCountingStorage, waitUntil } from './rgw';
import type { WorkerBackend } from './rgw';

interface Config extends WorkerBackend {
	conversationId: string;
	saves: number;
	tag: string;
	/** Wall-clock time (ms) to start at, so that every writer saves at the same time. */
	startAt: number;
}

const config = JSON.parse(process.argv[2]) as Config;
const { storage, conflicts } = conflictCountingStorage(config);

(async () => {
	const vd = new VersionedData({
		storage,
		appId: 'wf',
		conversationId: config.conversationId,
		maxAttempts: 60,
	});
	await waitUntil(config.startAt);
	const saves = [];
	for (let j = 0; j < config.saves; j++) {
		const summary = `${config.tag}-${j}`;
		const r = await vd.saveVersion({ data: { writer: config.tag, j }, summary });
		saves.push({ summary, version: r.version, parent: r.parent });
	}
	process.stdout.write(JSON.stringify({ saves, conflicts: conflicts() }));
})().catch((e: unknown) => {
	process.stderr.write(`${(e as Error).stack}\n`);
	process.exit(1);
});
