// What a search keeps alive: a storage that hands out each body it reads in memory of its own and
// watches it weakly, and a full garbage collection on demand (the tests' process was not started
// with --expose-gc).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import type { GetOptions, MemoryStorage, NotModified, StoredObject } from '../../src/internal';
import { MeteredStorage } from './wide-base';

setFlagsFromString('--expose-gc');
/** A full garbage collection. */
export const gc = runInNewContext('gc') as () => void;

/**
 * Full collections after the current job (a WeakRef keeps its target until the job that made or read
 * it ends), three times over: work the runtime finishes between jobs (a file handle closed, a
 * promise's reactions run) can hold an object through one round.
 */
export async function collect(): Promise<void> {
	for (let round = 0; round < 3; round++) {
		await new Promise((resolve) => setImmediate(resolve));
		gc();
	}
}

/**
 * What `alive` still names after full collections, collected again a few times, a little apart, while
 * it names anything: under load, work the runtime has yet to finish (a read's last callbacks) can hold
 * an object through several rounds, where something a search kept holds it through all of them.
 */
export async function aliveAfterCollecting<T>(alive: () => T[], rounds = 10): Promise<T[]> {
	for (let round = 0; ; round++) {
		await collect();
		const left = alive();
		if (left.length === 0 || round + 1 >= rounds) return left;
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}

/**
 * Counts requests (MeteredStorage) and watches the bodies of the keys `watch` picks: each is a copy in
 * an ArrayBuffer of its own, so that it lives exactly as long as what the reader keeps of it. With
 * `checkEachRead`, every such read first collects garbage and notes how many earlier bodies are
 * still alive (`mostAlive`).
 */
export class HeldBodies extends MeteredStorage {
	private readonly bodies: Array<{ key: string; ref: WeakRef<ArrayBuffer> }> = [];
	mostAlive = 0;

	constructor(
		inner: MemoryStorage,
		private readonly watch: (key: string) => boolean,
		private readonly checkEachRead = false,
	) {
		super(inner);
	}

	get(key: string): Promise<StoredObject | null>;
	get(key: string, options: GetOptions): Promise<StoredObject | NotModified | null>;
	async get(key: string, options: GetOptions = {}): Promise<StoredObject | NotModified | null> {
		if (!this.watch(key)) return super.get(key, options);
		if (this.checkEachRead) {
			await collect();
			this.mostAlive = Math.max(this.mostAlive, this.alive().length);
		}
		const got = await super.get(key, options);
		if (!got || !('body' in got)) return got;
		const own = new Uint8Array(new ArrayBuffer(got.body.byteLength));
		own.set(got.body);
		this.bodies.push({ key, ref: new WeakRef(own.buffer) });
		return { ...got, body: own };
	}

	/** Watched bodies read so far. */
	get read(): number {
		return this.bodies.length;
	}

	/** The keys of the watched bodies still alive (collect() first). */
	alive(): string[] {
		return this.bodies.filter((b) => b.ref.deref() !== undefined).map((b) => b.key);
	}
}
