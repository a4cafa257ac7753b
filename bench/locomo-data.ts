// LoCoMo conversations for recall-locomo.ts: read from the shared data folder (CC BY-NC 4.0, never
// copied into the repository), turns in session order, evidence IDs cleaned as the benchmark's header
// says, and counts of what the cleaning changed so the tables can say it.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** Next to the repository, not in it: the data's licence forbids shipping it with the package. */
export const DEFAULT_LOCOMO_DATA = resolve(
	__dirname,
	'../../shared/data/locomo-dev/locomo-dev.json',
);

export const CATEGORIES: Record<number, string> = {
	1: 'multi-hop',
	2: 'temporal',
	3: 'open-domain',
	4: 'single-hop',
};

export interface Turn {
	diaId: string;
	speaker: string;
	/** Its session's date as LoCoMo writes it ("1:56 pm on 8 May, 2023"). */
	date: string;
	text: string;
}

export interface Question {
	text: string;
	category: number;
	/** The evidence turns' dia_ids, cleaned and deduplicated. */
	evidence: string[];
}

export interface Conversation {
	sampleId: string;
	turns: Turn[];
	questions: Question[];
}

export interface Cleaning {
	/** Evidence IDs written like "D:11:26", rewritten to "D11:26". */
	rewritten: number;
	/** Evidence IDs naming no turn of the conversation (e.g. a bare "D"), dropped. */
	dropped: number;
	/** Questions of categories 1–4 with no evidence left, skipped. */
	skipped: number;
	/** Category 5 (adversarial: no answer in the conversation), not asked. */
	adversarial: number;
}

interface RawTurn {
	speaker: string;
	dia_id: string;
	text: string;
}

interface RawSample {
	sample_id: string;
	conversation: Record<string, unknown>;
	qa: Array<{ question: string; evidence?: string[]; category: number }>;
}

/** Turns ordered by session number, then by position in the session. */
function turnsOf(conversation: Record<string, unknown>): Turn[] {
	const sessions = Object.keys(conversation)
		.map((key) => /^session_(\d+)$/.exec(key))
		.filter((m): m is RegExpExecArray => m !== null)
		.map((m) => Number(m[1]))
		.sort((a, b) => a - b);
	return sessions.flatMap((n) => {
		const date = String(conversation[`session_${n}_date_time`] ?? '');
		return (conversation[`session_${n}`] as RawTurn[]).map((t) => ({
			diaId: t.dia_id,
			speaker: t.speaker,
			date,
			text: t.text,
		}));
	});
}

/** Splits an evidence entry (some hold several IDs) and rewrites "D:11:26" to "D11:26". */
function cleanEvidence(raw: string[], known: Set<string>, counts: Cleaning): string[] {
	const out = new Set<string>();
	for (const entry of raw) {
		for (const part of entry.split(/[;,\s]+/).filter((p) => p !== '')) {
			const id = part.replace(/^D:(\d+):(\d+)$/, 'D$1:$2');
			if (id !== part) counts.rewritten++;
			if (known.has(id)) out.add(id);
			else counts.dropped++;
		}
	}
	return [...out];
}

/** The samples named by `only` (all when empty), with their questions of categories 1–4. */
export function loadLocomo(
	file: string,
	only: string[] = [],
): { conversations: Conversation[]; cleaning: Cleaning } {
	const samples = JSON.parse(readFileSync(file, 'utf8')) as RawSample[];
	const cleaning: Cleaning = { rewritten: 0, dropped: 0, skipped: 0, adversarial: 0 };
	const missing = only.filter((id) => !samples.some((s) => s.sample_id === id));
	if (missing.length > 0) throw new Error(`LOCOMO_CONVERSATIONS: no sample ${missing.join(', ')}`);
	const conversations = samples
		.filter((s) => only.length === 0 || only.includes(s.sample_id))
		.map((s) => {
			const turns = turnsOf(s.conversation);
			const known = new Set(turns.map((t) => t.diaId));
			const questions: Question[] = [];
			for (const qa of s.qa) {
				if (!(qa.category in CATEGORIES)) {
					cleaning.adversarial++;
					continue;
				}
				const evidence = cleanEvidence(qa.evidence ?? [], known, cleaning);
				if (evidence.length === 0) cleaning.skipped++;
				else questions.push({ text: qa.question, category: qa.category, evidence });
			}
			return { sampleId: s.sample_id, turns, questions };
		});
	return { conversations, cleaning };
}

/** What a turn is captured as, and what the baselines rank: speaker, session date and text. */
export const turnText = (t: Turn) => `${t.speaker} (${t.date}): ${t.text}`;
