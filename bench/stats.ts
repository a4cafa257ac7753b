// Shared by the benchmarks: order statistics, a seeded generator, and the machine line every table is
// quoted with.
import { cpus, loadavg, totalmem } from 'node:os';

/** The value at fraction p of the sorted samples (0.5 = median, as the tables quote it). */
export function percentile(xs: number[], p: number): number {
	return [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];
}

export const median = (xs: number[]) => percentile(xs, 0.5);

/** A seeded generator of numbers in [0, 1): the same queries for every base, layout and run. */
export function lcg(seed: number): () => number {
	let s = seed;
	return () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

/** "Machine: 2 × AMD EPYC, 24 GiB, Node v20…; <extra; >YYYY-MM-DD" */
export function machineLine(extra?: string): string {
	const cpu = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`;
	const date = new Date().toISOString().slice(0, 10);
	return `Machine: ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${extra ? `${extra}; ` : ''}${date}`;
}

/** "load 1.2 0.9 0.7": the 1, 5 and 15-minute load averages, for the machine line of a shared machine. */
export function loadLine(): string {
	return `load ${loadavg()
		.map((l) => l.toFixed(1))
		.join(' ')}`;
}
