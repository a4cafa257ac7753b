// What a turn's recall did: the section and its entries, or why nothing was recalled, and how the
// output reports it. Kept apart from long-term.ts, so a turn without long-term memory loads no Memory Base.
import type { FusionReport, SearchMatch } from '../knowledge/types';

/** What a turn's recall found and put in front of the model. */
export interface Recalled {
	section: string;
	tokens: number;
	hits: SearchMatch[];
	skipped: number;
	/** Why nothing was recalled, when nothing was. */
	reason?: string;
	error?: string;
	/** What the search's fusion did: the mode, and in hybrid search the weights and why. */
	fusion?: FusionReport;
}

/** Nothing recalled, and why. */
export const notRecalled = (reason: string): Recalled => ({
	section: '',
	tokens: 0,
	hits: [],
	skipped: 0,
	reason,
});

/** A recall that failed: the turn goes on without it, and says why. */
export const failedRecall = (error: Error): Recalled => ({
	...notRecalled('the recall failed'),
	error: error.message,
});

const round = (x: number | undefined) => (x === undefined ? undefined : Math.round(x * 1e4) / 1e4);

/** What a recall did, for the output: the entries with their scores, or why there are none. */
export function recallReport(recalled: Recalled): Record<string, unknown> {
	return {
		recalled: recalled.hits.length,
		recallTokens: recalled.tokens,
		...(recalled.hits.length
			? {
					entries: recalled.hits.map((h) => ({
						text: h.text,
						capturedAt: h.capturedAt,
						role: h.role ?? null,
						score: round(h.score),
						...(h.similarity !== undefined ? { similarity: round(h.similarity) } : {}),
						...(h.lexicalScore !== undefined ? { lexicalScore: round(h.lexicalScore) } : {}),
					})),
				}
			: { notRecalled: recalled.reason ?? 'nothing matched' }),
		...(recalled.skipped ? { skipped: recalled.skipped } : {}),
		...(recalled.fusion ? { search: recalled.fusion } : {}),
		...(recalled.error ? { recallError: recalled.error } : {}),
	};
}
