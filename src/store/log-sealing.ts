// Planning a seal: where to cut the head's oldest messages (at a turn), the write-once segments they
// become, and the indexes that fold full groups of references (a binary-counter cascade).
import { randomBytes } from 'node:crypto';

import { sealedKey } from './log-keys';
import { bloomOf, bloomUnion } from './bloom';
import type { LogOptions, ThreadFacts } from './log-options';
import { LOG_DOCUMENT_VERSION } from './schema';
import type { SealedIndex, SealedRef, SealedSegment, StoredMessage } from './schema';

/** What planning a seal needs to know of the log. */
export interface SealContext {
	headKey: string;
	options: LogOptions;
	facts: ThreadFacts;
}

/**
 * About how many bytes a message takes in the head (JSON): its text and IDs plus a fixed allowance for
 * the rest. An estimate on purpose: it runs over the head's messages on every flush.
 */
export function sizeOf(m: StoredMessage): number {
	let n =
		130 +
		Buffer.byteLength(m.content, 'utf8') +
		m.message_id.length +
		(m.parent_message_id?.length ?? 4) +
		m.created_at.length;
	if (m.files.length > 0) n += JSON.stringify(m.files).length;
	if (m.tool_calls) n += JSON.stringify(m.tool_calls).length;
	if (m.tool_call_id) n += 20 + m.tool_call_id.length + (m.name?.length ?? 0);
	return n;
}

/** Where the oldest messages should be cut: before a user message near `at` when there is one. */
export function alignToTurn(
	messages: readonly StoredMessage[],
	at: number,
	lo: number,
	hi: number,
	shift: number,
): number {
	for (let c = at; c <= Math.min(hi, at + shift); c++) if (messages[c].role === 'user') return c;
	for (let c = at - 1; c >= Math.max(lo, at - shift); c--)
		if (messages[c].role === 'user') return c;
	return at;
}

/** Whether the head's messages have outgrown its limits. */
export function needsSeal(o: LogOptions, messages: readonly StoredMessage[]): boolean {
	if (messages.length > o.tailMessages) return true;
	if (messages.length < o.minMessages + Math.max(1, Math.floor(o.minMessages / 2))) return false;
	let bytes = 0;
	for (const m of messages) bytes += sizeOf(m);
	return bytes > o.tailBytes;
}

/** Where the head's messages are cut when sealing: the newest kept fit the byte limit, cut at a turn. */
export function sealCut(o: LogOptions, messages: readonly StoredMessage[]): number {
	const n = messages.length;
	let keep = Math.min(n - 1, o.keepMessages);
	let keptBytes = 0;
	for (let i = n - keep; i < n; i++) keptBytes += sizeOf(messages[i]);
	while (keep > o.minMessages && keptBytes > (o.tailBytes * 3) / 4)
		keptBytes -= sizeOf(messages[n - keep--]);
	return alignToTurn(messages, n - keep, 1, n - 1, Math.max(1, Math.floor(o.keepMessages / 4)));
}

/**
 * Plans sealing `messages` (which follow `sealedCount` sealed ones) after `refs`: one segment, or for
 * a long backlog segments of about tailMessages − keepMessages messages cut at turns, then the indexes
 * a binary-counter cascade asks for. Returns the new references and the objects to create.
 */
export function planSeal(
	ctx: SealContext,
	refs: readonly SealedRef[],
	sealedCount: number,
	messages: readonly StoredMessage[],
) {
	const o = ctx.options;
	const out = [...refs];
	const objects: { key: string; obj: SealedSegment | SealedIndex }[] = [];
	const size = Math.max(1, o.tailMessages - o.keepMessages);
	let total = sealedCount;
	for (let i = 0; i < messages.length;) {
		let j = messages.length;
		// One segment per seal; only a long backlog (a version-1 document converting) is split.
		if (j - i > 2 * size)
			j = alignToTurn(
				messages,
				i + size,
				i + 1,
				messages.length - 1,
				Math.max(1, Math.floor(size / 4)),
			);
		const chunk = messages.slice(i, j);
		const key = sealedKey(ctx.headKey, 0, total, randomBytes(8).toString('hex'));
		objects.push({
			key,
			obj: {
				version: LOG_DOCUMENT_VERSION,
				kind: 'segment',
				head: ctx.headKey,
				first: total,
				messages: chunk,
			},
		});
		out.push({
			key,
			level: 0,
			count: chunk.length,
			first_id: chunk[0].message_id,
			last_id: chunk[chunk.length - 1].message_id,
			first_parent: chunk[0].parent_message_id,
			...ctx.facts.summarize(chunk),
			bloom: bloomOf(chunk.map((m) => m.message_id)),
		});
		total += chunk.length;
		i = j;
		cascade(ctx, out, total, objects);
	}
	return { refs: out, objects, sealedCount: total };
}

/** While the newest fanOut references share a level, replaces them with one index a level up. */
function cascade(
	ctx: SealContext,
	refs: SealedRef[],
	total: number,
	objects: { key: string; obj: SealedSegment | SealedIndex }[],
): void {
	const f = ctx.options.fanOut;
	while (refs.length >= f) {
		const group = refs.slice(-f);
		const level = group[0].level;
		if (!group.every((r) => r.level === level)) return;
		const count = group.reduce((s, r) => s + r.count, 0);
		const start = total - count;
		const key = sealedKey(ctx.headKey, level + 1, start, randomBytes(8).toString('hex'));
		const linear = group.every(
			(r, i) => r.linear && (i === 0 || ctx.facts.follows(group[i - 1].last_id, r.first_parent)),
		);
		objects.push({
			key,
			obj: {
				version: LOG_DOCUMENT_VERSION,
				kind: 'index',
				head: ctx.headKey,
				first: start,
				level: level + 1,
				refs: group,
			},
		});
		const bloom = bloomUnion(group.map((r) => r.bloom));
		refs.splice(refs.length - f, f, {
			key,
			level: level + 1,
			count,
			first_id: group[0].first_id,
			last_id: group[f - 1].last_id,
			first_parent: group[0].first_parent,
			linear,
			turns: linear ? group.reduce((s, r) => s + r.turns, 0) : 0,
			...(bloom === undefined ? {} : { bloom }),
		});
	}
}
