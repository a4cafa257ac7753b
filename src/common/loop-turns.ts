// Long searches share the event loop: in n8n's one process, every other execution (a webhook, a chat
// reply, a timer) waits while a search of every conversation decodes and scores part after part. When
// parts arrive together (a local disk, a window of reads answered at once), their work runs back to
// back in one turn of the loop (a read already answered is awaited without the loop turning at all);
// shareLoop() lets the loop turn between them once a stretch has held it for SLICE_MS.
import { performance } from 'node:perf_hooks';

/** How long work may hold the event loop before shareLoop() lets it turn. */
export const SLICE_MS = 10;

/** When the loop last reached its timers, as far as we saw. */
let turnedAt = performance.now();
let watching = false;

/**
 * Notes the next time the loop reaches its timers (one watcher at a time). A timer, not an immediate:
 * immediates run back to back in one check phase, so one running says nothing of timers or I/O.
 */
function watch(): void {
	if (watching) return;
	watching = true;
	setTimeout(() => {
		watching = false;
		turnedAt = performance.now();
	}, 0).unref();
}

/**
 * Resolves at once while the loop reached its timers within `slice` ms; past it, after an immediate:
 * the I/O callbacks already due run first, and, from an immediate, the timers of the next turn (a
 * stretch resumed in the same turn yields again at its next call). Nothing is waited for when the loop
 * is otherwise idle.
 */
export async function shareLoop(slice = SLICE_MS): Promise<void> {
	watch();
	if (performance.now() - turnedAt < slice) return;
	await new Promise<void>((resolve) => setImmediate(resolve));
}
