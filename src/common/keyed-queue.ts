/** Runs tasks one at a time per key, in call order; tasks on different keys run freely. */
export class KeyedQueue {
	private readonly tails = new Map<string, Promise<void>>();

	run<T>(key: string, task: () => Promise<T>): Promise<T> {
		const prev = this.tails.get(key) ?? Promise.resolve();
		const result = prev.then(task);
		const tail = result.then(
			() => undefined,
			() => undefined,
		);
		this.tails.set(key, tail);
		void tail.then(() => {
			if (this.tails.get(key) === tail) this.tails.delete(key);
		});
		return result;
	}
}
