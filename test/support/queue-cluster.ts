/**
 * n8n in queue mode on one machine, all real: PostgreSQL and Redis from Debian (scripts/services.sh),
 * one `n8n start` (main: UI, webhooks, the Chat Trigger) and N `n8n worker`s, each process with its own
 * user folder and the package installed there from its tarball, as next-wave.md §C describes.
 *
 *   const cluster = await startQueueCluster({ tarball, workflows, credentials, workers: 2 });
 *   cluster.main.chatUrl(webhookId); cluster.workers[0].kill(); await cluster.stop();
 *
 * Ports (defaults from QUEUE_N8N_PORT, 5790): main HTTP P, main task broker P+1, CLI broker P+2, and per
 * worker i a task broker P+10+2i and a health server P+11+2i.
 */
import { pgUp, redisUp, ensureServices } from './services';
import type { Postgres, Redis } from './services';
import { startN8n, startN8nWorker } from './n8n-harness';
import type { N8nInstance, N8nWorker, StartN8nOptions } from './n8n-harness';

export interface QueueClusterOptions {
	tarball: string;
	workflows?: StartN8nOptions['workflows'];
	credentials?: StartN8nOptions['credentials'];
	workers?: number;
	/** Jobs per worker at once (n8n's --concurrency; default 5). */
	concurrency?: number;
	port?: number;
	/** Extra environment for every process (main, workers and CLI). */
	env?: Record<string, string>;
}

export interface QueueCluster {
	main: N8nInstance;
	workers: N8nWorker[];
	pg: Postgres;
	redis: Redis;
	/** The environment every process runs with (for another worker, or the CLI). */
	env: Record<string, string>;
	/** Starts one more worker (e.g. to replace a killed one) with the next free ports. */
	addWorker(): Promise<N8nWorker>;
	/** Which worker ran each execution, from the workers' own event logs: executionId → worker index. */
	executionWorkers(): Map<string, number>;
	/** Executions n8n recorded in PostgreSQL for a workflow, with status and timing. */
	executions(workflowId: string): Array<{ id: string; status: string; finished: boolean }>;
	stop(): Promise<void>;
}

export async function startQueueCluster(options: QueueClusterOptions): Promise<QueueCluster> {
	ensureServices();
	const port = options.port ?? Number(process.env.QUEUE_N8N_PORT ?? 5790);
	const pg = pgUp({ database: 'n8n' });
	let redis: Redis | undefined;
	const workers: N8nWorker[] = [];
	let main: N8nInstance | undefined;
	const stop = async () => {
		await Promise.all([main?.stop(), ...workers.map((w) => w.stop())]);
		redis?.stop();
		pg.stop();
	};
	try {
		redis = redisUp();
		const env: Record<string, string> = {
			EXECUTIONS_MODE: 'queue',
			DB_TYPE: 'postgresdb',
			DB_POSTGRESDB_HOST: pg.host,
			DB_POSTGRESDB_PORT: String(pg.port),
			DB_POSTGRESDB_DATABASE: pg.database,
			DB_POSTGRESDB_USER: pg.user,
			DB_POSTGRESDB_PASSWORD: '',
			QUEUE_BULL_REDIS_HOST: redis.host,
			QUEUE_BULL_REDIS_PORT: String(redis.port),
			// Manual (editor) runs go to the workers too, so the editor tests what production runs.
			OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS: 'true',
			E2E_N8N_PORT: String(port),
			E2E_N8N_CLI_BROKER_PORT: String(port + 2),
			...options.env,
		};
		main = await startN8n({
			tarball: options.tarball,
			workflows: options.workflows,
			credentials: options.credentials,
			port,
			brokerPort: port + 1,
			env,
		});
		const addWorker = async () => {
			const i = workers.length;
			const worker = await startN8nWorker({
				tarball: options.tarball,
				brokerPort: port + 10 + 2 * i,
				healthPort: port + 11 + 2 * i,
				concurrency: options.concurrency,
				env,
			});
			workers.push(worker);
			return worker;
		};
		// One at a time: each install + boot is CPU-bound, and two at once only slow each other.
		for (let i = 0; i < (options.workers ?? 2); i++) await addWorker();
		const pgNow = pg;
		return {
			main,
			workers,
			pg,
			redis,
			env,
			addWorker,
			executionWorkers: () => {
				const byExecution = new Map<string, number>();
				workers.forEach((w, i) => {
					for (const e of w.events()) {
						const id = e.payload?.executionId;
						if (e.eventName === 'n8n.queue.job.dequeued' && id) byExecution.set(String(id), i);
					}
				});
				return byExecution;
			},
			executions: (workflowId: string) =>
				pgNow
					.psql(
						`SELECT id, status, finished FROM execution_entity WHERE "workflowId" = '${workflowId.replace(/'/g, "''")}' ORDER BY id`,
					)
					.split('\n')
					.filter(Boolean)
					.map((line) => {
						const [id, status, finished] = line.split('|');
						return { id, status, finished: finished === 't' };
					}),
			stop,
		};
	} catch (e) {
		await stop();
		throw e;
	}
}
