// Helpers of the fault-injection tests (test/faults): writer processes, waiting, exactly-once checks.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, watch } from 'node:fs';
import * as path from 'node:path';

import * as engine from '../../src/internal';
import { clearDocumentCache, decodeDocument } from '../../src/internal';
import type { MemoryDocument, MemoryStorage } from '../../src/internal';

export interface TurnWriterConfig {
	backend: 'disk' | 's3';
	root?: string;
	endpoint?: string;
	bucket?: string;
	conversationId: string;
	tag: string;
	/** Omitted: one turn after another until killed. */
	turns?: number;
	/** With turns: all of them at once. */
	parallel?: boolean;
	bigBytes?: number;
	pauseMs?: number;
}

/** A turn-writer child process and what it has reported so far. */
export interface Writer {
	child: ChildProcess;
	/** Turns whose flush() resolved. */
	acked: Set<string>;
	/** Turns whose flush() was called and has not settled. */
	inFlight: Set<string>;
	/** When (performance.now()) each turn's `flushing` and `flushed` lines arrived. */
	flushingAt: Map<string, number>;
	flushedAt: Map<string, number>;
	/** `failed` lines. */
	failed: string[];
	ready: Promise<void>;
	exited: Promise<void>;
	done: boolean;
	stderr: () => string;
}

const WORKER = path.resolve(__dirname, 'turn-writer.ts');
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startWriter(config: TurnWriterConfig): Writer {
	const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(config)], {
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let err = '';
	child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
	let onReady: () => void = () => {};
	const w: Writer = {
		child,
		acked: new Set(),
		inFlight: new Set(),
		flushingAt: new Map(),
		flushedAt: new Map(),
		failed: [],
		ready: new Promise<void>((r) => (onReady = r)),
		exited: new Promise<void>((r) => child.once('exit', () => r())),
		done: false,
		stderr: () => err,
	};
	let buf = '';
	child.stdout!.on('data', (d: Buffer) => {
		buf += d.toString();
		const lines = buf.split('\n');
		buf = lines.pop() as string;
		for (const line of lines) {
			const [word, id] = line.split(' ');
			if (word === 'ready') onReady();
			else if (word === 'flushing') {
				w.inFlight.add(id);
				w.flushingAt.set(id, performance.now());
			} else if (word === 'flushed') {
				w.inFlight.delete(id);
				w.acked.add(id);
				w.flushedAt.set(id, performance.now());
			} else if (word === 'failed') {
				w.inFlight.delete(id);
				w.failed.push(line);
			} else if (word === 'done') w.done = true;
		}
	});
	return w;
}

/**
 * Waits until one of the writers has stored a turn whose flush began after `since` (performance.now());
 * returns how long after `since` that was, or Infinity after timeoutMs.
 */
export async function nextTurnStoredAfter(
	writers: Writer[],
	since: number,
	timeoutMs: number,
): Promise<number> {
	const first = () => {
		let at = Infinity;
		for (const w of writers)
			for (const [id, done] of w.flushedAt)
				if ((w.flushingAt.get(id) ?? 0) > since && done < at) at = done;
		return at;
	};
	await waitUntil(() => first() < Infinity, timeoutMs, 'a writer stored a new turn').catch(
		() => undefined,
	);
	return first() - since;
}

/** SIGKILL, and wait until the process is gone. */
export async function killWriter(w: Writer): Promise<void> {
	w.child.kill('SIGKILL');
	await w.exited;
}

export async function waitUntil(
	condition: () => boolean,
	timeoutMs: number,
	what: string,
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!condition()) {
		if (Date.now() > deadline)
			throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}`);
		await sleep(5);
	}
}

type ExportDocument = (storage: MemoryStorage, key: string) => Promise<MemoryDocument | null>;

/**
 * The whole stored conversation as one document, as another process reads it; null when absent. Throws if
 * any of it is torn or fails validation. Where the engine stores long conversations as a head plus sealed
 * segments it has exportDocument (which reads and checks every part); otherwise the key holds the whole
 * document, and its bytes go through decodeDocument.
 */
export async function storedDocument(
	storage: MemoryStorage,
	key: string,
): Promise<MemoryDocument | null> {
	const exportDocument = (engine as unknown as Record<string, unknown>).exportDocument as
		ExportDocument | undefined;
	if (exportDocument) {
		clearDocumentCache(); // read the bytes, not this process's decoded copy
		return exportDocument(storage, key);
	}
	const got = await storage.get(key);
	return got ? decodeDocument(key, got.body) : null;
}

/** How many times each message ID occurs in a document. */
export function idCounts(doc: MemoryDocument): Map<string, number> {
	const counts = new Map<string, number>();
	for (const m of doc.messages) counts.set(m.message_id, (counts.get(m.message_id) ?? 0) + 1);
	return counts;
}

/** Each turn (its assistant message and its `<id>:user` message) is stored exactly once. */
export function assertTurnsOnce(
	doc: MemoryDocument,
	turnIds: Iterable<string>,
	context = '',
): void {
	const counts = idCounts(doc);
	for (const id of turnIds) {
		assert.equal(
			counts.get(id) ?? 0,
			1,
			`turn ${id} stored exactly once ${context} (found ${counts.get(id) ?? 0} times)`,
		);
		assert.equal(
			counts.get(`${id}:user`) ?? 0,
			1,
			`user message of ${id} stored exactly once ${context} (found ${counts.get(`${id}:user`) ?? 0} times)`,
		);
	}
}

/** Turn IDs (assistant messages) of a document. */
export const turnIds = (doc: MemoryDocument) =>
	doc.messages.filter((m) => m.role === 'assistant').map((m) => m.message_id);

export function median(values: number[]): number {
	const s = values.slice().sort((a, b) => a - b);
	if (s.length === 0) return NaN;
	const mid = Math.floor(s.length / 2);
	return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Every file and folder under dir (relative paths, sorted), without following links. */
export function walkTree(dir: string): string[] {
	const out: string[] = [];
	const visit = (rel: string) => {
		for (const name of readdirSync(path.join(dir, rel))) {
			const r = rel ? path.join(rel, name) : name;
			out.push(r);
			if (lstatSync(path.join(dir, r)).isDirectory()) visit(r);
		}
	};
	visit('');
	return out.sort();
}

/**
 * SIGSTOPs `child` the moment a temporary file appears in `dir` while it still exists: the writer is
 * then frozen inside put() (holding the lock, mid-flush). Resolves false after 20 s without a catch.
 */
export function freezeMidWrite(child: ChildProcess, dir: string): Promise<boolean> {
	return new Promise<boolean>((resolve) => {
		const timer = setTimeout(() => (watcher.close(), resolve(false)), 20_000);
		const watcher = watch(dir, (_event, name) => {
			if (!name?.endsWith('.tmp')) return;
			child.kill('SIGSTOP');
			if (existsSync(path.join(dir, name))) {
				clearTimeout(timer);
				watcher.close();
				resolve(true);
			} else child.kill('SIGCONT');
		});
	});
}
